// The account's conversation feed: the tRPC subscription chatWidgets.onConversationEvent over
// the /trpc WebSocket, spoken directly (tRPC's JSON frames; the credential goes in the first
// frame as connectionParams, never in the URL, which proxies may log). It reports its state
// honestly: "offline" while the browser has no network (navigator.onLine), "reconnecting" while
// the socket is down or has gone silent, "live" once the subscription has started. The server
// pings every 30 s, so a socket that has heard nothing for SILENT_MS is taken for dead (a
// sleeping laptop, a dropped Wi-Fi) rather than shown as live.

var SUBSCRIPTION_PATH = 'chatWidgets.onConversationEvent';
var SILENT_MS = 45000;
var WATCH_EVERY_MS = 5000;

/**
 * handlers: params() (the connectionParams frame's data), state(name, detail) with name one of
 * '', 'connecting', 'live', 'reconnecting', 'offline', 'refused'; started() after every
 * (re)subscription; event(data); refused(status) when the credential is not accepted.
 */
export function createLiveFeed(handlers) {
  var socket = null;
  var running = false;
  var retry = 0;
  var retryTimer = null;
  var watchTimer = null;
  var lastHeard = 0;

  function setState(name, detail) {
    handlers.state(name, detail || '');
  }

  function connect() {
    clearTimeout(retryTimer);
    if (!running) return;
    if (!navigator.onLine) return setState('offline');
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/trpc?connectionParams=1';
    var ws = new WebSocket(url);
    socket = ws;
    lastHeard = Date.now();
    setState(retry ? 'reconnecting' : 'connecting');
    ws.onopen = function () {
      ws.send(JSON.stringify({ method: 'connectionParams', data: handlers.params() }));
      ws.send(JSON.stringify({ id: 1, method: 'subscription', params: { path: SUBSCRIPTION_PATH, input: {} } }));
    };
    ws.onmessage = function (frame) {
      if (socket !== ws) return;
      lastHeard = Date.now();
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
        drop();
        if (status === 401) handlers.refused(status);
        else setState('refused', message.error.message);
        return;
      }
      var result = message.result || {};
      if (result.type === 'started') {
        retry = 0;
        setState('live');
        handlers.started();
      } else if (result.type === 'data') {
        handlers.event(result.data);
      } else if (message.method === 'reconnect') {
        drop();
        connect();
      }
    };
    ws.onclose = function () {
      if (socket !== ws) return;
      socket = null;
      scheduleReconnect();
    };
  }

  function scheduleReconnect() {
    if (!running) return;
    if (!navigator.onLine) return setState('offline');
    setState('reconnecting');
    // Spread out, so a restarted server is not met by every console at once.
    var delay = Math.min(30000, 500 * Math.pow(2, retry)) * (0.75 + Math.random() / 2);
    retry += 1;
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, delay);
  }

  /** Forgets the socket without waiting for its close (a dead one may take minutes to report it). */
  function drop() {
    var ws = socket;
    socket = null;
    if (!ws) return;
    ws.onclose = null;
    ws.onmessage = null;
    try {
      ws.close();
    } catch (error) {
      // already closed
    }
  }

  function watch() {
    if (socket && Date.now() - lastHeard > SILENT_MS) {
      drop();
      scheduleReconnect();
    }
  }

  window.addEventListener('offline', function () {
    if (!running) return;
    drop();
    clearTimeout(retryTimer);
    setState('offline');
  });
  window.addEventListener('online', function () {
    if (!running) return;
    drop();
    retry = Math.max(retry, 1);
    connect();
  });

  return {
    start: function () {
      running = true;
      retry = 0;
      clearInterval(watchTimer);
      watchTimer = setInterval(watch, WATCH_EVERY_MS);
      connect();
    },
    stop: function () {
      running = false;
      clearInterval(watchTimer);
      clearTimeout(retryTimer);
      drop();
      setState('');
    },
  };
}
