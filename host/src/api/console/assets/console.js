// The capacity sentinel console: vanilla JS in ES modules (/console/*.js), no build step. Served
// under a strict CSP (no inline script or style, no eval): every node built from server data is
// made with createElement and textContent, never innerHTML. This module signs in and out and
// wires the page's controls; the others each hold one part of the page.
import { api, describe, isStatus } from '/console/api.js';
import { pageAudit } from '/console/audit.js';
import { $, el, hide, setText, showMessage } from '/console/dom.js';
import { applyRole, askToClear, onClearPin, onSetPin } from '/console/pin_form.js';
import { updateCountdown } from '/console/pin_view.js';
import { REFRESH_MS, refreshAll } from '/console/refresh.js';
import { NOTICE_KEY, TOKEN_KEY, endSession, session } from '/console/session.js';

// Asks who the token is (GET /v1/session); only a token the server accepted is kept.
async function startSession(token) {
  const who = await (await api('/v1/session', { token })).json();
  Object.assign(session, { token, name: who.name, role: who.role });
  sessionStorage.setItem(TOKEN_KEY, token);
  setText('whoami', `Signed in as ${who.name} (${who.role})`);
  hide(false, 'signout', 'console');
  hide(true, 'signin');
  applyRole(who.role === 'staff');
  setInterval(refreshAll, REFRESH_MS);
  setInterval(updateCountdown, 1000);
  await refreshAll();
}

// The sign-in error, linked to the token field (aria-describedby) and announced (aria-live).
function signinError(text) {
  setText('signin-error', text);
  $('token').setAttribute('aria-invalid', String(Boolean(text)));
}
function refusal(err) {
  if (isStatus(err, 401)) return 'That token was refused (401)';
  return isStatus(err, 403) ? 'That token has no role in this console (403)' : `Could not sign in: ${describe(err)}`;
}

async function onSignIn(event) {
  event.preventDefault();
  const input = $('token');
  const token = input.value.trim();
  signinError('');
  if (!token) return signinError('Enter an API token.'), input.focus();
  $('signin-submit').disabled = true;
  try {
    await startSession(token);
    input.value = '';
    showMessage(`Signed in as ${session.name}.`, 'ok');
    $('state-heading').focus();
  } catch (err) {
    if (session.token) return endSession(refusal(err), true);
    signinError(refusal(err));
    input.focus();
  } finally {
    $('signin-submit').disabled = false;
  }
}

// The page's icon, from a blob: URL (img-src allows blob:), so that the browser does not ask for /favicon.ico.
const icon = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#0b57d0"/></svg>';
document.head.append(el('link', { attrs: { rel: 'icon', href: URL.createObjectURL(new Blob([icon], { type: 'image/svg+xml' })) } }));
$('signin-form').addEventListener('submit', onSignIn);
$('signout').addEventListener('click', () => endSession('Signed out.'));
$('pin-form').addEventListener('submit', onSetPin);
$('pin-clear').addEventListener('click', () => askToClear(true));
$('pin-clear-no').addEventListener('click', () => askToClear(false));
$('pin-clear-yes').addEventListener('click', onClearPin);
$('audit-older').addEventListener('click', () => pageAudit(true));
$('audit-newer').addEventListener('click', () => pageAudit(false));
$('timeline').addEventListener('error', () => setText('timeline-status', 'The timeline image could not be shown.'));

// After a sign-out: its message (`!` first: an error). In a tab still signed in (a reload): the session again.
const notice = sessionStorage.getItem(NOTICE_KEY) || '';
sessionStorage.removeItem(NOTICE_KEY);
if (notice) notice.startsWith('!') ? signinError(notice.slice(1)) : showMessage(notice, 'ok');
if (notice) $('token').focus();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) {
  startSession(saved).catch((err) => {
    if (session.token) return endSession(refusal(err), true);
    sessionStorage.removeItem(TOKEN_KEY);
    signinError(refusal(err));
  });
}
