// The agent console: the account's conversations, newest activity first, kept current by the
// account's conversation feed (inbox-live.js). Reading and acting go through the REST API: the
// list and its unread counts, hand-off and archive state come from the server, so a reload or
// a teammate's console shows the same. The credential lives in sessionStorage (this tab, this
// session); the agent's name and the Alerts choice, which are no secret, in localStorage.
// Whenever the feed (re)starts, the tab becomes visible again, or a minute passes, the lists
// and the open conversation are read again, so nothing announced meanwhile is missed.
// Everything shown is inserted as text.
import { createAlerts } from './inbox-alerts.js';
import { createApi, isIdToken } from './inbox-api.js';
import { createDetails } from './inbox-details.js';
import { createConfirm } from './inbox-dialog.js';
import { createLiveFeed } from './inbox-live.js';
import { createMessages, normalise, previewOf, timeOf } from './inbox-messages.js';

var apiBase = document.body.dataset.apiBase || '/v1';
var CREDENTIAL_KEY = 'inbox:credential';
var NAME_KEY = 'inbox:agent-name';
// A visitor's typing is renewed every few seconds while they type; without renewal it lapses.
var VISITOR_TYPING_LAPSE_MS = 8000;
// The API's typing indicator lasts 15 s unless renewed: renewed this often while the agent types.
var AGENT_TYPING_RENEW_MS = 5000;
var AGENT_TYPING_PAUSE_MS = 4000;
var RESYNC_EVERY_MS = 60000;
// The reason this console gives a hand-off: its own hand-off is a person arriving, not one needed.
var HANDOFF_REASON = 'Taken over in the inbox';
var CONNECTION_TEXT = { '': '', connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', offline: 'Offline: no network' };

function byId(id) { return document.getElementById(id); }
var el = {
  connection: byId('connection'),
  topActions: byId('top-actions'),
  alerts: byId('alerts'),
  alertsNote: byId('alerts-note'),
  signOut: byId('sign-out'),
  signIn: byId('sign-in'),
  credential: byId('credential'),
  signInError: byId('sign-in-error'),
  inbox: byId('inbox'),
  search: byId('search'),
  viewOpen: byId('view-open'),
  viewArchived: byId('view-archived'),
  listTitle: byId('list-title'),
  listEmpty: byId('list-empty'),
  listNotice: byId('list-notice'),
  list: byId('conversations'),
  threadEmpty: byId('thread-empty'),
  thread: byId('thread'),
  back: byId('back'),
  name: byId('contact-name'),
  state: byId('contact-state'),
  handoff: byId('handoff'),
  closeSession: byId('close-session'),
  archive: byId('archive'),
  scroller: byId('messages-scroll'),
  messages: byId('messages'),
  visitorTyping: byId('visitor-typing'),
  notice: byId('thread-notice'),
  composer: byId('composer'),
  agentName: byId('agent-name'),
  reply: byId('reply'),
  visitorPanel: byId('visitor-panel'),
  appointmentsPanel: byId('appointments-panel'),
};

var credential = null;
/** The two lists, each contactId -> conversation (see conversationOf). */
var lists = { open: new Map(), archived: new Map() };
var view = 'open';
var openId = null;
var openConversation = null;
var listTimer = null;
var readTimer = null;
var typingTimer = null;

var api = createApi(apiBase, {
  credential: function () { return credential; },
  refused: function () { signOut('The key or token was not accepted.'); },
});
var confirm = createConfirm(byId('confirm'));
var details = createDetails(
  {
    visitorFacts: byId('visitor-facts'),
    visitorNotice: byId('visitor-notice'),
    appointments: byId('appointments'),
    appointmentsEmpty: byId('appointments-empty'),
    book: byId('book'),
    appointmentTitle: byId('appointment-title'),
    appointmentStart: byId('appointment-start'),
    appointmentsNotice: byId('appointments-notice'),
  },
  api,
  confirm,
);
var alerts = createAlerts({
  toggle: el.alerts,
  note: function (text) {
    el.alertsNote.textContent = text;
    el.alertsNote.hidden = !text;
  },
  open: function (contactId) {
    if (!find(contactId)) showView('open');
    openThread(contactId);
  },
});
var messages = createMessages(el.messages, el.scroller, function () {
  var conversation = find(openId);
  return conversation ? conversation.name : 'Visitor';
});
var live = createLiveFeed({
  params: function () { return isIdToken(credential) ? { idToken: credential } : { apiKey: credential }; },
  state: setConnection,
  started: function () {
    // Whatever was announced while the socket was down is read again.
    loadLists();
    if (openId) reloadThread(openId);
  },
  event: receive,
  refused: function () { signOut('The key or token was not accepted.'); },
});

function isPhone() {
  return window.matchMedia('(max-width: 700px)').matches;
}

function visible() {
  return document.visibilityState === 'visible';
}

// ---- signing in -------------------------------------------------------------------

function stored(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else if (value !== undefined) storage.setItem(key, value);
    return storage.getItem(key);
  } catch (error) {
    return value || null;
  }
}

