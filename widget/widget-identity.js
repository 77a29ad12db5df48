// Who the visitor is and where they write from. Framed by the embed script, the visitor id
// comes from it (the entry hears it); opened on its own, the page keeps an id of its own.
import { configId, parentOrigins, state, stored } from './widget-state.js';

export var VISITOR_ID = /^[A-Za-z0-9_-]{8,128}$/;
// What a visitor message may report of the page (the API refuses longer or other addresses).
var MAX_PAGE_URL = 2000;
var LANGUAGE_TAG = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,7}$/;

export function randomId(bytes) {
  var data = new Uint8Array(bytes);
  crypto.getRandomValues(data);
  var hex = '';
  for (var i = 0; i < data.length; i++) hex += (data[i] + 256).toString(16).slice(1);
  return hex;
}

/** The id this browser keeps for the widget: 128 random bits, made on the first visit. */
export function ownVisitorId() {
  var key = 'chat-widget:visitor:' + configId;
  var id = stored(key);
  if (id && VISITOR_ID.test(id)) return id;
  id = randomId(16);
  return stored(key, id) || id; // storage blocked: a visitor for this page view only
}

export function parentAllowed(origin) {
  return parentOrigins.some(function (allowed) {
    return allowed === '*' || allowed === origin || (allowed === "'self'" && origin === location.origin);
  });
}

/** An http(s) address the API accepts, or undefined. */
function pageAddress(value) {
  if (typeof value !== 'string' || !value || value.length > MAX_PAGE_URL) return undefined;
  return /^https?:\/\//i.test(value) ? value : undefined;
}

/** Where the visitor writes from: the embedding page when framed by the embed script, else this page. */
export function readPageDetails(page) {
  var language = navigator.language;
  state.pageDetails = {
    pageUrl: pageAddress(page ? page.url : location.href),
    referrer: pageAddress(page ? page.referrer : document.referrer),
    language: typeof language === 'string' && LANGUAGE_TAG.test(language) ? language : undefined,
  };
}
