// What the widget page's concerns share: the page's own facts (from its HTML and its URL),
// its elements, and the visitor's state as it changes. Each concern keeps the rest to itself.

var page = document.body.dataset;
export var configId = page.configId;
export var apiBase = page.apiBase || '/v1';
export var inFrame = window.parent !== window;
// Framed by the embed script (#embed): the visitor id, and the site's identity token, come
// from it by postMessage. Anywhere else (a link, a plain iframe) the page uses the id its own
// storage keeps; the URL's fromId segment is a tracking source and never an identity.
export var embedded = inFrame && location.hash === '#embed';
export var parentOrigins = (page.parentOrigins || '').split(/\s+/);

export var elements = {
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

export var state = {
  // The embed script's origin, once it has introduced itself: what the page tells it about the
  // visitor (their queued messages, the unread count) goes there only.
  parentOrigin: null,
  visitorId: null,
  identityToken: null,
  // The widget's owner, from its configuration: whom the visitor's messages are sent to.
  userId: null,
  // Sent with each message, kept with the visitor's contact: the page, its referrer, the language.
  pageDetails: {},
  // Whether this visitor has a conversation: until then nothing is fetched (it would be a 404).
  started: false,
  // Whether the visitor can see the conversation: replies are marked read only then.
  panelOpen: !embedded,
  // Set once the conversation held when the page opened is shown: later replies are new (sound).
  caughtUp: false,
  // Whether this tab plays the new-reply sound (one tab of the visitor's does).
  soundTab: false,
  // The visitor's other tabs (BroadcastChannel), when the browser has one.
  channel: null,
  socket: null,
  // Kept at the newest message until the visitor scrolls up; opening the panel comes back to it.
  stickToNewest: true,
  // The widget's title, once its configuration has loaded: who is typing.
  title: 'Chat',
};

/** The page's own storage (partitioned by site when framed); null when blocked. */
export function stored(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else if (value !== undefined) localStorage.setItem(key, value);
    return localStorage.getItem(key);
  } catch (error) {
    return null;
  }
}

export function visitorKey(name) {
  return 'chat-widget:' + name + ':' + configId + ':' + state.visitorId;
}

/** A visitor the site signed in may have talked on another device: their conversation is asked for at once. */
export function mayHaveConversation() {
  return state.started || !!state.identityToken;
}

export function socketConnected() {
  return !!state.socket && state.socket.connected;
}