function signIn(value) {
  credential = value;
  el.signIn.hidden = true;
  el.inbox.hidden = false;
  el.topActions.hidden = false;
  loadLists();
  live.start();
  // Where the work starts: finding a conversation.
  el.search.focus();
}

function signOut(reason) {
  credential = null;
  stored(sessionStorage, CREDENTIAL_KEY, null);
  live.stop();
  closeThread();
  ['open', 'archived'].forEach(function (which) {
    lists[which].forEach(function (conversation) { if (conversation.element) conversation.element.remove(); });
    lists[which].clear();
  });
  updateTitle();
  el.inbox.hidden = true;
  el.topActions.hidden = true;
  el.signIn.hidden = false;
  el.signInError.textContent = reason || '';
  el.signInError.hidden = !reason;
  el.credential.focus();
}

el.signIn.addEventListener('submit', function (event) {
  event.preventDefault();
  var value = el.credential.value.trim();
  if (!value) return;
  el.credential.value = '';
  el.signInError.hidden = true;
  stored(sessionStorage, CREDENTIAL_KEY, value);
  signIn(value);
});
el.signOut.addEventListener('click', function () { signOut(''); });

function setConnection(state, detail) {
  el.connection.dataset.state = state;
  el.connection.textContent = state === 'refused' ? 'Live updates refused: ' + detail : CONNECTION_TEXT[state];
}

// ---- the live feed ----------------------------------------------------------------

function receive(event) {
  if (!event || typeof event.contactId !== 'string') return;
  var conversation = find(event.contactId);
  if (event.kind === 'message') {
    var message = normalise(event.message || {});
    var inbound = message.direction === 'inbound';
    var reading = event.contactId === openId && visible();
    if (inbound && !reading) alerts.alert(conversation ? conversation.name : 'New conversation', previewOf(message), event.contactId);
    if (event.contactId === openId) {
      if (inbound && reading) scheduleRead(event.contactId);
      messages.add(message);
    }
    // A new conversation, or an archived one its visitor brought back: read the lists.
    if (!conversation || (inbound && conversation.archived)) return scheduleListLoad();
    conversation.lastAt = timeOf(message);
    conversation.preview = previewOf(message);
    if (inbound) {
      conversation.typingUntil = 0;
      if (!reading) conversation.unread += 1;
    }
    // A reply from a person or an app turns the bot off (contract: a team on the conversations).
    if (message.direction === 'outbound-api') {
      conversation.botActive = false;
      conversation.needsPerson = false;
    }
    renderConversation(conversation);
    sortList();
    updateTitle();
    if (event.contactId === openId) {
      showVisitorTyping();
      renderState();
    }
  } else if (event.kind === 'visitor-typing') {
    if (!conversation) return;
    conversation.typingUntil = event.isVisitorTyping ? Date.now() + VISITOR_TYPING_LAPSE_MS : 0;
    renderConversation(conversation);
    if (event.contactId === openId) showVisitorTyping();
    if (event.isVisitorTyping) {
      setTimeout(function () {
        renderConversation(conversation);
        if (event.contactId === openId) showVisitorTyping();
      }, VISITOR_TYPING_LAPSE_MS + 50);
    }
  } else if (event.kind === 'read') {
    if (event.contactId !== openId) return;
    messages.read(event.messageSids || []);
  } else if (event.kind === 'handoff') {
    if (!conversation) return scheduleListLoad();
    var takenOver = event.reason === HANDOFF_REASON;
    conversation.botActive = false;
    conversation.needsPerson = !takenOver;
    if (!takenOver) alerts.alert(conversation.name, 'Asks for a person', event.contactId);
    renderConversation(conversation);
    if (event.contactId === openId) renderState();
  }
}

// ---- the lists --------------------------------------------------------------------

