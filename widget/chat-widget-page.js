// The chat widget page's behaviour: who the visitor is, the conversation, sending, and
// staying current. It opens at the newest messages (earlier ones are loaded on demand) and
// stays at the bottom while the visitor has not scrolled up. Messages arrive over Socket.IO;
// whenever the socket (re)connects or the browser comes back online the page asks for
// everything after the newest message it has, so nothing sent while it was away is lost, and
// it polls while the socket is down. What the visitor writes waits in an outbox until the
// server has it. The tabs of one visitor share what they show (BroadcastChannel) and one of
// them plays the new-reply sound.
// Everything from the server or the visitor is inserted as text, never as HTML.
(function () {
  'use strict';

  var POLL_MS = 4000;
  // Refetch a little before the newest timestamp seen: a message committed late with an
  // earlier timestamp is still picked up, and messageSid de-duplicates the overlap.
  var REFETCH_OVERLAP_MS = 5000;
  var VISITOR_ID = /^[A-Za-z0-9_-]{8,128}$/;
  // What a visitor message may report of the page (the API refuses longer or other addresses).
  var MAX_PAGE_URL = 2000;
  var LANGUAGE_TAG = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,7}$/;
  // The most messages /chat-widget-messages answers at once.
  var PAGE_SIZE = 200;
  // The first read asks for the newest messages before this far ahead of the browser's clock;
  // a clock further behind the server's is caught up by the next read (after the newest).
  var NEWEST_MARGIN_MS = 24 * 60 * 60 * 1000;

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
    earlierRow: document.getElementById('earlier-row'),
    earlier: document.getElementById('earlier'),
    messages: document.getElementById('messages'),
    typing: document.getElementById('typing'),
    delivered: document.getElementById('delivered'),
    notice: document.getElementById('notice'),
    announce: document.getElementById('announce'),
    actions: document.getElementById('actions'),
    handoff: document.getElementById('handoff'),
    composer: document.getElementById('composer'),
    text: document.getElementById('text'),
    send: document.getElementById('send'),
  };

  // Framed by the embed script (#embed): the visitor id, and the site's identity token, come
  // from it by postMessage. Anywhere else (a link, a plain iframe) the page uses the id its own
  // storage keeps; the URL's fromId segment is a tracking source and never an identity.
  var embedded = inFrame && location.hash === '#embed';
  var parentOrigins = (page.parentOrigins || '').split(/\s+/);
  // The embed script's origin, once it has introduced itself: what the page tells it about the
  // visitor (their queued messages, the unread count) goes there only.
  var parentOrigin = null;
  var visitorId = null;
  var identityToken = null;
  var userId = null;
  // Sent with each message, kept with the visitor's contact: the page, its referrer, the language.
  var pageDetails = {};
  /** messageSid -> { message, element } */
  var known = new Map();
  var newestMs = 0;
  var socket = null;
  var pollTimer = null;
  var fetching = false;
  var fetchAgain = false;
  var markingRead = false;
  // Whether this visitor has a conversation: until then nothing is fetched (it would be a 404).
  var started = false;
  // Whether the visitor can see the conversation: replies are marked read only then.
  var panelOpen = !embedded;
  // Set once the conversation held when the page opened is shown: later replies are new (sound).
  var live = false;
  var soundTab = false;
  var channel = null;
  var reportedUnread = -1;
  var flushing = false;
  var flushAgain = false;
  var retryTimer = null;
  // Whether the newest messages have been read once (the first read asks for them, not the oldest).
  var newestRead = false;
  // Whether the server holds messages older than the oldest shown.
  var earlierExist = false;
  var loadingEarlier = false;
  // Kept at the newest message until the visitor scrolls up; opening the panel comes back to it.
  var stickToNewest = true;
  var typingShown = false;
  var title = 'Chat';
  // settings.handoffButton: the "Talk to a person" action, offered once the visitor has a conversation.
  var handoffOffered = false;

  // ---- visitor identity -------------------------------------------------------------

  function randomId(bytes) {
    var data = new Uint8Array(bytes);
    crypto.getRandomValues(data);
    var hex = '';
    for (var i = 0; i < data.length; i++) hex += (data[i] + 256).toString(16).slice(1);
    return hex;
  }

  /** The page's own storage (partitioned by site when framed); null when blocked. */
  function stored(key, value) {
    try {
      if (value === null) localStorage.removeItem(key);
      else if (value !== undefined) localStorage.setItem(key, value);
      return localStorage.getItem(key);
    } catch (error) {
      return null;
    }
  }

  /** The id this browser keeps for the widget: 128 random bits, made on the first visit. */
  function ownVisitorId() {
    var key = 'chat-widget:visitor:' + configId;
    var id = stored(key);
    if (id && VISITOR_ID.test(id)) return id;
    id = randomId(16);
    return stored(key, id) || id; // storage blocked: a visitor for this page view only
  }

  function visitorKey(name) {
    return 'chat-widget:' + name + ':' + configId + ':' + visitorId;
  }

  function parentAllowed(origin) {
    return parentOrigins.some(function (allowed) {
      return allowed === '*' || allowed === origin || (allowed === "'self'" && origin === location.origin);
    });
  }

  /** An http(s) address the API accepts, or undefined. */
  function pageAddress(value) {
    if (typeof value !== 'string' || !value || value.length > MAX_PAGE_URL) return undefined;
    return /^https?:\/\//i.test(value) ? value : undefined;
  }

  /** Where the visitor writes from: the embedding page when framed by the embed script, else this page. */
  function readPageDetails(page) {
    var language = navigator.language;
    pageDetails = {
      pageUrl: pageAddress(page ? page.url : location.href),
      referrer: pageAddress(page ? page.referrer : document.referrer),
      language: typeof language === 'string' && LANGUAGE_TAG.test(language) ? language : undefined,
    };
  }

  /** A visitor the site signed in may have talked on another device: their conversation is asked for at once. */
  function mayHaveConversation() {
    return started || !!identityToken;
  }

  /** Returns whether the conversation has just started (until then nothing was read back). */
  function setStarted() {
    if (started) return false;
    started = true;
    stored(visitorKey('started'), '1');
    if (embedded) window.parent.postMessage({ type: 'chat-widget:started' }, parentOrigin);
    if (!socket || !socket.connected) startPolling();
    showHandoff();
    return true;
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

  function updateMessage(item, message) {
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

  function nearBottom() {
    var box = elements.conversation;
    return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  }

  function scrollToNewest() {
    elements.conversation.scrollTop = elements.conversation.scrollHeight;
  }

  function keepAtNewest() {
    if (stickToNewest) scrollToNewest();
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
  function addMessage(message, source) {
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
      if (isMine(message)) stickToNewest = true;
      if (!isMine(message) && live && soundTab && source !== 'earlier') playSound();
    }
    if (!message.pending) newestMs = Math.max(newestMs, timeOf(message));
    elements.greeting.hidden = known.size > 0 || !elements.greeting.textContent;
    // The other tabs of this visitor show it too (they de-duplicate by messageSid as well).
    if (channel && (!source || source === 'batch') && changed) channel.postMessage({ type: 'message', message: known.get(message.messageSid).message });
    if (source !== 'batch' && source !== 'earlier') settle();
  }

  function addMessages(messages, source) {
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

  /** The time of the oldest message the server has given, or null. */
  function oldestShownMs() {
    var oldest = null;
    known.forEach(function (entry) {
      if (!entry.message.pending && (oldest === null || timeOf(entry.message) < oldest)) oldest = timeOf(entry.message);
    });
    return oldest;
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
    api('/chat-widget-messages?' + query({ fromId: visitorId, toId: configId, before: String(oldest + 1) }))
      .then(function (response) {
        if (!response.ok) throw new Error('Earlier messages could not be loaded. Please try again.');
        return response.json();
      })
      .then(function (body) {
        var messages = body.messages || [];
        var box = elements.conversation;
        var fromBottom = box.scrollHeight - box.scrollTop;
        var had = known.size;
        stickToNewest = false;
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

  function setStatus(messageSid, status) {
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
    if (embedded) window.parent.postMessage({ type: 'chat-widget:unread', count: count }, parentOrigin);
  }

  // A short beep as WAV (8 kHz, 8-bit): no file to fetch, nothing to cache.
  var beep = null;
  function playSound() {
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
  function electSoundTab() {
    var ringAnyway = function () { soundTab = true; }; // no locks here: every tab rings
    try {
      navigator.locks.request(visitorKey('sound'), function () {
        soundTab = true;
        return new Promise(function () {});
      }).catch(ringAnyway);
    } catch (error) {
      ringAnyway();
    }
  }

  /** The bot or a person typing, in a polite live region: filled while on, so screen readers announce it. */
  function setTyping(isBotTyping) {
    typingShown = !!isBotTyping;
    var text = typingShown ? title + ' is typing…' : '';
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

  function showNotice(text) {
    elements.notice.textContent = text;
    elements.notice.hidden = !text;
  }

  /** Said to screen readers only (a polite status). */
  function announce(text) {
    elements.announce.textContent = text;
  }

  /** fetch rejects with a TypeError when the network is down; other failures carry a sentence for the visitor. */
  function failureText(error) {
    return error instanceof TypeError ? 'You appear to be offline. Please try again.' : String(error.message);
  }

  function setConnection(text) {
    elements.connection.textContent = text;
  }

  // ---- talking to the API -----------------------------------------------------------

  /** Every call carries the site's identity token, when it gave one. */
  function api(path, options) {
    var init = Object.assign({ credentials: 'omit', cache: 'no-store' }, options);
    var headers = Object.assign({}, init.headers);
    if (identityToken) headers['X-Visitor-Identity'] = identityToken;
    init.headers = headers;
    return fetch(apiBase + path, init);
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
        // The widget requires visitors the site has signed in (settings.identityVerification).
        if (response.status === 401) throw new Error('Please sign in on this site to chat.');
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
    // The text colours the server chose for these colours (at least 4.5:1 on each).
    var foreground = data.foreground || {};
    var root = document.documentElement.style;
    [
      ['--primary', colors.primary],
      ['--background', colors.background],
      ['--text', colors.text],
      ['--bubble-mine', colors.visitorBubble],
      ['--bubble-theirs', colors.botBubble],
      ['--on-primary', foreground.primary],
      ['--on-bubble-mine', foreground.visitorBubble],
      ['--on-bubble-theirs', foreground.botBubble],
      ['--text', foreground.background],
      ['--muted', foreground.muted],
    ].forEach(function (pair) {
      if (typeof pair[1] === 'string' && CSS.supports('color', pair[1])) root.setProperty(pair[0], pair[1]);
    });
    if (data.title) {
      title = data.title;
      elements.title.textContent = data.title;
      document.title = data.title;
    }
    if (data.greeting) elements.greeting.textContent = data.greeting;
    elements.greeting.hidden = known.size > 0 || !data.greeting;
    handoffOffered = data.handoffButton !== false;
    showHandoff();
    // The embed script places and colours its launcher from this (public fields only).
    if (inFrame) {
      window.parent.postMessage(
        { type: 'chat-widget:config', position: data.position, primary: colors.primary, onPrimary: foreground.primary, title: data.title },
        '*',
      );
    }
  }

  /**
   * Reads the conversation: the newest messages the first time (with "Load earlier messages"
   * when there are more), then everything after the newest message held; concurrent calls
   * coalesce.
   */
  function refetch(exactAfterMs) {
    if (!mayHaveConversation()) return Promise.resolve();
    if (fetching) {
      fetchAgain = true;
      return Promise.resolve();
    }
    fetching = true;
    var nextPageAfter = null;
    var newest = !newestRead && exactAfterMs === undefined;
    var after = exactAfterMs !== undefined ? String(exactAfterMs) : newestMs ? String(Math.max(0, newestMs - REFETCH_OVERLAP_MS)) : undefined;
    var range = newest ? { before: String(Date.now() + NEWEST_MARGIN_MS) } : { after: after };
    return api('/chat-widget-messages?' + query(Object.assign({ fromId: visitorId, toId: configId }, range)))
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
        if (!socket || !socket.connected) setConnection(navigator.onLine === false ? 'Offline' : '');
      })
      .catch(function () {
        setConnection('Offline');
      })
      .then(function () {
        fetching = false;
        if (nextPageAfter !== null) return refetch(nextPageAfter);
        live = true;
        if (fetchAgain) {
          fetchAgain = false;
          return refetch();
        }
      });
  }

  /** Marks the replies read once the visitor can see them. */
  function markReadIfVisible() {
    if (!panelOpen || document.visibilityState !== 'visible' || markingRead || !visitorId) return;
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

  // ---- the outbox -------------------------------------------------------------------
  // Every message goes through it: kept in storage until the server has it, sent in order,
  // again on reconnect; a reloaded page sends what the storage still holds. Its client-made
  // messageSid makes a resend harmless (after a lost answer, or by two tabs): the server
  // stores a messageSid once.

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
    if (embedded) window.parent.postMessage(Object.assign({ type: 'chat-widget:outbox' }, change), parentOrigin);
    else stored(visitorKey('outbox'), outboxItems.length ? JSON.stringify(outboxItems) : null);
  }
  function storedOutbox() {
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

  function pendingMessage(item) {
    return { messageSid: item.messageSid, body: item.body, timestamp: item.timestamp, type: 'text', direction: 'inbound', status: 'sending', pending: true };
  }

  function send(text) {
    var item = { messageSid: 'wm_' + randomId(16), body: text, timestamp: new Date().toISOString() };
    enqueue(item);
    addMessage(pendingMessage(item));
    showNotice('');
    flush();
  }

  function flush() {
    if (!visitorId || !userId) return;
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
    return api('/incoming-chat-widget-message?' + query({ userId: userId }), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        messageType: 'text',
        customData: Object.assign({ body: item.body, fromId: visitorId, toId: configId, messageSid: messageSid }, pageDetails),
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
        unqueue(messageSid);
        if (!response.ok) {
          markFailed(messageSid);
          return undefined;
        }
        return response.json().catch(function () { return null; }).then(function () {
          // Later copies of the message (socket, polls) carry the messageSid sent with it.
          var entry = known.get(messageSid);
          if (entry) addMessage(Object.assign({}, entry.message, { pending: false, status: entry.message.status === 'sending' ? 'sent' : entry.message.status }));
          // The first message's answer may have been sent before the socket joined its room,
          // and a socket that connected before then read nothing back: read it once now.
          var first = setStarted();
          if (first || !socket || !socket.connected) refetch();
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

  function removeMessage(messageSid) {
    var entry = known.get(messageSid);
    if (!entry) return;
    entry.element.remove();
    known.delete(messageSid);
    settle();
  }

  // ---- staying current --------------------------------------------------------------

  function startPolling() {
    if (!pollTimer && mayHaveConversation()) pollTimer = setInterval(refetch, POLL_MS);
  }

  function stopPolling() {
    if (pollTimer) clearInterval(pollTimer);
    pollTimer = null;
  }

  function socketAuth() {
    var auth = { configId: configId, visitorId: visitorId };
    if (identityToken) auth.identityToken = identityToken;
    return auth;
  }

  function connectSocket() {
    // No Socket.IO client (blocked, or the server has none): polling alone keeps the page current.
    if (typeof window.io !== 'function') {
      startPolling();
      return;
    }
    // WebSocket first: a long-polling handshake behind several API processes needs a sticky
    // balancer, a WebSocket does not; polling stays as the fallback.
    socket = window.io({ path: '/socket.io', transports: ['websocket', 'polling'], auth: socketAuth() });
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

  function setIdentity(token) {
    token = typeof token === 'string' && token ? token : null;
    if (token === identityToken) return;
    identityToken = token;
    // A signed-in visitor's conversation may be another device's: read its newest messages.
    newestRead = false;
    if (socket) {
      socket.auth = socketAuth();
      socket.disconnect().connect();
    }
    refetch();
    flush();
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
    flush();
  });
  document.addEventListener('visibilitychange', markReadIfVisible);

  // ---- talking to a person ---------------------------------------------------------

  function showHandoff() {
    elements.actions.hidden = !(handoffOffered && started);
  }

  var handingOff = false;
  /** POST /chat-widget-handoff: the bot stops and a person is alerted; the hand-off message arrives like any reply. */
  elements.handoff.addEventListener('click', function () {
    if (handingOff || !visitorId) return;
    handingOff = true;
    elements.handoff.setAttribute('aria-disabled', 'true');
    showNotice('');
    api('/chat-widget-handoff', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fromId: visitorId, toId: configId }),
    })
      .then(function (response) {
        if (response.status === 401) throw new Error('Please sign in on this site to chat.');
        if (response.status === 429) throw new Error('You have asked already. Please wait a moment.');
        if (!response.ok) throw new Error('We could not reach a person just now. Please try again.');
        announce('A person has been asked to join the conversation.');
        if (!socket || !socket.connected) refetch();
      })
      .catch(function (error) {
        showNotice(failureText(error));
      })
      .then(function () {
        handingOff = false;
        elements.handoff.removeAttribute('aria-disabled');
      });
  });

  // ---- the conversation's scroll ------------------------------------------------------

  elements.earlier.addEventListener('click', loadEarlier);
  elements.conversation.addEventListener('scroll', function () {
    stickToNewest = nearBottom();
  });
  // Whatever changes the conversation's height (a message, an image loading, the typing line,
  // the panel opening after the page loaded hidden) keeps the newest message in view.
  if (typeof ResizeObserver === 'function') {
    var resized = new ResizeObserver(keepAtNewest);
    [elements.conversation, elements.messages, elements.typing, elements.delivered].forEach(function (element) { resized.observe(element); });
  }

  // ---- the composer and the frame ---------------------------------------------------

  elements.composer.addEventListener('submit', function (event) {
    event.preventDefault();
    var text = elements.text.value.trim();
    if (!text || !visitorId) return;
    elements.text.value = '';
    resizeComposer();
    elements.text.focus();
    // Queued even when the configuration (the owner, whom it is sent to) has not loaded yet:
    // it goes once it has.
    send(text);
    if (!userId) loadConfig().then(flush, function (error) { showNotice(failureText(error)); });
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

  // The account sees the visitor typing: said at most every TYPING_REPORT_MS while they type,
  // and once when they pause or send (the server keeps the same pace whatever a page sends).
  var TYPING_REPORT_MS = 2500;
  var TYPING_PAUSE_MS = 3000;
  var typingReportedAt = 0;
  var typingPause = null;
  function reportTyping(typing) {
    // Before their first message a visitor is nobody the account can see: nothing to tell.
    if (!started || !socket || !socket.connected) return;
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
    socket.emit('typing', { typing: typing });
  }
  elements.text.addEventListener('input', function () {
    reportTyping(!!elements.text.value.trim());
  });
  elements.composer.addEventListener('submit', function () { reportTyping(false); });

  if (inFrame) {
    elements.close.hidden = false;
    elements.close.addEventListener('click', function () {
      window.parent.postMessage({ type: 'chat-widget:close' }, '*');
    });
  }
  window.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && inFrame) window.parent.postMessage({ type: 'chat-widget:close' }, '*');
  });

  /** Everything that needs the visitor: the conversation, the outbox, the other tabs, the socket. */
  function begin(id, token, startedBefore, queued) {
    visitorId = id;
    identityToken = typeof token === 'string' && token ? token : null;
    started = !!startedBefore || !!stored(visitorKey('started'));
    try {
      channel = new BroadcastChannel(visitorKey('tabs'));
      channel.onmessage = function (event) {
        var data = event.data || {};
        if (data.type === 'message' && data.message) {
          if (isMine(data.message) && !data.message.pending) setStarted();
          addMessage(data.message, 'tab');
          markReadIfVisible();
        }
      };
    } catch (error) {
      channel = null; // the socket still brings every tab the conversation's messages
    }
    if (!embedded) electSoundTab();
    // Messages queued before a reload or while offline show as sending until they go.
    outboxItems = (queued || []).filter(validItem);
    outboxItems.forEach(function (item) { addMessage(pendingMessage(item)); });
    if (!mayHaveConversation()) live = true;
    loadConfig()
      .catch(function (error) {
        showNotice(failureText(error));
      })
      .then(function () {
        refetch();
        connectSocket();
        flush();
      });
  }

  if (embedded) {
    // The embed script answers with the visitor it keeps in the site's storage; only the
    // parent window, from an origin allowed to frame this widget, is heard.
    window.addEventListener('message', function (event) {
      if (event.source !== window.parent || !parentAllowed(event.origin)) return;
      var data = event.data || {};
      if (data.type === 'chat-widget:visitor' && !visitorId && typeof data.visitorId === 'string' && VISITOR_ID.test(data.visitorId)) {
        parentOrigin = event.origin === 'null' ? '*' : event.origin; // an opaque (sandboxed) parent has no origin to name
        panelOpen = !!data.open;
        // Opened before the page had loaded: the visitor (on a keyboard too) can type at once.
        if (panelOpen) elements.text.focus();
        soundTab = !!data.sound;
        readPageDetails(data.page && typeof data.page === 'object' ? data.page : {});
        begin(data.visitorId, data.identityToken, data.started, Array.isArray(data.outbox) ? data.outbox : []);
      } else if (data.type === 'chat-widget:sound') {
        soundTab = true;
      } else if (data.type === 'chat-widget:identity' && visitorId) {
        setIdentity(data.identityToken);
      } else if (data.type === 'chat-widget:opened') {
        panelOpen = true;
        // Opened at the newest message, the one the unread count was about.
        stickToNewest = true;
        scrollToNewest();
        elements.text.focus();
        markReadIfVisible();
      } else if (data.type === 'chat-widget:closed') {
        panelOpen = false;
      }
    });
    window.parent.postMessage({ type: 'chat-widget:ready' }, '*');
  } else {
    visitorId = ownVisitorId();
    readPageDetails(null);
    begin(visitorId, null, false, storedOutbox());
  }
})();
