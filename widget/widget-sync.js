// Keeping the conversation in step with the server. It reads the newest messages first (with
// "Load earlier messages" when there are more), then everything after the newest one held;
// the poll is the source of truth, the socket only a nudge, so it polls while the socket is
// down. Replies are marked read once the visitor can see them.
import { api, query } from './widget-api.js';
import { addMessages, isMine, known, newestShownMs, oldestShownMs, setStatus, setTyping, timeOf } from './widget-conversation.js';
import { announce, failureText, setConnection, showNotice } from './widget-notices.js';
import { configId, elements, mayHaveConversation, socketConnected, state } from './widget-state.js';

var POLL_MS = 4000;
// Refetch a little before the newest timestamp seen: a message committed late with an
// earlier timestamp is still picked up, and messageSid de-duplicates the overlap.
var REFETCH_OVERLAP_MS = 5000;
// The most messages /chat-widget-messages answers at once.
var PAGE_SIZE = 200;
// The first read asks for the newest messages before this far ahead of the browser's clock;
// a clock further behind the server's is caught up by the next read (after the newest).
var NEWEST_MARGIN_MS = 24 * 60 * 60 * 1000;

var pollTimer = null;
var fetching = false;
var fetchAgain = false;
var markingRead = false;
// Whether the newest messages have been read once (the first read asks for them, not the oldest).
var newestRead = false;
// Whether the server holds messages older than the oldest shown.
var earlierExist = false;
var loadingEarlier = false;

/**
 * Reads the conversation: the newest messages the first time (with "Load earlier messages"
 * when there are more), then everything after the newest message held; concurrent calls
 * coalesce.
 */
export function refetch(exactAfterMs) {
  if (!mayHaveConversation()) return Promise.resolve();
  if (fetching) {
    fetchAgain = true;
    return Promise.resolve();
  }
  fetching = true;
  var nextPageAfter = null;
  var newest = !newestRead && exactAfterMs === undefined;
  var newestMs = newestShownMs();
  var after = exactAfterMs !== undefined ? String(exactAfterMs) : newestMs ? String(Math.max(0, newestMs - REFETCH_OVERLAP_MS)) : undefined;
  var range = newest ? { before: String(Date.now() + NEWEST_MARGIN_MS) } : { after: after };
  return api('/chat-widget-messages?' + query(Object.assign({ fromId: state.visitorId, toId: configId }, range)))
    .then(function (response) {
      // 404: no message from this visitor yet, so no conversation.
      if (response.status === 404) return { messages: [], isBotTyping: false, none: true };
      if (!response.ok) throw new Error('messages: ' + response.status);
      return response.json();
    })
    .then(function (body) {
      var messages = body.messages || [];
      addMessages(messages);
      if (newest && !body.none) {
        newestRead = true;
        earlierExist = messages.length >= PAGE_SIZE;
        showEarlier();
      } else if (!newest && messages.length >= PAGE_SIZE) {
        // A full page (oldest first): the rest comes after its last message.
        nextPageAfter = timeOf(messages[messages.length - 1]);
      }
      setTyping(!!body.isBotTyping);
      markReadIfVisible();
      if (!socketConnected()) setConnection(navigator.onLine === false ? 'Offline' : '');
    })
    .catch(function () {
      setConnection('Offline');
    })
    .then(function () {
      fetching = false;
      if (nextPageAfter !== null) return refetch(nextPageAfter);
      state.caughtUp = true;
      if (fetchAgain) {
        fetchAgain = false;
        return refetch();
      }
    });
}

/** Marks the replies read once the visitor can see them. */
export function markReadIfVisible() {
  if (!state.panelOpen || document.visibilityState !== 'visible' || markingRead || !state.visitorId) return;
  var unread = [];
  known.forEach(function (entry, sid) {
    if (!isMine(entry.message) && entry.message.status !== 'read') unread.push(sid);
  });
  if (!unread.length) return;
  markingRead = true;
  api('/update-message-read-status', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ fromId: state.visitorId, toId: configId }),
  })
    .then(function (response) {
      if (response.ok) unread.forEach(function (sid) { setStatus(sid, 'read'); });
    })
    .catch(function () {})
    .then(function () { markingRead = false; });
}

export function startPolling() {
  if (!pollTimer && mayHaveConversation()) pollTimer = setInterval(refetch, POLL_MS);
}

export function stopPolling() {
  if (pollTimer) clearInterval(pollTimer);
  pollTimer = null;
}

function showEarlier() {
  if (!earlierExist && document.activeElement === elements.earlier) elements.conversation.focus({ preventScroll: true });
  elements.earlierRow.hidden = !earlierExist;
}

/** The "Load earlier messages" action: the page before the oldest shown, keeping what the visitor reads in place. */
function loadEarlier() {
  var oldest = oldestShownMs();
  if (loadingEarlier || !earlierExist || oldest === null) return;
  loadingEarlier = true;
  elements.earlier.setAttribute('aria-disabled', 'true');
  elements.earlier.textContent = 'Loading earlier messages…';
  // Before the oldest one's next millisecond: others sent in the same millisecond come too (known ones are skipped).
  api('/chat-widget-messages?' + query({ fromId: state.visitorId, toId: configId, before: String(oldest + 1) }))
    .then(function (response) {
      if (!response.ok) throw new Error('Earlier messages could not be loaded. Please try again.');
      return response.json();
    })
    .then(function (body) {
      var messages = body.messages || [];
      var box = elements.conversation;
      var fromBottom = box.scrollHeight - box.scrollTop;
      var had = known.size;
      state.stickToNewest = false;
      addMessages(messages, 'earlier');
      var added = known.size - had;
      earlierExist = messages.length >= PAGE_SIZE && added > 0;
      showEarlier();
      // What the visitor was reading stays where it was, above it the earlier messages.
      box.scrollTop = box.scrollHeight - fromBottom;
      announce(added === 1 ? '1 earlier message loaded.' : added + ' earlier messages loaded.');
      markReadIfVisible();
    })
    .catch(function (error) {
      showNotice(failureText(error));
    })
    .then(function () {
      loadingEarlier = false;
      elements.earlier.removeAttribute('aria-disabled');
      elements.earlier.textContent = 'Load earlier messages';
      showEarlier();
    });
}

/** A signed-in visitor's conversation may be another device's: the next read asks for its newest messages. */
export function readNewestNext() {
  newestRead = false;
}

export function offerEarlier() {
  elements.earlier.addEventListener('click', loadEarlier);
}
