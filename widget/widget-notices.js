// What the page says about itself: the connection line, a notice for the visitor, and what
// only screen readers hear.
import { elements } from './widget-state.js';

export function showNotice(text) {
  elements.notice.textContent = text;
  elements.notice.hidden = !text;
}

/** Said to screen readers only (a polite status). */
export function announce(text) {
  elements.announce.textContent = text;
}

/** fetch rejects with a TypeError when the network is down; other failures carry a sentence for the visitor. */
export function failureText(error) {
  return error instanceof TypeError ? 'You appear to be offline. Please try again.' : String(error.message);
}

export function setConnection(text) {
  elements.connection.textContent = text;
}
