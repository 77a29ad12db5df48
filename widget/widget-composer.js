// The composer and the frame: Enter sends (Shift+Enter makes a new line), the box grows with
// what is typed, the account sees the visitor typing; framed, the close button and Escape ask
// the embed script to close the panel.
import { loadConfig } from './widget-config.js';
import { failureText, showNotice } from './widget-notices.js';
import { flush, send } from './widget-outbox.js';
import { elements, inFrame, socketConnected, state } from './widget-state.js';

// The account sees the visitor typing: said at most every TYPING_REPORT_MS while they type,
// and once when they pause or send (the server keeps the same pace whatever a page sends).
var TYPING_REPORT_MS = 2500;
var TYPING_PAUSE_MS = 3000;
var typingReportedAt = 0;
var typingPause = null;

function resizeComposer() {
  elements.text.style.height = 'auto';
  elements.text.style.height = Math.min(elements.text.scrollHeight + 2, 120) + 'px';
}

function reportTyping(typing) {
  // Before their first message a visitor is nobody the account can see: nothing to tell.
  if (!state.started || !socketConnected()) return;
  if (typing) {
    clearTimeout(typingPause);
    typingPause = setTimeout(function () { reportTyping(false); }, TYPING_PAUSE_MS);
    if (Date.now() - typingReportedAt < TYPING_REPORT_MS) return;
    typingReportedAt = Date.now();
  } else {
    clearTimeout(typingPause);
    typingPause = null;
    if (!typingReportedAt) return;
    typingReportedAt = 0;
  }
  state.socket.emit('typing', { typing: typing });
}

export function listenToComposer() {
  elements.composer.addEventListener('submit', function (event) {
    event.preventDefault();
    var text = elements.text.value.trim();
    if (!text || !state.visitorId) return;
    elements.text.value = '';
    resizeComposer();
    elements.text.focus();
    // Queued even when the configuration (the owner, whom it is sent to) has not loaded yet:
    // it goes once it has.
    send(text);
    if (!state.userId) loadConfig().then(flush, function (error) { showNotice(failureText(error)); });
  });

  // Enter sends; Shift+Enter (or an input method composing text) makes a new line.
  elements.text.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      elements.composer.requestSubmit();
    }
  });

  elements.text.addEventListener('input', resizeComposer);
  elements.text.addEventListener('input', function () {
    reportTyping(!!elements.text.value.trim());
  });
  elements.composer.addEventListener('submit', function () { reportTyping(false); });
}

export function listenToFrame() {
  if (inFrame) {
    elements.close.hidden = false;
    elements.close.addEventListener('click', function () {
      window.parent.postMessage({ type: 'chat-widget:close' }, '*');
    });
  }
  window.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && inFrame) window.parent.postMessage({ type: 'chat-widget:close' }, '*');
  });
}
