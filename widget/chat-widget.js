// The embed script. A site adds one tag:
//   <script src="https://HOST/v1/scripts/chat-widget.js" data-widget-id="cw_..." async></script>
// and gets a launcher button that opens the widget page (/v1/chat-widget/{id}) in an iframe.
// It runs inside someone else's page, so: one closure, one global (window.ChatWidget),
// styles set through element.style (allowed by a site CSP without 'unsafe-inline'), no
// cookies; two localStorage entries, the visitor id (see visitorPath) and the last config.
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
  var pageUrl = new URL('chat-widget/' + encodeURIComponent(widgetId) + visitorPath(), apiBase).href;

  var position = script.getAttribute('data-position') === 'bottom-left' ? 'bottom-left' : 'bottom-right';
  var accent = '#2563eb';
  var title = 'Chat';
  var isOpen = false;
  var frame = null;
  var smallScreen = window.matchMedia('(max-width: 479.98px)');

  var launcher = document.createElement('button');
  launcher.type = 'button';
  launcher.setAttribute('aria-label', 'Open chat');
  launcher.setAttribute('aria-expanded', 'false');
  launcher.setAttribute('aria-haspopup', 'dialog');
  launcher.appendChild(chatIcon());
  setStyle(launcher, {
    position: 'fixed', bottom: '20px', zIndex: '2147483000', width: '56px', height: '56px',
    borderRadius: '50%', border: '0', padding: '0', margin: '0', cursor: 'pointer',
    display: 'flex', alignItems: 'center', justifyContent: 'center', color: '#fff',
    boxShadow: '0 4px 14px rgba(0,0,0,.25)', outlineOffset: '3px',
  });
  launcher.addEventListener('click', function () { toggle(); });

  var panel = document.createElement('div');
  setStyle(panel, {
    position: 'fixed', zIndex: '2147483001', display: 'none', overflow: 'hidden',
    background: '#fff', boxShadow: '0 8px 30px rgba(0,0,0,.25)',
  });

  // The visitor id is kept here, in the site's own (first-party) storage, and handed to the page
  // as its fromId: browsers that block or partition a third-party frame's storage would
  // otherwise give the visitor a new id, and an empty conversation, on every page load.
  function visitorPath() {
    var key = 'chat-widget:visitor:' + widgetId;
    try {
      var id = localStorage.getItem(key);
      if (!id || !/^[A-Za-z0-9_-]{8,128}$/.test(id)) {
        var bytes = new Uint8Array(18);
        crypto.getRandomValues(bytes);
        id = btoa(String.fromCharCode.apply(null, bytes)).replace(/\+/g, '-').replace(/\//g, '_');
        localStorage.setItem(key, id);
      }
      return '/' + id;
    } catch (error) {
      return ''; // no storage here either: the page keeps its own id
    }
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

  function open() {
    if (!frame) {
      frame = document.createElement('iframe');
      frame.src = pageUrl;
      frame.title = title;
      frame.setAttribute('allow', 'clipboard-write');
      setStyle(frame, { border: '0', width: '100%', height: '100%', display: 'block' });
      // Until it loads, the frame holds a blank page of the site's origin: tell the page once it is there.
      frame.addEventListener('load', function () { if (isOpen) post({ type: 'chat-widget:opened' }); });
      panel.appendChild(frame);
    } else {
      post({ type: 'chat-widget:opened' });
    }
    isOpen = true;
    panel.style.display = 'block';
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', 'Close chat');
    layout();
    frame.focus();
  }

  function close() {
    if (!isOpen) return;
    isOpen = false;
    panel.style.display = 'none';
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', 'Open chat');
    layout();
    launcher.focus();
  }

  function toggle() {
    if (isOpen) close();
    else open();
  }

  function post(message) {
    if (frame && frame.contentWindow) frame.contentWindow.postMessage(message, widgetOrigin);
  }

  // The page says how it looks (position, colour, title) and asks to close; only our own iframe is heard.
  window.addEventListener('message', function (event) {
    if (!frame || event.source !== frame.contentWindow || event.origin !== widgetOrigin) return;
    var data = event.data || {};
    if (data.type === 'chat-widget:close') close();
    if (data.type === 'chat-widget:config') {
      applyConfig(data);
      rememberConfig(data);
    }
  });

  // Remembered for the next page load: the public config endpoint is not readable cross-origin,
  // so the first load shows the default corner and colour until the page has said its own.
  var configKey = 'chat-widget:config:' + widgetId;
  function rememberConfig(config) {
    try {
      localStorage.setItem(configKey, JSON.stringify({ position: config.position, primary: config.primary, title: config.title }));
    } catch (error) {
      // no storage: the defaults again next time
    }
  }
  function rememberedConfig() {
    try {
      return JSON.parse(localStorage.getItem(configKey) || 'null');
    } catch (error) {
      return null;
    }
  }

  function applyConfig(config) {
    if (config.position === 'bottom-left' || config.position === 'bottom-right') position = config.position;
    if (typeof config.primary === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(config.primary)) accent = config.primary;
    if (typeof config.title === 'string' && config.title) {
      title = config.title;
      if (frame) frame.title = title;
    }
    layout();
  }

  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && isOpen) close();
  });
  if (smallScreen.addEventListener) smallScreen.addEventListener('change', layout);

  function mount() {
    var remembered = rememberedConfig();
    // The tag's own data-position wins over what the widget said last time.
    if (remembered) {
      if (script.hasAttribute('data-position')) remembered.position = position;
      applyConfig(remembered);
    }
    document.body.appendChild(panel);
    document.body.appendChild(launcher);
    layout();
  }
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);

  window.ChatWidget = { widgetId: widgetId, open: open, close: close, toggle: toggle };
})();