/** The conversation in either list; the open one even when it has just left both (unarchived, but closed). */
function find(contactId) {
  var conversation = lists.open.get(contactId) || lists.archived.get(contactId) || null;
  if (contactId !== openId) return conversation;
  if (conversation) openConversation = conversation;
  return openConversation;
}

function scheduleListLoad() {
  clearTimeout(listTimer);
  listTimer = setTimeout(loadLists, 300);
}

function loadLists() {
  loadList('open');
  if (view === 'archived') loadList('archived');
}

/**
 * The newest 100 sessions of the view, one conversation per contact (its newest session).
 * The open view shows contacts whose newest session is open; the archived view every archived
 * contact. "New": unread, and the read mark is older than the session (nobody opened it).
 */
function loadList(which) {
  if (!credential) return Promise.resolve();
  return api('/chat-sessions/recent?limit=100' + (which === 'archived' ? '&archived=true' : ''))
    .then(function (body) {
      var map = lists[which];
      var considered = new Set();
      var listed = new Set();
      (body.data || []).forEach(function (session) {
        if (considered.has(session.contact_id)) return;
        considered.add(session.contact_id);
        var isOpen = session.status === 'ChatSessionOpened';
        if (which === 'open' && !isOpen) return;
        listed.add(session.contact_id);
        var conversation = map.get(session.contact_id);
        if (!conversation) {
          conversation = { contactId: session.contact_id, typingUntil: 0, needsPerson: false, element: null };
          map.set(session.contact_id, conversation);
        }
        var started = Date.parse(session.start_date_time);
        conversation.name = session.contact_name;
        conversation.sessionOpen = isOpen;
        conversation.lastAt = Date.parse(session.last_message_at) || started || 0;
        conversation.preview = session.last_message_preview || '';
        conversation.unread = session.contact_id === openId && visible() ? 0 : session.unread_count;
        conversation.isNew = conversation.unread > 0 && (!session.read_at || Date.parse(session.read_at) < started);
        conversation.botActive = session.is_bot_active;
        if (conversation.botActive) conversation.needsPerson = false;
        conversation.archived = session.archived;
        if (session.contact_id === openId && session.unread_count > 0 && visible()) scheduleRead(openId);
        renderConversation(conversation);
      });
      // Closed, archived or unarchived elsewhere: gone from this list.
      map.forEach(function (conversation, contactId) {
        if (listed.has(contactId)) return;
        if (conversation.element) conversation.element.remove();
        map.delete(contactId);
      });
      sortList();
      updateTitle();
      showListNotice('');
      if (openId) renderState();
    })
    .catch(function (error) {
      // Offline is said once, by the connection status; the list is read again when back.
      if (error.status !== 401 && navigator.onLine) showListNotice('Conversations not loaded: ' + error.message);
    });
}

function showListNotice(text) {
  el.listNotice.textContent = text;
  el.listNotice.hidden = !text;
}

function renderList() {
  el.list.textContent = '';
  lists[view].forEach(renderConversation);
  sortList();
}

function part(className, text) {
  var span = document.createElement('span');
  span.className = className;
  if (text) span.textContent = text;
  return span;
}

function shortTime(ms) {
  if (!ms) return '';
  var date = new Date(ms);
  var today = new Date();
  return date.toDateString() === today.toDateString()
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString([], { day: 'numeric', month: 'short' });
}

function renderConversation(conversation) {
  if (!conversation.element) {
    var item = document.createElement('li');
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'conversation';
    button.addEventListener('click', function () { openThread(conversation.contactId); });
    var flags = part('flags');
    flags.appendChild(part('new', 'New'));
    var badge = part('badge');
    badge.appendChild(part('count'));
    badge.appendChild(part('visually-hidden', ' unread'));
    flags.appendChild(badge);
    flags.appendChild(part('state'));
    button.appendChild(part('name'));
    button.appendChild(part('time'));
    button.appendChild(part('preview'));
    button.appendChild(flags);
    item.appendChild(button);
    conversation.element = item;
    conversation.parts = {
      button: button,
      name: button.querySelector('.name'),
      time: button.querySelector('.time'),
      preview: button.querySelector('.preview'),
      isNew: flags.querySelector('.new'),
      badge: badge,
      count: badge.querySelector('.count'),
      state: flags.querySelector('.state'),
    };
  }
  var parts = conversation.parts;
  var typing = conversation.typingUntil > Date.now();
  parts.name.textContent = conversation.name || 'Visitor';
  parts.time.textContent = shortTime(conversation.lastAt);
  parts.preview.textContent = typing ? 'typing…' : conversation.preview || 'No messages yet';
  parts.isNew.hidden = !(conversation.isNew && conversation.unread > 0);
  parts.count.textContent = String(conversation.unread);
  parts.badge.hidden = !(conversation.unread > 0);
  parts.state.textContent = conversation.needsPerson ? 'Needs a person' : conversation.botActive === false ? 'Bot off' : '';
  parts.state.hidden = !parts.state.textContent;
  parts.button.classList.toggle('unread', conversation.unread > 0);
  parts.button.setAttribute('aria-current', conversation.contactId === openId ? 'true' : 'false');
  conversation.element.hidden = !matchesSearch(conversation);
}

