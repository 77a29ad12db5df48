// The open conversation's messages: each shown once (a live copy and the stored one are the
// same message), in time order, with who wrote it, its time, its delivery state and its media.
// Everything is inserted as text; only http(s) addresses become links, only https images load.
import { timeElement, webAddress } from './inbox-details.js';

/** One shape for a stored message, a reply's answer and a live event's message. */
export function normalise(message) {
  return {
    id: message.id || message.messageSid,
    body: message.body || '',
    direction: message.direction,
    timestamp: message.timestamp,
    status: message.status,
    sender: message.sender || null,
    senderName: message.sender_name || null,
    mediaUrl: message.media_url || message.mediaUrl || null,
    mediaType: message.media_content_type || message.mediaContentType || null,
  };
}

export function previewOf(message) {
  return message.body || (message.mediaUrl ? 'Attachment' : '');
}

export function timeOf(message) {
  var ms = Date.parse(message.timestamp);
  return isNaN(ms) ? Date.now() : ms;
}

/** The last part of an address's path, for a link's text; the host when there is none. */
function fileName(address) {
  var url = new URL(address);
  var last = url.pathname.split('/').pop() || '';
  try {
    last = decodeURIComponent(last);
  } catch (error) {
    // shown as it is
  }
  return last || url.host;
}

function part(className) {
  var span = document.createElement('span');
  span.className = className;
  return span;
}

/** list: the <ol>; scroller: the element that scrolls it; contactName(): the open conversation's contact. */
export function createMessages(list, scroller, contactName) {
  /** messageSid -> { message, element } */
  var shown = new Map();

  /** Who wrote it, as the agent should read it. */
  function authorOf(message) {
    if (message.direction === 'inbound') return contactName();
    if (message.senderName) return message.senderName;
    if (message.sender === 'bot' || (message.direction === 'outbound' && !message.sender)) return 'Bot';
    if (message.sender === 'api') return 'API';
    if (!message.sender || message.sender === 'agent') return 'Team';
    return message.sender;
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
      // The stored copy says who wrote it better than the live one.
      if (message.sender) existing.message.sender = message.sender;
      shown.set(message.id, existing);
      renderMeta(existing);
      return;
    }
    var item = document.createElement('li');
    var mine = message.direction !== 'inbound';
    item.className = 'message ' + (mine ? 'outbound' : 'inbound');
    item.dataset.time = String(timeOf(message));
    item.appendChild(part('author'));
    if (message.body) {
      var bubble = document.createElement('div');
      bubble.className = 'bubble';
      bubble.textContent = message.body;
      item.appendChild(bubble);
    }
    var media = mediaOf(message);
    if (media) item.appendChild(media);
    item.appendChild(part('meta'));
    var entry = { message: message, element: item };
    shown.set(message.id, entry);
    var stick = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
    // In time order: after the last one not later than it.
    var before = null;
    for (var node = list.lastElementChild; node; node = node.previousElementSibling) {
      if (Number(node.dataset.time) <= timeOf(message)) break;
      before = node;
    }
    list.insertBefore(item, before);
    renderMeta(entry);
    if (stick || mine) scroller.scrollTop = scroller.scrollHeight;
  }

  /**
   * A message's media: a link, and for an image an inline picture. A visitor's image is shown
   * only when the agent asks: its address is the visitor's to choose, and loading it would tell
   * them the agent's address and when they read it.
   */
  function mediaOf(message) {
    var address = webAddress(message.mediaUrl);
    if (!address) return null;
    var box = document.createElement('div');
    box.className = 'media';
    var anchor = document.createElement('a');
    anchor.href = address;
    anchor.target = '_blank';
    anchor.rel = 'noopener noreferrer';
    var file = fileName(address);
    anchor.textContent = 'Attachment: ' + file + (message.mediaType ? ' (' + message.mediaType + ')' : '');
    box.appendChild(anchor);
    var isImage = /^image\//.test(message.mediaType || '') || /\.(png|jpe?g|gif|webp|avif)$/i.test(file);
    if (!isImage || address.indexOf('https:') !== 0) return box;
    function picture() {
      var image = document.createElement('img');
      image.src = address;
      image.alt = 'Image from ' + authorOf(message);
      image.referrerPolicy = 'no-referrer';
      image.loading = 'lazy';
      return image;
    }
    if (message.direction !== 'inbound') {
      box.insertBefore(picture(), anchor);
      return box;
    }
    var show = document.createElement('button');
    show.type = 'button';
    show.className = 'small';
    show.textContent = 'Show image';
    show.addEventListener('click', function () {
      var image = picture();
      box.replaceChild(image, show);
      image.tabIndex = -1;
      image.focus();
    });
    box.appendChild(show);
    return box;
  }

  function renderMeta(entry) {
    var message = entry.message;
    var status = message.direction === 'inbound' ? '' : message.status === 'read' ? ' · Read' : message.status === 'failed' ? ' · Not sent' : ' · Sent';
    entry.element.querySelector('.author').textContent = authorOf(message);
    var meta = entry.element.querySelector('.meta');
    meta.textContent = '';
    meta.appendChild(timeElement(new Date(timeOf(message)).toISOString(), { hour: '2-digit', minute: '2-digit' }));
    meta.appendChild(document.createTextNode(status));
    entry.element.classList.toggle('read', message.status === 'read');
  }

  return {
    /** A message in normalise()'s shape; one already shown only updates its state. */
    add: addMessage,
    /** The visitor's widget reported these replies read. */
    read: function (messageSids) {
      messageSids.forEach(function (sid) {
        var entry = shown.get(sid);
        if (entry) {
          entry.message.status = 'read';
          renderMeta(entry);
        }
      });
    },
    clear: function () {
      shown.clear();
      list.textContent = '';
    },
  };
}
