// The embed script. A site adds one tag:
//   <script src="https://HOST/v1/scripts/chat-widget.js" data-widget-id="cw_..." async></script>
// and gets a launcher button, with a badge counting the replies the visitor has not seen, that
// opens the widget page (/v1/chat-widget/{id}) in an iframe, in a panel that is a labelled dialog.
// It runs inside someone else's page, so: one closure, one global object (window.chatWidget,
// also window.ChatWidget), styles set through element.style (allowed by a site CSP without
// 'unsafe-inline'), no cookies; localStorage holds the visitor id, whether that visitor has a
// conversation, the messages not yet sent, and the last config.
(function () {
  'use strict';
  if (window.ChatWidget && window.ChatWidget.widgetId) return; // the tag was added twice

  // `async` scripts still have currentScript while they run; the attribute query covers loaders that inject it.
  var script = document.currentScript || document.querySelector('script[data-widget-id]');
  var widgetId = script && script.getAttribute('data-widget-id');
  if (!widgetId) {
    if (window.console) console.warn('chat-widget.js: add data-widget-id="..." to the script tag');
    return;
  }
  // The page and its API live where this script came from: https://HOST/v1/.
  var apiBase = new URL('../', script.src);
  var widgetOrigin = apiBase.origin;
  // No visitor id in the URL: the page asks for it by postMessage (#embed says it is framed by
  // this script), so a link to the page can never carry someone else's id into a conversation.
  var pageUrl = new URL('chat-widget/' + encodeURIComponent(widgetId) + '#embed', apiBase).href;
  var keys = {};
  ['visitor', 'started', 'config', 'outbox'].forEach(function (name) { keys[name] = 'chat-widget:' + name + ':' + widgetId; });
  var visitorId = visitor();
  var identityToken = script.getAttribute('data-identity-token') || null;
  var unread = 0;
  var unreadListeners = [];

  var position = script.getAttribute('data-position') === 'bottom-left' ? 'bottom-left' : 'bottom-right';
  var accent = '#2563eb';
  // The icon and badge colour on the accent, chosen by the server for 4.5:1 contrast.
  var onAccent = '#fff';
  var title = 'Chat';
  var isOpen = false;
  var frame = null;
  var frameReady = false;
  var soundTab = false;
  var smallScreen = window.matchMedia('(max-width: 479.98px)');

  var panelId = 'chat-widget-panel-' + widgetId;
  var launcher = document.createElement('button');
  launcher.type = 'button';
  launcher.setAttribute('aria-expanded', 'false');
  launcher.setAttribute('aria-haspopup', 'dialog');
  launcher.setAttribute('aria-controls', panelId);
  launcher.appendChild(chatIcon());
  setStyle(launcher, {
    position: 'fixed', bottom: '20px', zIndex: '2147483000', width: '56px', height: '56px',
    borderRadius: '50%', border: '0', padding: '0', margin: '0', cursor: 'pointer',
    display: 'flex', alignItems: 'center', justifyContent: 'center', color: onAccent,
    boxShadow: '0 4px 14px rgba(0,0,0,.25)', outlineOffset: '3px',
  });
  launcher.addEventListener('click', function () { toggle(); });
  // The count is in the button's name; the badge shows it.
  var badge = document.createElement('span');
  badge.setAttribute('aria-hidden', 'true');
  setStyle(badge, {
    position: 'absolute', top: '-4px', right: '-4px', display: 'none', boxSizing: 'content-box',
    minWidth: '16px', height: '16px', padding: '0 4px', borderRadius: '10px', border: '2px solid',
    font: '700 11px/16px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', textAlign: 'center', pointerEvents: 'none',
  });
  launcher.appendChild(badge);
  showUnread();

  var panel = document.createElement('div');
  panel.id = panelId;
  panel.setAttribute('role', 'dialog');
  panel.setAttribute('aria-label', title);
  setStyle(panel, {
    position: 'fixed', zIndex: '2147483001', display: 'none', overflow: 'hidden',
    background: '#fff', boxShadow: '0 8px 30px rgba(0,0,0,.25)',
  });

  function stored(key, value) {
    try {
      if (value !== undefined) localStorage.setItem(key, value);
      return localStorage.getItem(key);
    } catch (error) {
      return null; // no storage: this page view only
    }
  }

  // The visitor id is kept here, in the site's own (first-party) storage: browsers that block or
  // partition a third-party frame's storage would otherwise give the visitor a new id, and an
  // empty conversation, on every page load. 128 random bits, as 32 hex digits.
  function visitor() {
    var id = stored(keys.visitor);
    if (id && /^[A-Za-z0-9_-]{8,128}$/.test(id)) return id;
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    id = '';
    for (var i = 0; i < 16; i++) id += (bytes[i] + 256).toString(16).slice(1);
    return stored(keys.visitor, id) || id;
  }

  function setStyle(element, styles) {
    for (var name in styles) element.style[name] = styles[name];
  }

  function chatIcon() {
    var ns = 'http://www.w3.org/2000/svg';
    var svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', '28');
    svg.setAttribute('height', '28');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('focusable', 'false');
    var path = document.createElementNS(ns, 'path');
    path.setAttribute('fill', 'currentColor');
    path.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z');
    svg.appendChild(path);
    return svg;
  }

  // Full screen on phones (under 480 px wide), a 380x600 panel beside the launcher otherwise.
  function layout() {
    var side = position === 'bottom-left' ? 'left' : 'right';
    var other = side === 'left' ? 'right' : 'left';
    launcher.style[side] = '20px';
    launcher.style[other] = '';
    launcher.style.background = accent;
    launcher.style.color = onAccent;
    // The badge in the launcher's colours the other way round, ringed with the accent.
    setStyle(badge, { background: onAccent, color: accent, borderColor: accent });
    if (smallScreen.matches) {
      setStyle(panel, { top: '0', left: '0', right: '0', bottom: '0', width: '100%', height: '100%', borderRadius: '0' });
    } else {
      setStyle(panel, { top: '', bottom: '88px', width: '380px', height: '600px', maxHeight: 'calc(100vh - 108px)', borderRadius: '12px' });
      panel.style[side] = '20px';
      panel.style[other] = '';
    }
    // On a phone the open panel covers the launcher; the page's own close button closes it.
    launcher.style.display = isOpen && smallScreen.matches ? 'none' : 'flex';
  }

  // Made on the first open, or at once for a visitor with a conversation or messages still to
  // send, so those go and replies arrive (unread count, sound) while the panel is closed.
  function makeFrame() {
    if (frame) return;
    frame = document.createElement('iframe');
    frame.src = pageUrl;
    frame.title = title;
    frame.setAttribute('allow', 'clipboard-write; autoplay');
    setStyle(frame, { border: '0', width: '100%', height: '100%', display: 'block' });
    panel.appendChild(frame);
    // One tab of the site plays the new-reply sound: the one holding this lock.
    var ring = function () {
      soundTab = true;
      post({ type: 'chat-widget:sound' });
    };
    try {
      navigator.locks.request('chat-widget:sound:' + widgetId, function () {
        ring();
        return new Promise(function () {});
      }).catch(ring);
    } catch (error) {
      ring();
    }
  }

  /** The messages the page has not got to the server yet, kept here so a reload or a closed tab loses none. */
  function outbox(change) {
    var list;
    try {
      list = JSON.parse(stored(keys.outbox) || '[]');
    } catch (error) {
      list = [];
    }
    if (change) {
      list = list.filter(function (item) { return item.messageSid !== change.remove && item.messageSid !== (change.add || {}).messageSid; });
      if (change.add) list.push(change.add);
      stored(keys.outbox, JSON.stringify(list));
    }
    return list;
  }

  function open() {
    makeFrame();
    post({ type: 'chat-widget:opened' });
    isOpen = true;
    panel.style.display = 'block';
    launcher.setAttribute('aria-expanded', 'true');
    showUnread();
    layout();
    frame.focus();
  }

  function close() {
    if (!isOpen) return;
    isOpen = false;
    post({ type: 'chat-widget:closed' });
    panel.style.display = 'none';
    launcher.setAttribute('aria-expanded', 'false');
    showUnread();
    layout();
    launcher.focus();
  }

  function toggle() {
    if (isOpen) close();
    else open();
  }

  function post(message) {
    if (frameReady) frame.contentWindow.postMessage(message, widgetOrigin);
  }

  /** The site's back end signed this token for its logged-in user; the page sends it with every call. */
  function identify(token) {
    identityToken = typeof token === 'string' && token ? token : null;
    post({ type: 'chat-widget:identity', identityToken: identityToken });
  }

  /** The launcher's name and badge: the replies the visitor has not seen, while the chat is closed. */
  function showUnread() {
    var shown = isOpen ? 0 : unread;
    var label = isOpen ? 'Close chat' : 'Open chat';
    if (shown > 0) label += ', ' + shown + (shown === 1 ? ' unread message' : ' unread messages');
    launcher.setAttribute('aria-label', label);
    badge.textContent = shown > 99 ? '99+' : String(shown);
    badge.style.display = shown > 0 ? 'block' : 'none';
  }

  function onUnreadCountChange(listener) {
    if (typeof listener !== 'function') return;
    unreadListeners.push(listener);
    listener(unread);
  }

  // Only our own iframe is heard: it asks for the visitor, says how it looks, asks to close,
  // reports the unread count and that the visitor now has a conversation.
  window.addEventListener('message', function (event) {
    if (!frame || event.source !== frame.contentWindow || event.origin !== widgetOrigin) return;
    var data = event.data || {};
    if (data.type === 'chat-widget:ready') {
      frameReady = true;
      post({
        type: 'chat-widget:visitor', visitorId: visitorId, identityToken: identityToken, open: isOpen,
        started: !!stored(keys.started), sound: soundTab, outbox: outbox(),
        // The page the visitor is on and where they came from: the framed page cannot read them.
        page: { url: location.href, referrer: document.referrer },
      });
    }
    if (data.type === 'chat-widget:outbox') outbox(data);
    if (data.type === 'chat-widget:close') close();
    if (data.type === 'chat-widget:started') stored(keys.started, '1');
    if (data.type === 'chat-widget:config') {
      applyConfig(data);
      rememberConfig(data);
    }
    if (data.type === 'chat-widget:unread' && typeof data.count === 'number' && data.count !== unread) {
      unread = data.count;
      showUnread();
      unreadListeners.forEach(function (listener) {
        try { listener(unread); } catch (error) { if (window.console) console.error(error); }
      });
    }
  });

  // Remembered for the next page load, so the launcher looks right at once; refreshed from the
  // public config endpoint on each load.
  function rememberConfig(config) {
    stored(keys.config, JSON.stringify({ position: config.position, primary: config.primary, onPrimary: config.onPrimary, title: config.title }));
  }
  function rememberedConfig() {
    try {
      return JSON.parse(stored(keys.config) || 'null');
    } catch (error) {
      return null;
    }
  }

  function applyConfig(config) {
    // The tag's own data-position wins over the widget's setting.
    if (!script.hasAttribute('data-position') && (config.position === 'bottom-left' || config.position === 'bottom-right')) position = config.position;
    if (typeof config.primary === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(config.primary)) accent = config.primary;
    if (typeof config.onPrimary === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(config.onPrimary)) onAccent = config.onPrimary;
    if (typeof config.title === 'string' && config.title) {
      title = config.title;
      panel.setAttribute('aria-label', title);
      if (frame) frame.title = title;
    }
    layout();
  }

  function fetchConfig() {
    fetch(new URL('chat-widget-config?configId=' + encodeURIComponent(widgetId), apiBase).href, { credentials: 'omit' })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (body) {
        var data = body && body.data;
        if (!data) return;
        var config = {
          position: data.position,
          primary: data.colors && data.colors.primary,
          onPrimary: data.foreground && data.foreground.primary,
          title: data.title,
        };
        applyConfig(config);
        rememberConfig(config);
      })
      .catch(function () {}); // the remembered look, or the defaults
  }

  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && isOpen) close();
  });
  if (smallScreen.addEventListener) smallScreen.addEventListener('change', layout);

  function mount() {
    var remembered = rememberedConfig();
    if (remembered) applyConfig(remembered);
    document.body.appendChild(panel);
    document.body.appendChild(launcher);
    layout();
    fetchConfig();
    if (stored(keys.started) || outbox().length) makeFrame();
  }
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);

  window.chatWidget = window.ChatWidget = {
    widgetId: widgetId, open: open, close: close, toggle: toggle, identify: identify, onUnreadCountChange: onUnreadCountChange,
  };
})();
