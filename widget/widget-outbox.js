// The outbox: every message the visitor writes goes through it, kept in storage until the
// server has it, sent in order, again on reconnect; a reloaded page sends what the storage
// still holds. Its client-made messageSid makes a resend harmless (after a lost answer, or by
// two tabs): the server stores a messageSid once. The server having the visitor's first
// message is what starts their conversation (setStarted).
import { api, query } from './widget-api.js';
import { addMessage, known, removeMessage, updateMessage } from './widget-conversation.js';
import { showHandoff } from './widget-handoff.js';
import { randomId } from './widget-identity.js';
import { setConnection, showNotice } from './widget-notices.js';
import { configId, elements, embedded, socketConnected, state, stored, visitorKey } from './widget-state.js';
import { refetch, startPolling } from './widget-sync.js';

var flushing = false;
var flushAgain = false;
var retryTimer = null;

// Framed, the page's own storage may be blocked or partitioned away: the embed script keeps
// the queue in the site's storage instead. Opened on its own, the page keeps it itself.
var outboxItems = [];
function queue() {
  return outboxItems.slice();
}
function enqueue(item) {
  outboxItems.push(item);
  keepOutbox({ add: item });
}
function unqueue(messageSid) {
  outboxItems = outboxItems.filter(function (item) { return item.messageSid !== messageSid; });
  keepOutbox({ remove: messageSid });
}
function keepOutbox(change) {
  if (embedded) window.parent.postMessage(Object.assign({ type: 'chat-widget:outbox' }, change), state.parentOrigin);
  else stored(visitorKey('outbox'), outboxItems.length ? JSON.stringify(outboxItems) : null);
}
export function storedOutbox() {
  try {
    var list = JSON.parse(stored(visitorKey('outbox')) || '[]');
    return Array.isArray(list) ? list : [];
  } catch (error) {
    return [];
  }
}
function validItem(item) {
  return item && typeof item.messageSid === 'string' && typeof item.body === 'string' && typeof item.timestamp === 'string';
}

/** Messages queued before a reload or while offline show as sending until they go. */
export function restoreOutbox(queued) {
  outboxItems = queued.filter(validItem);
  outboxItems.forEach(function (item) { addMessage(pendingMessage(item)); });
}

function pendingMessage(item) {
  return { messageSid: item.messageSid, body: item.body, timestamp: item.timestamp, type: 'text', direction: 'inbound', status: 'sending', pending: true };
}

export function send(text) {
  var item = { messageSid: 'wm_' + randomId(16), body: text, timestamp: new Date().toISOString() };
  enqueue(item);
  addMessage(pendingMessage(item));
  showNotice('');
  flush();
}

export function flush() {
  if (!state.visitorId || !state.userId) return;
  if (flushing) {
    flushAgain = true;
    return;
  }
  flushing = true;
  clearTimeout(retryTimer);
  sendQueued()
    .catch(function (error) {
      if (window.console) console.error(error);
    })
    .then(function () {
      flushing = false;
      if (flushAgain) {
        flushAgain = false;
        flush();
      }
    });
}

/** Sends the queue's messages in order until it is empty or the network fails (then again later). */
function sendQueued() {
  var item = queue()[0];
  if (!item) return Promise.resolve();
  return sendOne(item).then(function (retryAfterMs) {
    if (retryAfterMs === undefined) return sendQueued();
    setConnection(navigator.onLine === false ? 'Offline' : '');
    retryTimer = setTimeout(flush, retryAfterMs);
  });
}

/** Resolves undefined when the message is done with (sent, or refused for good), else ms to wait. */
function sendOne(item) {
  var messageSid = item.messageSid;
  return api('/incoming-chat-widget-message?' + query({ userId: state.userId }), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messageType: 'text',
      customData: Object.assign({ body: item.body, fromId: state.visitorId, toId: configId, messageSid: messageSid }, state.pageDetails),
    }),
  }).then(
    function (response) {
      if (response.status === 429) {
        // Given back to the visitor to send again; what is queued after it waits.
        unqueue(messageSid);
        removeMessage(messageSid);
        if (!elements.text.value) elements.text.value = item.body;
        var wait = Number(response.headers.get('retry-after'));
        showNotice(
          'You are sending messages a little too quickly. Please wait ' +
            (wait > 0 ? wait + (wait === 1 ? ' second' : ' seconds') : 'a moment') +
            ' and try again.',
        );
        return (wait > 0 ? wait : 5) * 1000;
      }
      if (response.status >= 500) return 5000;
      if (response.status === 401) {
        // The site's token is missing or expired: kept until identify() gives a new one.
        showNotice('Please sign in on this site to chat.');
        return 60000;
      }
      if (!response.ok) {
        unqueue(messageSid);
        markFailed(messageSid);
        return undefined;
      }
      // The server has it, so the visitor has a conversation: said before the message leaves
      // the queue, so a page left in between still finds one or the other on its next load.
      var first = setStarted();
      unqueue(messageSid);
      return response.json().catch(function () { return null; }).then(function () {
        // Later copies of the message (socket, polls) carry the messageSid sent with it.
        var entry = known.get(messageSid);
        if (entry) addMessage(Object.assign({}, entry.message, { pending: false, status: entry.message.status === 'sending' ? 'sent' : entry.message.status }));
        // The first message's answer may have been sent before the socket joined its room,
        // and a socket that connected before then read nothing back: read it once now.
        if (first || !socketConnected()) refetch();
        return undefined;
      });
    },
    function () {
      // Offline: it stays queued, shown as sending, and goes when the network is back.
      return 5000;
    },
  );
}

function markFailed(messageSid) {
  var entry = known.get(messageSid);
  if (entry) {
    entry.message.pending = false;
    entry.message.status = 'failed';
    updateMessage(entry.element, entry.message);
  }
  showNotice('Your message could not be sent. Please try again.');
}

/** Returns whether the conversation has just started (until then nothing was read back). */
export function setStarted() {
  if (state.started) return false;
  state.started = true;
  rememberConversation();
  if (!socketConnected()) startPolling();
  showHandoff();
  return true;
}

var remembered = false;
/**
 * The server holds a conversation of this visitor's (a reply came over the socket, say,
 * before the answer to their first message): kept for the next page load, where the embed
 * script makes the page at once. The page itself starts on the answer (setStarted).
 */
export function rememberConversation() {
  if (remembered) return;
  remembered = true;
  stored(visitorKey('started'), '1');
  if (embedded) window.parent.postMessage({ type: 'chat-widget:started' }, state.parentOrigin);
}