function matchesSearch(conversation) {
  var query = el.search.value.trim().toLowerCase();
  if (!query) return true;
  return ((conversation.name || '') + ' ' + (conversation.preview || '')).toLowerCase().indexOf(query) >= 0;
}

/** Newest activity first. Only entries out of place move, and the focus stays where it was. */
function sortList() {
  var items = Array.from(lists[view].values()).sort(function (a, b) { return b.lastAt - a.lastAt; });
  var focused = document.activeElement;
  var anyShown = false;
  var at = el.list.firstElementChild;
  items.forEach(function (conversation) {
    if (!conversation.element) return;
    if (conversation.element === at) at = at.nextElementSibling;
    else el.list.insertBefore(conversation.element, at);
    if (!conversation.element.hidden) anyShown = true;
  });
  if (focused && focused !== document.activeElement && el.list.contains(focused)) focused.focus();
  var query = el.search.value.trim();
  el.listEmpty.textContent = query
    ? 'No conversation matches “' + query + '”.'
    : view === 'archived' ? 'No archived conversations.' : 'No open conversations.';
  el.listEmpty.hidden = anyShown;
}

function updateTitle() {
  var unread = 0;
  lists.open.forEach(function (conversation) { unread += conversation.unread || 0; });
  alerts.unread(unread);
}

el.search.addEventListener('input', function () {
  lists[view].forEach(renderConversation);
  sortList();
});
el.search.addEventListener('keydown', function (event) {
  // Down from the search goes to the first conversation shown.
  if (event.key !== 'ArrowDown') return;
  var first = el.list.querySelector('li:not([hidden]) .conversation');
  if (first) {
    event.preventDefault();
    first.focus();
  }
});
el.list.addEventListener('keydown', function (event) {
  if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
  var buttons = Array.from(el.list.querySelectorAll('li:not([hidden]) .conversation'));
  var at = buttons.indexOf(document.activeElement);
  if (at < 0) return;
  event.preventDefault();
  var next = buttons[at + (event.key === 'ArrowDown' ? 1 : -1)];
  if (next) next.focus();
  else if (event.key === 'ArrowUp') el.search.focus();
});

function showView(which) {
  view = which;
  el.viewOpen.setAttribute('aria-pressed', String(which === 'open'));
  el.viewArchived.setAttribute('aria-pressed', String(which === 'archived'));
  el.listTitle.textContent = which === 'archived' ? 'Archived conversations' : 'Open conversations';
  renderList();
  if (which === 'archived') loadList('archived');
}
el.viewOpen.addEventListener('click', function () { showView('open'); });
el.viewArchived.addEventListener('click', function () { showView('archived'); });

// ---- the open conversation --------------------------------------------------------

function openThread(contactId) {
  var conversation = find(contactId);
  if (!conversation) return;
  stopAgentTyping();
  openId = contactId;
  openConversation = conversation;
  conversation.unread = 0;
  conversation.isNew = false;
  lists[view].forEach(renderConversation);
  updateTitle();
  messages.clear();
  el.name.textContent = conversation.name;
  showNotice('');
  el.threadEmpty.hidden = true;
  el.thread.hidden = false;
  document.body.classList.add('reading');
  // Beside the conversation on a wide screen; folded away on a phone.
  el.visitorPanel.open = !isPhone();
  el.appointmentsPanel.open = !isPhone();
  renderState();
  showVisitorTyping();
  details.open(contactId);
  reloadThread(contactId);
  markRead(contactId);
  // A phone's keyboard would cover the conversation: there the heading takes the focus.
  if (isPhone()) el.name.focus();
  else el.reply.focus();
}

function closeThread() {
  var wasOpen = openId;
  stopAgentTyping();
  openId = null;
  openConversation = null;
  details.close();
  messages.clear();
  el.thread.hidden = true;
  el.threadEmpty.hidden = false;
  document.body.classList.remove('reading');
  lists[view].forEach(renderConversation);
  return wasOpen;
}

