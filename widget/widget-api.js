// Talking to the API: every call goes to the page's API base, without cookies or the HTTP
// cache, and carries the site's identity token when it gave one.
import { apiBase, state } from './widget-state.js';

export function api(path, options) {
  var init = Object.assign({ credentials: 'omit', cache: 'no-store' }, options);
  var headers = Object.assign({}, init.headers);
  if (state.identityToken) headers['X-Visitor-Identity'] = state.identityToken;
  init.headers = headers;
  return fetch(apiBase + path, init);
}

export function query(values) {
  return Object.keys(values)
    .filter(function (key) { return values[key] !== undefined; })
    .map(function (key) { return encodeURIComponent(key) + '=' + encodeURIComponent(values[key]); })
    .join('&');
}
