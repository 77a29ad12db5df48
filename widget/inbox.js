// The agent console: the account's open conversations, newest first, kept current by the
// account's conversation feed (the tRPC subscription chatWidgets.onConversationEvent over the
// /trpc WebSocket, spoken directly: JSON frames, PING answered with PONG). Reading and acting
// go through the REST API. The credential lives in sessionStorage: this tab, this session.
// Whenever the socket (re)connects the list and the open conversation are read again, so
// nothing announced while it was down is missed. Everything shown is inserted as text.
(function () {
  'use strict';

  var apiBase = document.body.dataset.apiBase || '/v1';
  var CREDENTIAL_KEY = 'inbox:credential';
  var SUBSCRIPTION_PATH = 'chatWidgets.onConversationEvent';
  // A visitor's typing is renewed every few seconds while they type; without renewal it lapses.
  var VISITOR_TYPING_LAPSE_MS = 8000;
  // The API's typing indicator lasts 15 s unless renewed: renewed this often while the agent types.
  var AGENT_TYPING_RENEW_MS = 5000;
  var AGENT_TYPING_PAUSE_MS = 4000;

  function byId(id) { return document.getElementById(id); }
  var el = {
    connection: byId('connection'),
    signOut: byId('sign-out'),
    signIn: byId('sign-in'),
    credential: byId('credential'),
    signInError: byId('sign-in-error'),
    inbox: byId('inbox'),
    listEmpty: byId('list-empty'),
    list: byId('conversations'),
    threadEmpty: byId('thread-empty'),
    thread: byId('thread'),
    back: byId('back'),
    name: byId('contact-name'),
    state: byId('contact-state'),
    handoff: byId('handoff'),
    closeSession: byId('close-session'),
    archive: byId('archive'),
    messages: byId('messages'),
    visitorTyping: byId('visitor-typing'),
    notice: byId('thread-notice'),
    composer: byId('composer'),
    reply: byId('reply'),
  };

  var credential = null;
  /** contactId -> { contactId, name, lastAt, preview, unread, typingUntil, handedOff, element } */
  var conversations = new Map();
  var openId = null;
  /** messageSid -> { message, element } of the open conversation */
  var shown = new Map();
  var socket = null;
  var socketRetry = 0;
  var reconnectTimer = null;
  var listTimer = null;
  var typingTimer = null;

  // ---- the API ----------------------------------------------------------------------

  function isIdToken(value) {
    return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
  }

  function authHeaders() {
    return isIdToken(credential) ? { authorization: 'Bearer ' + credential } : { 'x-api-key': credential };
  }

  /** JSON in, JSON out; rejects with the API's error text. A 401 signs out. */
  function api(path, options) {
    options = options || {};
    var headers = authHeaders();
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(apiBase + path, {
      method: options.method || 'GET',
      headers: headers,
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
      cache: 'no-store',
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.status === 401) signOut('The key or token was not accepted.');
        if (!response.ok) {
          var error = new Error((body && (body.error || body.message)) || 'Request failed (' + response.status + ')');
          error.status = response.status;
          throw error;
        }
        return body;
      });
    });
  }

  // ---- signing in -------------------------------------------------------------------

  function storedCredential(value) {
    try {
      if (value === null) sessionStorage.removeItem(CREDENTIAL_KEY);
      else if (value !== undefined) sessionStorage.setItem(CREDENTIAL_KEY, value);
      return sessionStorage.getItem(CREDENTIAL_KEY);
    } catch (error) {
      return value || null;
    }
  }

  function signIn(value) {
    credential = value;
    el.signIn.hidden = true;
    el.inbox.hidden = false;
    el.signOut.hidden = false;
    loadList();
    connect();
  }

  function signOut(reason) {
    credential = null;
    storedCredential(null);
    if (socket) {
      var closing = socket;
      socket = null;
      closing.close();
    }
    clearTimeout(reconnectTimer);
    conversations.clear();
    el.list.textContent = '';
    closeThread();
    el.inbox.hidden = true;
    el.signOut.hidden = true;
    el.signIn.hidden = false;
    setConnection('');
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
    storedCredential(value);
    signIn(value);
  });
  el.signOut.addEventListener('click', function () { signOut(''); });

  function setConnection(text) {
    el.connection.textContent = text;
  }

  // ---- the live feed ----------------------------------------------------------------

  function connect() {
    if (!credential) return;
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/trpc?connectionParams=1';
    var ws = new WebSocket(url);
    socket = ws;
    setConnection(socketRetry ? 'Reconnecting…' : 'Connecting…');
    ws.onopen = function () {
      // The credential goes in the first frame, never in the URL (which proxies may log).
      var params = isIdToken(credential) ? { idToken: credential } : { apiKey: credential };
      ws.send(JSON.stringify({ method: 'connectionParams', data: params }));
      ws.send(JSON.stringify({ id: 1, method: 'subscription', params: { path: SUBSCRIPTION_PATH, input: {} } }));
    };
    ws.onmessage = function (frame) {
      if (frame.data === 'PING') return ws.send('PONG');
      if (frame.data === 'PONG') return;
      var message;
      try {
        message = JSON.parse(frame.data);
      } catch (error) {
        return;
      }
      if (message.error) {
        var status = message.error.data && message.error.data.httpStatus;
        if (status === 401) signOut('The key or token was not accepted.');
        else setConnection('Live updates refused: ' + message.error.message);
        return;
      }
      var result = message.result || {};
      if (result.type === 'started') {
        socketRetry = 0;
        setConnection('Live');
        // Whatever was announced while the socket was down is read again.
        loadList();
        if (openId) loadThread(openId);
      } else if (result.type === 'data') {
        receive(result.data);
      } else if (message.method === 'reconnect') {
        ws.close();
      }
    };
    ws.onclose = function () {
      if (socket !== ws) return;
      socket = null;
      setConnection('Offline, reconnecting…');
      var delay = Math.min(30000, 500 * Math.pow(2, socketRetry));
      socketRetry += 1;
      reconnectTimer = setTimeout(connect, delay);
    };
  }

  function receive(event) {
    if (!event || typeof event.contactId !== 'string') return;
    var conversation = conversations.get(event.contactId);
    if (event.kind === 'message') {
      var message = event.message || {};
      if (!conversation) return scheduleListLoad();
      conversation.lastAt = Date.parse(message.timestamp) || Date.now();
      conversation.preview = message.body || '';
      if (message.direction === 'inbound') conversation.typingUntil = 0;
      if (event.contactId !== openId && message.direction === 'inbound') conversation.unread = true;
      renderConversation(conversation);
      sortList();
      if (event.contactId === openId) {
        addMessage({ id: message.messageSid, body: message.body, direction: message.direction, timestamp: message.timestamp, status: message.status });
        showVisitorTyping();
      }
    } else if (event.kind === 'visitor-typing') {
      if (!conversation) return;
      conversation.typingUntil = event.isVisitorTyping ? Date.now() + VISITOR_TYPING_LAPSE_MS : 0;
      renderConversation(conversation);
      if (event.contactId === openId) showVisitorTyping();
      if (event.isVisitorTyping) setTimeout(function () { renderConversation(conversation); showVisitorTyping(); }, VISITOR_TYPING_LAPSE_MS + 50);
    } else if (event.kind === 'read') {
      if (event.contactId !== openId) return;
      (event.messageSids || []).forEach(function (sid) {
        var entry = shown.get(sid);
        if (entry) {
          entry.message.status = 'read';
          renderStatus(entry);
        }
      });
    } else if (event.kind === 'handoff') {
      if (!conversation) return scheduleListLoad();
      conversation.handedOff = true;
      renderConversation(conversation);
      if (event.contactId === openId) renderState();
    }
  }

  // ---- the list ---------------------------------------------------------------------

  function scheduleListLoad() {
    clearTimeout(listTimer);
    listTimer = setTimeout(loadList, 300);
  }

  /** The open sessions, one per contact, newest first (the newest 100). */
  function loadList() {
    if (!credential) return Promise.resolve();
    return api('/chat-sessions/recent?limit=100')
      .then(function (body) {
        var seen = new Set();
        (body.data || []).forEach(function (session) {
          if (session.status !== 'ChatSessionOpened' || seen.has(session.contact_id)) return;
          seen.add(session.contact_id);
          var conversation = conversations.get(session.contact_id);
          if (!conversation) {
            conversation = { contactId: session.contact_id, lastAt: 0, preview: '', unread: false, typingUntil: 0, handedOff: false, element: null };
            conversations.set(session.contact_id, conversation);
          }
          conversation.name = session.contact_name || 'Visitor';
          conversation.lastAt = Math.max(conversation.lastAt, Date.parse(session.start_date_time) || 0);
          renderConversation(conversation);
        });
        // Closed or archived elsewhere: gone from the list.
        conversations.forEach(function (conversation, contactId) {
          if (seen.has(contactId)) return;
          if (conversation.element) conversation.element.remove();
          conversations.delete(contactId);
        });
        sortList();
      })
      .catch(function (error) {
        setConnection(error.message);
      });
  }

  function renderConversation(conversation) {
    if (!conversation.element) {
      var item = document.createElement('li');
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'conversation';
      button.addEventListener('click', function () { openThread(conversation.contactId); });
      var name = document.createElement('span');
      name.className = 'name';
      var preview = document.createElement('span');
      preview.className = 'preview';
      var badge = document.createElement('span');
      badge.className = 'badge';
      button.appendChild(name);
      button.appendChild(badge);
      button.appendChild(preview);
      item.appendChild(button);
      conversation.element = item;
      el.list.appendChild(item);
    }
    var parts = conversation.element.firstChild.childNodes;
    var typing = conversation.typingUntil > Date.now();
    parts[0].textContent = conversation.name || 'Visitor';
    parts[1].textContent = conversation.handedOff ? 'Needs a person' : conversation.unread ? 'New' : '';
    parts[1].hidden = !parts[1].textContent;
    parts[2].textContent = typing ? 'typing…' : conversation.preview;
    conversation.element.firstChild.classList.toggle('unread', conversation.unread);
    conversation.element.firstChild.setAttribute('aria-current', conversation.contactId === openId ? 'true' : 'false');
    el.listEmpty.hidden = conversations.size > 0;
  }

  function sortList() {
    var items = Array.from(conversations.values()).sort(function (a, b) { return b.lastAt - a.lastAt; });
    items.forEach(function (conversation) {
      if (conversation.element) el.list.appendChild(conversation.element);
    });
    el.listEmpty.hidden = conversations.size > 0;
  }

  // ---- the open conversation --------------------------------------------------------

  function openThread(contactId) {
    var conversation = conversations.get(contactId);
    if (!conversation) return;
    stopAgentTyping();
    openId = contactId;
    conversation.unread = false;
    conversations.forEach(renderConversation);
    shown.clear();
    el.messages.textContent = '';
    el.name.textContent = conversation.name;
    renderState();
    showNotice('');
    el.threadEmpty.hidden = true;
    el.thread.hidden = false;
    document.body.classList.add('reading');
    showVisitorTyping();
    loadThread(contactId);
    el.reply.focus();
  }

  function closeThread() {
    stopAgentTyping();
    openId = null;
    shown.clear();
    el.messages.textContent = '';
    el.thread.hidden = true;
    el.threadEmpty.hidden = false;
    document.body.classList.remove('reading');
    conversations.forEach(renderConversation);
  }

  el.back.addEventListener('click', closeThread);

  function renderState() {
    var conversation = conversations.get(openId);
    el.state.textContent = conversation && conversation.handedOff ? 'Handed off: needs a person' : 'Open';
    el.handoff.disabled = !!(conversation && conversation.handedOff);
  }

  /** The contact's sessions with their messages, oldest first. */
  function loadThread(contactId) {
    return api('/contacts/' + encodeURIComponent(contactId) + '/chat-sessions?includeMessages=true')
      .then(function (body) {
        if (contactId !== openId) return;
        var messages = [];
        (body.data || []).forEach(function (session) { messages = messages.concat(session.messages || []); });
        messages.sort(function (a, b) { return Date.parse(a.timestamp) - Date.parse(b.timestamp); });
        messages.forEach(addMessage);
      })
      .catch(function (error) {
        if (contactId === openId) showNotice(error.message);
      });
  }

  function timeOf(message) {
    var ms = Date.parse(message.timestamp);
    return isNaN(ms) ? Date.now() : ms;
  }

  /** A live copy of a visitor's message carries the widget's own id: matched by text and time too. */
  function findSame(message) {
    if (shown.has(message.id)) return shown.get(message.id);
    var found = null;
    var isInbound = message.direction === 'inbound';
    shown.forEach(function (entry) {
      if (found || (entry.message.direction === 'inbound') !== isInbound) return;
      if (entry.message.body === message.body && Math.abs(timeOf(entry.message) - timeOf(message)) < 2000) found = entry;
    });
    return found;
  }

  function addMessage(message) {
    if (!message || typeof message.id !== 'string') return;
    var existing = findSame(message);
    if (existing) {
      if (message.status && existing.message.status !== 'read') existing.message.status = message.status;
      shown.set(message.id, existing);
      renderStatus(existing);
      return;
    }
    var item = document.createElement('li');
    var mine = message.direction !== 'inbound';
    item.className = 'message ' + (mine ? 'outbound' : 'inbound');
    item.dataset.time = String(timeOf(message));
    var who = document.createElement('span');
    who.className = 'visually-hidden';
    who.textContent = mine ? 'Reply: ' : 'Visitor: ';
    var bubble = document.createElement('div');
    bubble.className = 'bubble';
    bubble.textContent = message.body || '';
    var meta = document.createElement('span');
    meta.className = 'meta';
    item.appendChild(who);
    item.appendChild(bubble);
    item.appendChild(meta);
    var entry = { message: message, element: item };
    shown.set(message.id, entry);
    var stick = el.messages.scrollHeight - el.messages.scrollTop - el.messages.clientHeight < 80;
    // In time order: after the last one not later than it.
    var before = null;
    for (var node = el.messages.lastElementChild; node; node = node.previousElementSibling) {
      if (Number(node.dataset.time) <= timeOf(message)) break;
      before = node;
    }
    el.messages.insertBefore(item, before);
    renderStatus(entry);
    if (stick || mine) el.messages.scrollTop = el.messages.scrollHeight;
  }

  function renderStatus(entry) {
    var message = entry.message;
    var time = new Date(timeOf(message)).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    var status = message.direction === 'inbound' ? '' : message.status === 'read' ? ' · Read' : message.status === 'failed' ? ' · Not sent' : ' · Sent';
    entry.element.lastChild.textContent = time + status;
    entry.element.classList.toggle('read', message.status === 'read');
  }

  function showVisitorTyping() {
    var conversation = conversations.get(openId);
    el.visitorTyping.hidden = !(conversation && conversation.typingUntil > Date.now());
  }

  function showNotice(text) {
    el.notice.textContent = text;
    el.notice.hidden = !text;
  }

  // ---- acting -----------------------------------------------------------------------

  function contactPath(suffix) {
    return '/contacts/' + encodeURIComponent(openId) + suffix;
  }

  el.composer.addEventListener('submit', function (event) {
    event.preventDefault();
    var text = el.reply.value.trim();
    if (!text || !openId) return;
    var contactId = openId;
    el.reply.value = '';
    stopAgentTyping();
    api(contactPath('/messages'), { method: 'POST', body: { text: text } })
      .then(function (body) {
        if (contactId === openId && body.data) addMessage(body.data);
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
    api(contactPath('/typing'), { method: 'POST', body: { typing: true } }).catch(function () {});
  });

  function stopAgentTyping() {
    clearTimeout(typingTimer);
    if (!agentTypingFor) return;
    var contactId = agentTypingFor;
    agentTypingFor = null;
    agentTypingAt = 0;
    api('/contacts/' + encodeURIComponent(contactId) + '/typing', { method: 'POST', body: { typing: false } }).catch(function () {});
  }

  el.handoff.addEventListener('click', function () {
    var contactId = openId;
    api(contactPath('/handoff'), { method: 'POST', body: { reason: 'Taken over in the inbox' } })
      .then(function () {
        var conversation = conversations.get(contactId);
        if (conversation) {
          conversation.handedOff = true;
          renderConversation(conversation);
        }
        if (contactId === openId) renderState();
      })
      .catch(function (error) { showNotice(error.message); });
  });

  /** Close and archive take the conversation out of the list. */
  function finish(suffix) {
    var contactId = openId;
    api(contactPath(suffix), { method: 'POST' })
      .then(function () {
        var conversation = conversations.get(contactId);
        if (conversation && conversation.element) conversation.element.remove();
        conversations.delete(contactId);
        if (contactId === openId) closeThread();
        sortList();
      })
      .catch(function (error) { showNotice(error.message); });
  }
  el.closeSession.addEventListener('click', function () { finish('/chat-sessions/close'); });
  el.archive.addEventListener('click', function () { finish('/archive'); });

  // ---- start ------------------------------------------------------------------------

  var saved = storedCredential();
  if (saved) signIn(saved);
  else signOut('');
})();
