// The new-reply sound, played by one tab of the visitor's.
import { state, visitorKey } from './widget-state.js';

// A short beep as WAV (8 kHz, 8-bit): no file to fetch, nothing to cache.
var beep = null;
export function playSound() {
  if (!beep) {
    var rate = 8000;
    var n = 960;
    var bytes = new Uint8Array(44 + n);
    var view = new DataView(bytes.buffer);
    var text = function (at, value) {
      for (var i = 0; i < value.length; i++) bytes[at + i] = value.charCodeAt(i);
    };
    text(0, 'RIFF');
    view.setUint32(4, 36 + n, true);
    text(8, 'WAVEfmt ');
    view.setUint32(16, 16, true);
    view.setUint16(20, 1, true);
    view.setUint16(22, 1, true);
    view.setUint32(24, rate, true);
    view.setUint32(28, rate, true);
    view.setUint16(32, 1, true);
    view.setUint16(34, 8, true);
    text(36, 'data');
    view.setUint32(40, n, true);
    for (var i = 0; i < n; i++) bytes[44 + i] = 128 + Math.round(40 * Math.sin((2 * Math.PI * 880 * i) / rate) * (1 - i / n));
    beep = 'data:audio/wav;base64,' + btoa(String.fromCharCode.apply(null, bytes));
  }
  var played = new Audio(beep).play();
  // Refused without a user gesture on the page (autoplay policy): then silence.
  if (played && played.catch) played.catch(function () {});
}

/**
 * One tab of the visitor's plays the sound: whichever holds the lock (the next one takes over
 * when it closes). Framed, the embed script holds it in the site's origin and says so.
 */
export function electSoundTab() {
  var ringAnyway = function () { state.soundTab = true; }; // no locks here: every tab rings
  try {
    navigator.locks.request(visitorKey('sound'), function () {
      state.soundTab = true;
      return new Promise(function () {});
    }).catch(ringAnyway);
  } catch (error) {
    ringAnyway();
  }
}