/** After the open conversation left the list: the focus goes to the list, never to nothing. */
function focusList() {
  var first = el.list.querySelector('li:not([hidden]) .conversation');
  (first || el.search).focus();
}

el.back.addEventListener('click', function () {
  var was = find(closeThread());
  if (was && was.parts && !was.element.hidden && was.element.isConnected) was.parts.button.focus();
  else focusList();
});

function renderState() {
  var conversation = find(openId);
  if (!conversation) return;
  var bot = conversation.needsPerson
    ? 'Handed off: needs a person'
    : conversation.botActive === false ? 'Bot off: a person answers' : 'Bot answering';
  el.state.textContent = (conversation.archived ? 'Archived · ' : '') + bot;
  el.handoff.textContent = conversation.botActive === false ? 'Turn bot on' : 'Hand off';
  el.handoff.title = conversation.botActive === false ? 'Let the bot answer this visitor again' : 'Take over from the bot: the visitor is told you are here';
  el.closeSession.disabled = conversation.sessionOpen === false;
  el.archive.textContent = conversation.archived ? 'Unarchive' : 'Archive';
}

/** The contact (bot and archive state, the visitor panel) and the conversation's messages. */
function reloadThread(contactId) {
  api('/contacts/' + encodeURIComponent(contactId))
    .then(function (body) {
      if (contactId !== openId) return;
      var conversation = find(contactId);
      var contact = body.data;
      if (conversation) {
        conversation.botActive = contact.is_bot_active;
        if (contact.is_bot_active) conversation.needsPerson = false;
        conversation.archived = contact.archived;
        renderConversation(conversation);
      }
      renderState();
      details.showContact(contact);
    })
    .catch(function (error) { if (contactId === openId) details.contactFailed(error); });
  return api('/contacts/' + encodeURIComponent(contactId) + '/chat-sessions?includeMessages=true')
    .then(function (body) {
      if (contactId !== openId) return;
      var stored = [];
      (body.data || []).forEach(function (session) { stored = stored.concat(session.messages || []); });
      stored.sort(function (a, b) { return Date.parse(a.timestamp) - Date.parse(b.timestamp); });
      stored.forEach(function (message) { messages.add(normalise(message)); });
    })
    .catch(function (error) {
      if (contactId === openId) showNotice(error.message);
    });
}

function markRead(contactId) {
  clearTimeout(readTimer);
  api('/contacts/' + encodeURIComponent(contactId) + '/read', { method: 'POST' }).catch(function () {});
}

/** Messages arriving in the conversation being read are read: one mark for a burst of them. */
function scheduleRead(contactId) {
  clearTimeout(readTimer);
  readTimer = setTimeout(function () { if (contactId === openId) markRead(contactId); }, 500);
}

document.addEventListener('visibilitychange', function () {
  if (!credential || !visible()) return;
  loadLists();
  if (openId) markRead(openId);
});
setInterval(function () {
  if (credential && visible()) loadLists();
}, RESYNC_EVERY_MS);

function showVisitorTyping() {
  var conversation = find(openId);
  el.visitorTyping.hidden = !(conversation && conversation.typingUntil > Date.now());
}

function showNotice(text) {
  el.notice.textContent = text;
  el.notice.hidden = !text;
}

// ---- acting -----------------------------------------------------------------------

function contactPath(contactId, suffix) {
  return '/contacts/' + encodeURIComponent(contactId) + suffix;
}

function agentName() {
  return el.agentName.value.trim().slice(0, 60);
}

el.agentName.value = stored(localStorage, NAME_KEY) || '';
el.agentName.addEventListener('change', function () {
  stored(localStorage, NAME_KEY, agentName() || null);
});

el.composer.addEventListener('submit', function (event) {
  event.preventDefault();
  var text = el.reply.value.trim();
  if (!text || !openId) return;
  var contactId = openId;
  var name = agentName();
  el.reply.value = '';
  stopAgentTyping();
  var body = { text: text };
  if (name) body.sender_name = name;
  api(contactPath(contactId, '/messages'), { method: 'POST', body: body })
    .then(function (answer) {
      var conversation = find(contactId);
      if (conversation) {
        conversation.botActive = false;
        conversation.needsPerson = false;
        conversation.preview = text;
        conversation.lastAt = Date.parse(answer.data.timestamp) || Date.now();
        renderConversation(conversation);
        sortList();
      }
      if (contactId !== openId) return;
      messages.add(normalise(Object.assign({}, answer.data, { sender_name: name || null })));
      renderState();
    })
    .catch(function (error) {
      if (contactId !== openId) return;
      if (!el.reply.value) el.reply.value = text;
      showNotice('Not sent: ' + error.message);
    });
});

