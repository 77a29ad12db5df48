// The conversation's scroll: it stays at the newest message while the visitor has not
// scrolled up (state.stickToNewest), whatever changes its height.
import { elements, state } from './widget-state.js';

function nearBottom() {
  var box = elements.conversation;
  return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
}

export function scrollToNewest() {
  elements.conversation.scrollTop = elements.conversation.scrollHeight;
}

export function keepAtNewest() {
  if (state.stickToNewest) scrollToNewest();
}

export function followScroll() {
  elements.conversation.addEventListener('scroll', function () {
    state.stickToNewest = nearBottom();
  });
  // Whatever changes the conversation's height (a message, an image loading, the typing line,
  // the panel opening after the page loaded hidden) keeps the newest message in view.
  if (typeof ResizeObserver === 'function') {
    var resized = new ResizeObserver(keepAtNewest);
    [elements.conversation, elements.messages, elements.typing, elements.delivered].forEach(function (element) { resized.observe(element); });
  }
}
