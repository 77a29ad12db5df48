// The conversation as the page shows it: each message once (by messageSid), in time order,
// under a heading for its day, with its delivery state; the visitor's unread count, the
// "Delivered" note and the typing line follow from it. What the server or the visitor wrote is
// inserted as text, never as HTML.
import { elements, embedded, state } from './widget-state.js';
import { keepAtNewest } from './widget-scroll.js';
import { playSound } from './widget-sound.js';

/** messageSid -> { message, element } */
export var known = new Map();
var newestMs = 0;
var reportedUnread = -1;
var typingShown = false;

export function timeOf(message) {
  var ms = Date.parse(message.timestamp);
  return isNaN(ms) ? Date.now() : ms;
}

export function isMine(message) {
  return message.direction === 'inbound';
}

function statusText(message) {
  if (message.pending) return 'Sending…';
  if (message.status === 'failed') return 'Not sent';
  if (message.status === 'read') return 'Read';
  return 'Sent';
}

function safeUrl(value) {
  try {
    var url = new URL(value, location.href);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch (error) {
    return null;
  }
}

function buildMessage(message) {
  var item = document.createElement('li');
  item.className = 'message' + (isMine(message) ? ' mine' : ' theirs');
  var sender = document.createElement('span');
  sender.className = 'sender';
  item.appendChild(sender);
  var who = document.createElement('span');
  who.className = 'visually-hidden who';
  item.appendChild(who);
  var bubble = document.createElement('div');
  bubble.className = 'bubble';
  var media = message.mediaUrl ? safeUrl(message.mediaUrl) : null;
  if (media && (message.type === 'image' || /^image\//.test(message.mediaContentType || ''))) {
    var image = document.createElement('img');
    image.src = media;
    image.alt = message.body || 'Image';
    bubble.appendChild(image);
  } else if (media) {
    var link = document.createElement('a');
    link.href = media;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    link.textContent = 'Attachment';
    bubble.appendChild(link);
  }
  if (message.body) bubble.appendChild(document.createTextNode(message.body));
  item.appendChild(bubble);
  var meta = document.createElement('span');
  meta.className = 'meta';
  item.appendChild(meta);
  updateMessage(item, message);
  return item;
}

export function updateMessage(item, message) {
  item.dataset.time = String(timeOf(message));
  item.classList.toggle('pending', !!message.pending);
  item.classList.toggle('failed', message.status === 'failed');
  // A person's reply shows the name they answer under (sender_name) above the bubble.
  var name = !isMine(message) && typeof message.sender_name === 'string' ? message.sender_name.trim() : '';
  var sender = item.querySelector('.sender');
  sender.textContent = name;
  sender.hidden = !name;
  item.querySelector('.who').textContent = isMine(message) ? 'You: ' : name ? ': ' : 'Reply: ';
  var time = new Date(timeOf(message)).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  item.querySelector('.meta').textContent = isMine(message) ? time + ' · ' + statusText(message) : time;
}

/** Puts a message where its time belongs (after any with the same time); day headings are placed after. */
function place(element, at) {
  var before = null;
  for (var node = elements.messages.lastElementChild; node; node = node.previousElementSibling) {
    if (node === element || !node.classList.contains('message')) continue;
    if (Number(node.dataset.time) <= at) break;
    before = node;
  }
  if (element.parentNode !== elements.messages || element.nextElementSibling !== before) elements.messages.insertBefore(element, before);
}

function dayKey(ms) {
  var day = new Date(ms);
  return day.getFullYear() + '-' + (day.getMonth() + 1) + '-' + day.getDate();
}

/** "Today", "Yesterday", or the date in the visitor's language (with the year when not this one). */
function dayLabel(ms) {
  var day = new Date(ms);
  day.setHours(0, 0, 0, 0);
  var today = new Date();
  today.setHours(0, 0, 0, 0);
  var daysAgo = Math.round((today.getTime() - day.getTime()) / 86400000);
  if (daysAgo === 0) return 'Today';
  if (daysAgo === 1) return 'Yesterday';
  var options = { weekday: 'long', day: 'numeric', month: 'long' };
  if (day.getFullYear() !== today.getFullYear()) options.year = 'numeric';
  return day.toLocaleDateString([], options);
}

/**
 * A heading before the first message of each day. Only what differs is changed: the list is
 * in a live region, and a heading removed and added again would be announced again.
 */
function syncDays() {
  var previousDay = null;
  var spare = [];
  for (var node = elements.messages.firstElementChild; node; node = next) {
    var next = node.nextElementSibling;
    if (!node.classList.contains('message')) {
      spare.push(node);
      continue;
    }
    var at = Number(node.dataset.time);
    var day = dayKey(at);
    var heading = null;
    if (day !== previousDay) {
      heading = spare.filter(function (candidate) { return candidate.dataset.day === day; })[0] || null;
      if (!heading) {
        heading = document.createElement('li');
        heading.className = 'day';
        heading.dataset.day = day;
        heading.appendChild(document.createElement('h2'));
        elements.messages.insertBefore(heading, node);
      }
      var label = dayLabel(at);
      if (heading.firstChild.textContent !== label) heading.firstChild.textContent = label;
    }
    spare.forEach(function (unused) { if (unused !== heading) unused.remove(); });
    spare = [];
    previousDay = day;
  }
  spare.forEach(function (unused) { unused.remove(); });
}

/**
 * Adds a message, or updates the one with the same messageSid; keeps the list in time order.
 * `source`: 'tab' when another tab forwarded it, 'earlier' when the visitor asked for older
 * ones (neither is passed on to the other tabs, and an earlier reply plays no sound), 'batch'
 * when the caller places the day headings once for many.
 */
export function addMessage(message, source) {
  if (!message || typeof message.messageSid !== 'string') return;
  var existing = known.get(message.messageSid) || adoptPending(message);
  var changed = !existing || (existing.message.pending && !message.pending);
  if (existing) {
    var pending = !!(existing.message.pending && message.pending);
    existing.message = Object.assign({}, existing.message, message, { pending: pending });
    updateMessage(existing.element, existing.message);
    place(existing.element, timeOf(existing.message));
  } else {
    var element = buildMessage(message);
    elements.messages.appendChild(element);
    place(element, timeOf(message));
    known.set(message.messageSid, { message: message, element: element });
    if (isMine(message)) state.stickToNewest = true;
    if (!isMine(message) && state.caughtUp && state.soundTab && source !== 'earlier') playSound();
  }
  if (!message.pending) newestMs = Math.max(newestMs, timeOf(message));
  elements.greeting.hidden = known.size > 0 || !elements.greeting.textContent;
  // The other tabs of this visitor show it too (they de-duplicate by messageSid as well).
  if (state.channel && (!source || source === 'batch') && changed) state.channel.postMessage({ type: 'message', message: known.get(message.messageSid).message });
  if (source !== 'batch' && source !== 'earlier') settle();
}

export function addMessages(messages, source) {
  messages.forEach(function (message) { addMessage(message, source || 'batch'); });
  settle();
}

/** After messages changed: the day headings, the unread count, the delivered note, the scroll. */
function settle() {
  syncDays();
  reportUnread();
  showDelivered();
  keepAtNewest();
}

/** The time of the newest message the server has given (0 before any). */
export function newestShownMs() {
  return newestMs;
}

/** The time of the oldest message the server has given, or null. */
export function oldestShownMs() {
  var oldest = null;
  known.forEach(function (entry) {
    if (!entry.message.pending && (oldest === null || timeOf(entry.message) < oldest)) oldest = timeOf(entry.message);
  });
  return oldest;
}

/**
 * Under the visitor's latest message, once the server has it and nothing has answered it yet:
 * a later message may get no reply from the bot (it already greeted), and the page must not
 * look as if nobody were there. Any reply, or the typing indicator, takes its place.
 */
function showDelivered() {
  var last = elements.messages.lastElementChild;
  var message = null;
  known.forEach(function (entry) {
    if (entry.element === last) message = entry.message;
  });
  var show = !!message && isMine(message) && !message.pending && message.status !== 'failed' && !typingShown;
  if (elements.delivered.hidden === !show) return;
  elements.delivered.hidden = !show;
  // Filled when shown, so that the live region announces it once.
  elements.delivered.textContent = show ? 'Delivered \u2014 we\u2019ll reply here.' : '';
}

/**
 * A visitor message the server stored under an id of its own: the pending bubble with the
 * same text becomes it, rather than showing twice.
 */
function adoptPending(message) {
  if (!isMine(message)) return null;
  var found = null;
  known.forEach(function (entry, sid) {
    if (!found && entry.message.pending && entry.message.body === message.body) found = sid;
  });
  return found ? rekey(found, message.messageSid) : null;
}

function rekey(oldSid, newSid) {
  var entry = known.get(oldSid);
  if (!entry || oldSid === newSid || known.has(newSid)) return known.get(newSid) || null;
  known.delete(oldSid);
  known.set(newSid, entry);
  entry.message.messageSid = newSid;
  return entry;
}

export function setStatus(messageSid, status) {
  var entry = known.get(messageSid);
  if (!entry) return;
  entry.message.status = status;
  updateMessage(entry.element, entry.message);
  reportUnread();
  showDelivered();
}

/** Tells the embed script how many replies the visitor has not seen (window.chatWidget.onUnreadCountChange). */
function reportUnread() {
  var count = 0;
  known.forEach(function (entry) {
    if (!isMine(entry.message) && entry.message.status !== 'read') count += 1;
  });
  if (count === reportedUnread) return;
  reportedUnread = count;
  if (embedded) window.parent.postMessage({ type: 'chat-widget:unread', count: count }, state.parentOrigin);
}


/** The bot or a person typing, in a polite live region: filled while on, so screen readers announce it. */
export function setTyping(isBotTyping) {
  typingShown = !!isBotTyping;
  var text = typingShown ? state.title + ' is typing…' : '';
  if (elements.typing.textContent !== text) {
    elements.typing.textContent = '';
    if (typingShown) {
      var dots = document.createElement('span');
      dots.className = 'dots';
      dots.setAttribute('aria-hidden', 'true');
      for (var i = 0; i < 3; i++) dots.appendChild(document.createElement('span'));
      elements.typing.appendChild(dots);
      elements.typing.appendChild(document.createTextNode(text));
    }
  }
  showDelivered();
  keepAtNewest();
}

export function removeMessage(messageSid) {
  var entry = known.get(messageSid);
  if (!entry) return;
  entry.element.remove();
  known.delete(messageSid);
  settle();
}