el.reply.addEventListener('keydown', function (event) {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    el.composer.requestSubmit();
  }
});

// The visitor sees "typing…" while the agent writes: renewed while typing, ended on a pause.
var agentTypingAt = 0;
var agentTypingFor = null;
el.reply.addEventListener('input', function () {
  if (!openId) return;
  if (!el.reply.value.trim()) return stopAgentTyping();
  clearTimeout(typingTimer);
  typingTimer = setTimeout(stopAgentTyping, AGENT_TYPING_PAUSE_MS);
  if (agentTypingFor === openId && Date.now() - agentTypingAt < AGENT_TYPING_RENEW_MS) return;
  agentTypingAt = Date.now();
  agentTypingFor = openId;
  api(contactPath(openId, '/typing'), { method: 'POST', body: { typing: true } }).catch(function () {});
});

function stopAgentTyping() {
  clearTimeout(typingTimer);
  if (!agentTypingFor) return;
  var contactId = agentTypingFor;
  agentTypingFor = null;
  agentTypingAt = 0;
  api(contactPath(contactId, '/typing'), { method: 'POST', body: { typing: false } }).catch(function () {});
}

/** What the visitor is told when an agent takes over: a person is here now. */
function handoffMessage() {
  var name = agentName();
  return name ? 'You’re now chatting with ' + name + '.' : 'You’re now chatting with a person from our team.';
}

el.handoff.addEventListener('click', function () {
  var contactId = openId;
  var conversation = find(contactId);
  if (!conversation) return;
  var turnOn = conversation.botActive === false;
  var call = turnOn
    ? api(contactPath(contactId, ''), { method: 'PUT', body: { is_bot_active: true } })
    : api(contactPath(contactId, '/handoff'), { method: 'POST', body: { reason: HANDOFF_REASON, message: handoffMessage() } });
  el.handoff.disabled = true;
  call
    .then(function () {
      conversation.botActive = turnOn;
      conversation.needsPerson = false;
      renderConversation(conversation);
      if (contactId === openId) renderState();
    })
    .catch(function (error) { showNotice(error.message); })
    .then(function () {
      el.handoff.disabled = false;
      if (contactId === openId) el.handoff.focus();
    });
});

/** Closing and archiving take the conversation out of its list, after the agent confirms. */
function finish(suffix, question) {
  var contactId = openId;
  return confirm(question).then(function (confirmed) {
    if (!confirmed) return;
    return api(contactPath(contactId, suffix), { method: 'POST' })
      .then(function () {
        var conversation = lists.open.get(contactId);
        if (conversation && conversation.element) conversation.element.remove();
        lists.open.delete(contactId);
        if (contactId === openId) closeThread();
        sortList();
        updateTitle();
        focusList();
      })
      .catch(function (error) { showNotice(error.message); });
  });
}

el.closeSession.addEventListener('click', function () {
  finish('/chat-sessions/close', {
    title: 'Close this chat?',
    text: 'It leaves the open conversations. If the visitor writes again, a new conversation starts.',
    action: 'Close chat',
  });
});

el.archive.addEventListener('click', function () {
  var contactId = openId;
  var conversation = find(contactId);
  if (!conversation) return;
  if (!conversation.archived) {
    finish('/archive', {
      title: 'Archive this conversation?',
      text: 'It moves to Archived. A new message from the visitor brings it back.',
      action: 'Archive',
    }).then(function () { if (view === 'archived') loadList('archived'); });
    return;
  }
  api(contactPath(contactId, '/unarchive'), { method: 'POST' })
    .then(function () {
      conversation.archived = false;
      lists.archived.delete(contactId);
      if (conversation.element) conversation.element.remove();
      // Back among the open ones (the next read of that list decides whether it stays).
      lists.open.set(contactId, conversation);
      sortList();
      loadList('open');
      if (contactId === openId) {
        renderState();
        el.archive.focus();
      }
    })
    .catch(function (error) { showNotice(error.message); });
});

// ---- start ------------------------------------------------------------------------

var saved = stored(sessionStorage, CREDENTIAL_KEY);
if (saved) signIn(saved);
else signOut('');
