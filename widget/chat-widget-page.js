// The chat widget page's behaviour, as ES modules by concern (no build step): this entry
// learns who the visitor is and wires the rest. The page opens at the newest messages (earlier
// ones are loaded on demand) and stays at the bottom while the visitor has not scrolled up
// (widget-scroll.js). Messages arrive over Socket.IO (widget-live.js); the page reads the
// conversation back whenever it may have missed something, and polls while the socket is down
// (widget-sync.js). What the visitor writes waits in an outbox until the server has it
// (widget-outbox.js). The tabs of one visitor share what they show (BroadcastChannel) and one
// of them plays the new-reply sound (widget-sound.js).
// Everything from the server or the visitor is inserted as text, never as HTML.
import { loadConfig } from './widget-config.js';
import { listenToComposer, listenToFrame } from './widget-composer.js';
import { addMessage, isMine } from './widget-conversation.js';
import { listenForHandoff } from './widget-handoff.js';
import { ownVisitorId, parentAllowed, readPageDetails, VISITOR_ID } from './widget-identity.js';
import { connectSocket, setIdentity, watchNetwork } from './widget-live.js';
import { failureText, showNotice } from './widget-notices.js';
import { flush, restoreOutbox, setStarted, storedOutbox } from './widget-outbox.js';
import { followScroll, scrollToNewest } from './widget-scroll.js';
import { electSoundTab } from './widget-sound.js';
import { elements, embedded, mayHaveConversation, state, stored, visitorKey } from './widget-state.js';
import { markReadIfVisible, offerEarlier, refetch } from './widget-sync.js';

watchNetwork();
listenForHandoff();
offerEarlier();
followScroll();
listenToComposer();
listenToFrame();

/** Everything that needs the visitor: the conversation, the outbox, the other tabs, the socket. */
function begin(id, token, startedBefore, queued) {
  state.visitorId = id;
  state.identityToken = typeof token === 'string' && token ? token : null;
  state.started = !!startedBefore || !!stored(visitorKey('started'));
  try {
    state.channel = new BroadcastChannel(visitorKey('tabs'));
    state.channel.onmessage = function (event) {
      var data = event.data || {};
      if (data.type === 'message' && data.message) {
        if (isMine(data.message) && !data.message.pending) setStarted();
        addMessage(data.message, 'tab');
        markReadIfVisible();
      }
    };
  } catch (error) {
    state.channel = null; // the socket still brings every tab the conversation's messages
  }
  if (!embedded) electSoundTab();
  restoreOutbox(queued || []);
  if (!mayHaveConversation()) state.caughtUp = true;
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
    if (data.type === 'chat-widget:visitor' && !state.visitorId && typeof data.visitorId === 'string' && VISITOR_ID.test(data.visitorId)) {
      state.parentOrigin = event.origin === 'null' ? '*' : event.origin; // an opaque (sandboxed) parent has no origin to name
      state.panelOpen = !!data.open;
      // Opened before the page had loaded: the visitor (on a keyboard too) can type at once.
      if (state.panelOpen) elements.text.focus();
      state.soundTab = !!data.sound;
      readPageDetails(data.page && typeof data.page === 'object' ? data.page : {});
      begin(data.visitorId, data.identityToken, data.started, Array.isArray(data.outbox) ? data.outbox : []);
    } else if (data.type === 'chat-widget:sound') {
      state.soundTab = true;
    } else if (data.type === 'chat-widget:identity' && state.visitorId) {
      setIdentity(data.identityToken);
    } else if (data.type === 'chat-widget:opened') {
      state.panelOpen = true;
      // Opened at the newest message, the one the unread count was about.
      state.stickToNewest = true;
      scrollToNewest();
      elements.text.focus();
      markReadIfVisible();
    } else if (data.type === 'chat-widget:closed') {
      state.panelOpen = false;
    }
  });
  window.parent.postMessage({ type: 'chat-widget:ready' }, '*');
} else {
  state.visitorId = ownVisitorId();
  readPageDetails(null);
  begin(state.visitorId, null, false, storedOutbox());
}
