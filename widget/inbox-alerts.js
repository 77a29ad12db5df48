// What tells an agent that something arrived while they look elsewhere: the unread count in
// the tab's title, always; and, when they turn Alerts on, a short tone and a system
// notification. The browser is asked for notification permission only when the agent turns
// Alerts on (a click), never on load. The tone is synthesised (Web Audio), so the console
// needs no media file and no media-src in its Content-Security-Policy.

var PREFERENCE_KEY = 'inbox:alerts';
// Several messages at once make one tone.
var QUIET_MS = 1500;

function preference(value) {
  try {
    if (value === null) localStorage.removeItem(PREFERENCE_KEY);
    else if (value !== undefined) localStorage.setItem(PREFERENCE_KEY, value);
    return localStorage.getItem(PREFERENCE_KEY);
  } catch (error) {
    return value || null;
  }
}

/** toggle: the Alerts checkbox; note(text): says what the browser allows; open(contactId): a notification was clicked. */
export function createAlerts(options) {
  var toggle = options.toggle;
  var baseTitle = document.title;
  var audio = null;
  var lastTone = 0;

  toggle.checked = preference() === 'on';
  toggle.addEventListener('change', function () {
    preference(toggle.checked ? 'on' : null);
    if (!toggle.checked) return options.note('');
    // Made inside the click: browsers let a page play sound once the person has interacted.
    wakeAudio();
    if (!('Notification' in window)) return options.note('Alerts: sound only (this browser shows no notifications).');
    if (Notification.permission === 'default') Notification.requestPermission().then(describe, function () { describe('denied'); });
    else describe(Notification.permission);
  });
  // A console reopened with Alerts on may play its tone after the agent's first click or key.
  ['pointerdown', 'keydown'].forEach(function (type) {
    document.addEventListener(type, function () { if (toggle.checked) wakeAudio(); }, { capture: true });
  });

  function describe(permission) {
    options.note(permission === 'granted' ? '' : 'Alerts: sound only (notifications are blocked for this site in the browser).');
  }

  function wakeAudio() {
    var Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return null;
    if (!audio) audio = new Context();
    if (audio.state === 'suspended') audio.resume().catch(function () {});
    return audio;
  }

  function tone() {
    var now = Date.now();
    if (now - lastTone < QUIET_MS) return;
    lastTone = now;
    var context = wakeAudio();
    if (!context) return;
    var start = context.currentTime;
    var oscillator = context.createOscillator();
    var gain = context.createGain();
    oscillator.type = 'sine';
    oscillator.frequency.setValueAtTime(880, start);
    oscillator.frequency.setValueAtTime(1320, start + 0.12);
    gain.gain.setValueAtTime(0.0001, start);
    gain.gain.exponentialRampToValueAtTime(0.15, start + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.3);
    oscillator.connect(gain);
    gain.connect(context.destination);
    oscillator.start(start);
    oscillator.stop(start + 0.32);
  }

  return {
    /** Something arrived for `contactId`: a tone and a notification, when Alerts are on. */
    alert: function (title, body, contactId) {
      if (!toggle.checked) return;
      tone();
      if (!('Notification' in window) || Notification.permission !== 'granted') return;
      try {
        var notification = new Notification(title, { body: body, tag: 'inbox:' + contactId });
        notification.onclick = function () {
          window.focus();
          options.open(contactId);
          notification.close();
        };
      } catch (error) {
        // Some browsers show notifications only from a service worker: the tone stays.
      }
    },
    /** The tab's title counts what is unread: "(3) Inbox". */
    unread: function (count) {
      document.title = count > 0 ? '(' + count + ') ' + baseTitle : baseTitle;
    },
  };
}
