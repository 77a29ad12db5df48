// Staying current: messages, the typing line and read receipts arrive over Socket.IO. Whenever
// the socket (re)connects or the browser comes back online, the page reads everything after
// the newest message it has, so nothing sent while it was away is lost, and sends what waits
// in the outbox; while the socket is down it polls (widget-sync.js).
import { addMessage, setStatus, setTyping } from './widget-conversation.js';
import { setConnection } from './widget-notices.js';
import { flush, rememberConversation } from './widget-outbox.js';
import { configId, state } from './widget-state.js';
import { markReadIfVisible, readNewestNext, refetch, startPolling, stopPolling } from './widget-sync.js';

function socketAuth() {
  var auth = { configId: configId, visitorId: state.visitorId };
  if (state.identityToken) auth.identityToken = state.identityToken;
  return auth;
}

export function connectSocket() {
  // No Socket.IO client (blocked, or the server has none): polling alone keeps the page current.
  if (typeof window.io !== 'function') {
    startPolling();
    return;
  }
  // WebSocket first: a long-polling handshake behind several API processes needs a sticky
  // balancer, a WebSocket does not; polling stays as the fallback.
  var socket = window.io({ path: '/socket.io', transports: ['websocket', 'polling'], auth: socketAuth() });
  state.socket = socket;
  socket.on('connect', function () {
    stopPolling();
    setConnection('');
    // What was missed while away: the poll is the source of truth, the socket only a nudge.
    refetch();
    flush();
  });
  socket.on('disconnect', function () {
    startPolling();
  });
  socket.on('connect_error', function () {
    startPolling();
  });
  socket.on('message', function (event) {
    // Only this visitor's conversation is sent here, so they have one (the answer to their
    // first message may come after its reply does).
    rememberConversation();
    addMessage(event && event.message ? event.message : event);
    markReadIfVisible();
  });
  socket.on('typing', function (event) {
    setTyping(!!(event && event.isBotTyping));
  });
  socket.on('read', function (event) {
    ((event && event.messageSids) || []).forEach(function (sid) { setStatus(sid, 'read'); });
  });
}

/** The site's identity token, given again (signed in, out, or renewed). */
export function setIdentity(token) {
  token = typeof token === 'string' && token ? token : null;
  if (token === state.identityToken) return;
  state.identityToken = token;
  // A signed-in visitor's conversation may be another device's: read its newest messages.
  readNewestNext();
  if (state.socket) {
    state.socket.auth = socketAuth();
    state.socket.disconnect().connect();
  }
  refetch();
  flush();
}

export function watchNetwork() {
  window.addEventListener('offline', function () {
    setConnection('Offline');
    // The socket would only notice after its ping time-out; reconnect cleanly when back.
    if (state.socket) state.socket.disconnect();
    startPolling();
  });
  window.addEventListener('online', function () {
    setConnection('Reconnecting…');
    if (state.socket) state.socket.connect();
    refetch();
    flush();
  });
  document.addEventListener('visibilitychange', markReadIfVisible);
}
