// The signed-in session: the API token lives in sessionStorage only (this tab), is sent in the
// Authorization header only, and is never logged or put in a URL. Signing out reloads the page,
// so that nothing shown stays in memory or in the DOM.

export const TOKEN_KEY = 'sentinel-token';
export const NOTICE_KEY = 'sentinel-notice'; // a sign-out's message, shown after the reload
export const REFUSED_401 = 'Your token was refused (401): sign in again.';

// offsetMs: the server's clock minus the browser's; auditCursors: the `before` of each audit page seen (the last: shown).
export const session = { token: null, name: null, role: null, offsetMs: 0, pin: null, auditCursors: [null], nextBefore: null };
Object.assign(session, { timelineUrl: null, running: Promise.resolve(), queued: null, stale: false });

// Forgets the token, then reloads the page (which drops everything shown) with a message.
export function endSession(text, error = false) {
  session.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.setItem(NOTICE_KEY, (error ? '!' : '') + text);
  location.replace(location.pathname);
}
