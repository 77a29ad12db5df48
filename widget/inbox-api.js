// The console's REST client: JSON in and out, the credential as X-API-Key (an ID token as a
// bearer token). A failed call rejects with the API's own error text and status; a 401 also
// tells the session, which signs out.

/** An ID token is a JWT (three base64url parts); anything else is taken for an API key. */
export function isIdToken(value) {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(value);
}

/** `session.credential()` gives the credential to send; `session.refused()` is called on a 401. */
export function createApi(apiBase, session) {
  return function api(path, options) {
    options = options || {};
    var credential = session.credential();
    if (!credential) return Promise.reject(new Error('Signed out.'));
    var headers = isIdToken(credential) ? { authorization: 'Bearer ' + credential } : { 'x-api-key': credential };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(apiBase + path, {
      method: options.method || 'GET',
      headers: headers,
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
      cache: 'no-store',
    }).then(
      function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (response.status === 401) session.refused();
          if (!response.ok) {
            var error = new Error((body && (body.error || body.message)) || 'Request failed (' + response.status + ')');
            error.status = response.status;
            throw error;
          }
          return body;
        });
      },
      function () {
        throw new Error(navigator.onLine ? 'The service did not answer.' : 'You are offline.');
      },
    );
  };
}
