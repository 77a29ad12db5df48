// Talking to a person: the "Talk to a person" action (settings.handoffButton), offered once
// the visitor has a conversation. The hand-off message arrives like any reply.
import { api } from './widget-api.js';
import { announce, failureText, showNotice } from './widget-notices.js';
import { configId, elements, socketConnected, state } from './widget-state.js';
import { refetch } from './widget-sync.js';

var handoffOffered = false;
var handingOff = false;

export function showHandoff() {
  elements.actions.hidden = !(handoffOffered && state.started);
}

/** Whether the widget's configuration offers the action. */
export function offerHandoff(offered) {
  handoffOffered = offered;
  showHandoff();
}

/** POST /chat-widget-handoff: the bot stops and a person is alerted. */
export function listenForHandoff() {
  elements.handoff.addEventListener('click', function () {
    if (handingOff || !state.visitorId) return;
    handingOff = true;
    elements.handoff.setAttribute('aria-disabled', 'true');
    showNotice('');
    api('/chat-widget-handoff', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fromId: state.visitorId, toId: configId }),
    })
      .then(function (response) {
        if (response.status === 401) throw new Error('Please sign in on this site to chat.');
        if (response.status === 429) throw new Error('You have asked already. Please wait a moment.');
        if (!response.ok) throw new Error('We could not reach a person just now. Please try again.');
        announce('A person has been asked to join the conversation.');
        if (!socketConnected()) refetch();
      })
      .catch(function (error) {
        showNotice(failureText(error));
      })
      .then(function () {
        handingOff = false;
        elements.handoff.removeAttribute('aria-disabled');
      });
  });
}
