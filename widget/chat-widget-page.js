// The chat widget page's behaviour: who the visitor is, the conversation, sending, and
// staying current. Messages arrive over Socket.IO; whenever the socket (re)connects or the
// browser comes back online the page asks for everything after the newest message it has,
// so nothing sent while it was away is lost, and it polls while the socket is down.
// Everything from the server or the visitor is inserted as text, never as HTML.
(function () {
  'use strict';

  var POLL_MS = 4000;
  // Refetch a little before the newest timestamp seen: a message committed late with an
  // earlier timestamp is still picked up, and messageSid de-duplicates the overlap.
  var REFETCH_OVERLAP_MS = 5000;
  var VISITOR_ID = /^[A-Za-z0-9_-]{8,128}$/;
  // The most messages /chat-widget-messages answers at once.
  var PAGE_SIZE = 200;

  var page = document.body.dataset;
  var configId = page.configId;
  var apiBase = page.apiBase || '/v1';
  var inFrame = window.parent !== window;

  var elements = {
    title: document.getElementById('title'),
    connection: document.getElementById('connection'),
    close: document.getElementById('close'),
    conversation: document.getElementById('conversation'),
    greeting: document.getElementById('greeting'),
    messages: document.getElementById('messages'),
    typing: document.getElementById('typing'),
    notice: document.getElementById('notice'),
    composer: document.getElementById('composer'),
    text: document.getElementById('text'),
    send: document.getElementById('send'),
  };

  var visitorId = chooseVisitorId();
  var userId = null;
  /** messageSid -> { message, element } */
  var known = new Map();
  var newestMs = 0;
  var socket = null;
  var pollTimer = null;
  var fetching = false;
  var fetchAgain = false;
  var markingRead = false;

  // ---- visitor identity -------------------------------------------------------------

  function randomId(bytes) {
    var data = new Uint8Array(bytes);
    crypto.getRandomValues(data);
    var binary = '';
    for (var i = 0; i < data.length; i++) binary += String.fromCharCode(data[i]);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  /** The `fromId` of the page URL when given; else the id this browser keeps for the widget. */
  function chooseVisitorId() {
    if (page.fromId && VISITOR_ID.test(page.fromId)) return page.fromId;
    var key = 'chat-widget:visitor:' + configId;
    try {
      var stored = localStorage.getItem(key);
      if (stored && VISITOR_ID.test(stored)) return stored;
      var created = randomId(18); // 24 url-safe characters
      localStorage.setItem(key, created);
      return created;
    } catch (error) {
      // Storage blocked (some browsers in third-party frames): a visitor for this page view only.
      return randomId(18);
    }
  }

  // ---- the conversation -------------------------------------------------------------

  function timeOf(message) {
    var ms = Date.parse(message.timestamp);
    return isNaN(ms) ? Date.now() : ms;
  }

  function isMine(message) {
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
    var who = document.createElement('span');
    who.className = 'visually-hidden';
    who.textContent = isMine(message) ? 'You: ' : 'Reply: ';
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

  function updateMessage(item, message) {
    item.dataset.time = String(timeOf(message));
    item.classList.toggle('pending', !!message.pending);
    item.classList.toggle('failed', message.status === 'failed');
    var time = new Date(timeOf(message)).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    item.lastChild.textContent = isMine(message) ? time + ' · ' + statusText(message) : time;
  }

  function nearBottom() {
    var box = elements.conversation;
    return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  }

  /** Adds a message, or updates the one with the same messageSid; keeps the list in time order. */
  function addMessage(message) {
    if (!message || typeof message.messageSid !== 'string') return;
    var existing = known.get(message.messageSid) || adoptPending(message);
    if (existing) {
      existing.message = Object.assign({}, existing.message, message, { pending: false });
      updateMessage(existing.element, existing.message);
    } else {
      var stick = nearBottom();
      var element = buildMessage(message);
      var at = timeOf(message);
      var before = null;
      for (var node = elements.messages.lastElementChild; node; node = node.previousElementSibling) {
        if (Number(node.dataset.time) <= at) break;
        before = node;
      }
      elements.messages.insertBefore(element, before);
      known.set(message.messageSid, { message: message, element: element });
      if (stick || isMine(message)) elements.conversation.scrollTop = elements.conversation.scrollHeight;
    }
    if (!message.pending) newestMs = Math.max(newestMs, timeOf(message));
    elements.greeting.hidden = known.size > 0 || !elements.greeting.textContent;
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
    if (!found) return null;
    var entry = known.get(found);
    known.delete(found);
    known.set(message.messageSid, entry);
    return entry;
  }

  function setStatus(messageSid, status) {
    var entry = known.get(messageSid);
    if (!entry) return;
    entry.message.status = status;
    updateMessage(entry.element, entry.message);
  }

  function setTyping(isBotTyping) {
    elements.typing.hidden = !isBotTyping;
    if (isBotTyping && nearBottom()) elements.conversation.scrollTop = elements.conversation.scrollHeight;
  }

  function showNotice(text) {
    elements.notice.textContent = text;
    elements.notice.hidden = !text;
  }

  /** fetch rejects with a TypeError when the network is down; other failures carry a sentence for the visitor. */
  function failureText(error) {
    return error instanceof TypeError ? 'You appear to be offline. Please try again.' : String(error.message);
  }

  function setConnection(text) {
    elements.connection.textContent = text;
  }

  // ---- talking to the API -----------------------------------------------------------

  function api(path, options) {
    return fetch(apiBase + path, Object.assign({ credentials: 'omit', cache: 'no-store' }, options));
  }

  function query(values) {
    return Object.keys(values)
      .filter(function (key) { return values[key] !== undefined; })
      .map(function (key) { return encodeURIComponent(key) + '=' + encodeURIComponent(values[key]); })
      .join('&');
  }

  function loadConfig() {
    return api('/chat-widget-config?' + query({ configId: configId }))
      .then(function (response) {
        if (response.status === 404) throw new Error('This chat is not available.');
        return response.json().catch(function () { return null; }).then(function (body) {
          if (!response.ok || !body || !body.data) throw new Error('This chat is not available right now. Please try again later.');
          return body.data;
        });
      })
      .then(applyConfig);
  }

  function applyConfig(data) {
    userId = data.userId;
    var colors = data.colors || {};
    var root = document.documentElement.style;
    [
      ['--primary', colors.primary],
      ['--background', colors.background],
      ['--text', colors.text],
      ['--bubble-mine', colors.visitorBubble],
      ['--bubble-theirs', colors.botBubble],
    ].forEach(function (pair) {
      if (typeof pair[1] === 'string' && CSS.supports('color', pair[1])) root.setProperty(pair[0], pair[1]);
    });
    if (data.title) {
      elements.title.textContent = data.title;
      document.title = data.title;
    }
    if (data.greeting) elements.greeting.textContent = data.greeting;
    elements.greeting.hidden = known.size > 0 || !data.greeting;
    // The embed script places and colours its launcher from this (public fields only).
    if (inFrame) {
      window.parent.postMessage({ type: 'chat-widget:config', position: data.position, primary: colors.primary, title: data.title }, '*');
    }
  }

  /** Everything after the newest message held (all of it the first time); concurrent calls coalesce. */
  function refetch(exactAfterMs) {
    if (fetching) {
      fetchAgain = true;
      return Promise.resolve();
    }
    fetching = true;
    var nextPageAfter = null;
    var after = exactAfterMs !== undefined ? String(exactAfterMs) : newestMs ? String(Math.max(0, newestMs - REFETCH_OVERLAP_MS)) : undefined;
    return api('/chat-widget-messages?' + query({ fromId: visitorId, toId: configId, after: after }))
      .then(function (response) {
        // 404: no message from this visitor yet, so no conversation.
        if (response.status === 404) return { messages: [], isBotTyping: false };
        if (!response.ok) throw new Error('messages: ' + response.status);
        return response.json();
      })
      .then(function (body) {
        var messages = body.messages || [];
        messages.forEach(addMessage);
        // A full page (oldest first): the rest comes after its last message.
        if (messages.length >= PAGE_SIZE) nextPageAfter = timeOf(messages[messages.length - 1]);
        setTyping(!!body.isBotTyping);
        markReadIfVisible();
        if (!socket || !socket.connected) setConnection(navigator.onLine === false ? 'Offline' : '');
      })
      .catch(function () {
        setConnection('Offline');
      })
      .then(function () {
        fetching = false;
        if (nextPageAfter !== null) return refetch(nextPageAfter);
        if (fetchAgain) {
          fetchAgain = false;
          return refetch();
        }
      });
  }

  /** Marks the replies read once the visitor can see them. */
  function markReadIfVisible() {
    if (document.visibilityState !== 'visible' || markingRead) return;
    var unread = [];
    known.forEach(function (entry, sid) {
      if (!isMine(entry.message) && entry.message.status !== 'read') unread.push(sid);
    });
    if (!unread.length) return;
    markingRead = true;
    api('/update-message-read-status', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fromId: visitorId, toId: configId }),
    })
      .then(function (response) {
        if (response.ok) unread.forEach(function (sid) { setStatus(sid, 'read'); });
      })
      .catch(function () {})
      .then(function () { markingRead = false; });
  }

  function send(text) {
    var messageSid = 'wm_' + randomId(15);
    addMessage({ messageSid: messageSid, body: text, timestamp: new Date().toISOString(), type: 'text', direction: 'inbound', status: 'sending', pending: true });
    showNotice('');
    return api('/incoming-chat-widget-message?' + query({ userId: userId }), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messageType: 'text', customData: { body: text, fromId: visitorId, toId: configId, messageSid: messageSid } }),
    })
      .then(function (response) {
        if (response.status === 429) {
          removeMessage(messageSid);
          if (!elements.text.value) elements.text.value = text;
          var wait = Number(response.headers.get('retry-after'));
          showNotice(
            'You are sending messages a little too quickly. Please wait ' +
              (wait > 0 ? wait + (wait === 1 ? ' second' : ' seconds') : 'a moment') +
              ' and try again.',
          );
          return;
        }
        if (!response.ok) throw new Error('send: ' + response.status);
        return response.json().then(function () {
          // Later copies of the message (socket, polls) carry the messageSid sent with it.
          var entry = known.get(messageSid);
          if (entry) {
            entry.message.pending = false;
            entry.message.status = entry.message.status === 'sending' ? 'sent' : entry.message.status;
            updateMessage(entry.element, entry.message);
          }
          if (!socket || !socket.connected) refetch();
        });
      })
      .catch(function () {
        var entry = known.get(messageSid);
        if (entry) {
          entry.message.pending = false;
          entry.message.status = 'failed';
          updateMessage(entry.element, entry.message);
        }
        showNotice('Your message could not be sent. Check your connection and try again.');
      });
  }

  function removeMessage(messageSid) {
    var entry = known.get(messageSid);
    if (!entry) return;
    entry.element.remove();
    known.delete(messageSid);
  }

  // ---- staying current --------------------------------------------------------------

  function startPolling() {
    if (!pollTimer) pollTimer = setInterval(refetch, POLL_MS);
  }

  function stopPolling() {
    if (pollTimer) clearInterval(pollTimer);
    pollTimer = null;
  }

  function connectSocket() {
    // No Socket.IO client (blocked, or the server has none): polling alone keeps the page current.
    if (typeof window.io !== 'function') {
      startPolling();
      return;
    }
    // WebSocket first: a long-polling handshake behind several API processes needs a sticky
    // balancer, a WebSocket does not; polling stays as the fallback.
    socket = window.io({ path: '/socket.io', transports: ['websocket', 'polling'], auth: { configId: configId, visitorId: visitorId } });
    socket.on('connect', function () {
      stopPolling();
      setConnection('');
      refetch();
    });
    socket.on('disconnect', function () {
      startPolling();
    });
    socket.on('connect_error', function () {
      startPolling();
    });
    socket.on('message', function (event) {
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

  window.addEventListener('offline', function () {
    setConnection('Offline');
    // The socket would only notice after its ping time-out; reconnect cleanly when back.
    if (socket) socket.disconnect();
    startPolling();
  });
  window.addEventListener('online', function () {
    setConnection('Reconnecting…');
    if (socket) socket.connect();
    refetch();
  });
  document.addEventListener('visibilitychange', markReadIfVisible);

  // ---- the composer and the frame ---------------------------------------------------

  elements.composer.addEventListener('submit', function (event) {
    event.preventDefault();
    var text = elements.text.value.trim();
    if (!text) return;
    elements.text.value = '';
    resizeComposer();
    elements.text.focus();
    // The configuration names the widget's owner, whom a message is sent to; it may have failed to load.
    (userId ? Promise.resolve() : loadConfig())
      .then(function () { send(text); })
      .catch(function (error) {
        if (!elements.text.value) elements.text.value = text;
        showNotice(failureText(error));
      });
  });

  // Enter sends; Shift+Enter (or an input method composing text) makes a new line.
  elements.text.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      elements.composer.requestSubmit();
    }
  });

  function resizeComposer() {
    elements.text.style.height = 'auto';
    elements.text.style.height = Math.min(elements.text.scrollHeight + 2, 120) + 'px';
  }
  elements.text.addEventListener('input', resizeComposer);

  if (inFrame) {
    elements.close.hidden = false;
    elements.close.addEventListener('click', function () {
      window.parent.postMessage({ type: 'chat-widget:close' }, '*');
    });
    window.addEventListener('message', function (event) {
      if (event.source === window.parent && event.data && event.data.type === 'chat-widget:opened') elements.text.focus();
    });
  }
  window.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && inFrame) window.parent.postMessage({ type: 'chat-widget:close' }, '*');
  });

  loadConfig()
    .catch(function (error) {
      showNotice(failureText(error));
    })
    .then(function () {
      refetch();
      connectSocket();
    });
})();
