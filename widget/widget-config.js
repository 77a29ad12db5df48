// The widget's public configuration (GET /chat-widget-config): its owner, colours, title,
// greeting and hand-off action; the embed script gets what it needs for its launcher.
import { api, query } from './widget-api.js';
import { known } from './widget-conversation.js';
import { offerHandoff } from './widget-handoff.js';
import { configId, elements, inFrame, state } from './widget-state.js';

export function loadConfig() {
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
  state.userId = data.userId;
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
    state.title = data.title;
    elements.title.textContent = data.title;
    document.title = data.title;
  }
  if (data.greeting) elements.greeting.textContent = data.greeting;
  elements.greeting.hidden = known.size > 0 || !data.greeting;
  offerHandoff(data.handoffButton !== false);
  // The embed script places and colours its launcher from this (public fields only).
  if (inFrame) {
    window.parent.postMessage(
      { type: 'chat-widget:config', position: data.position, primary: colors.primary, onPrimary: foreground.primary, title: data.title },
      '*',
    );
  }
}
