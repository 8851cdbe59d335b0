// The staff's pin form: set a pin (PUT /v1/pin), clear it after a confirmation (DELETE /v1/pin).
// Viewers get no form at all. A refused change changes nothing on the page but the message, the
// field's error and the audit.
import { api, describe, isHttp, isStatus } from './api.js';
import { $, dateFormat, hide, localInput, localInputToUtc, setText, showMessage } from './dom.js';
import { refreshAll } from './refresh.js';
import { REFUSED_401, endSession, session } from './session.js';

const PIN_FIELDS = { state: 'pin-state', reason: 'pin-reason', expires_at: 'pin-expires' }; // API field -> input (error: `<input>-error`)

// Viewers get no pin form at all: hidden, inert and disabled.
export function applyRole(staff) {
  session.staff = staff;
  hide(!staff, 'pin-editor', 'pin-form');
  hide(!staff || !session.pin, 'pin-clear');
  if (!staff) hide(true, 'pin-clear-confirm');
  $('pin-form').inert = !staff;
  $('pin-fieldset').disabled = !staff;
  if (staff) resetPinForm();
}

function setFieldError(field, text) {
  setText(PIN_FIELDS[field] + '-error', text);
  $(PIN_FIELDS[field]).setAttribute('aria-invalid', 'true');
  $(PIN_FIELDS[field]).focus();
}
function clearFieldErrors() {
  for (const id of Object.values(PIN_FIELDS)) {
    setText(id + '-error', '');
    $(id).setAttribute('aria-invalid', 'false');
  }
}
function resetPinForm() {
  clearFieldErrors();
  $('pin-reason').value = '';
  $('pin-expires').value = localInput(new Date(Date.now() + session.offsetMs + 3600 * 1000));
}

// A pin change: `request`, then once it succeeded `done` and everything loaded again.
async function change(button, what, request, done) {
  $(button).disabled = true;
  try {
    const res = await request();
    session.auditCursors = [null];
    done(res);
    await refreshAll();
  } catch (err) {
    changeRefused(err, what);
  } finally {
    $(button).disabled = false;
  }
}

function changeRefused(err, what) {
  if (isStatus(err, 401)) return endSession(REFUSED_401, true);
  const field = isHttp(err) ? err.problem.field : null;
  if (isStatus(err, 422) && field && Object.hasOwn(PIN_FIELDS, field)) {
    setFieldError(field, err.problem.detail || err.problem.title || 'Refused');
    showMessage(`${what}: the server refused it (422). Nothing changed.`, 'error');
  } else if (isStatus(err, 403) && /cross-site$/.test(err.problem.type || '')) showMessage(`${what}: ${describe(err)}.`, 'error');
  else showMessage(isStatus(err, 403) ? `${what}: only staff may change the pin (403).` : `${what}: ${describe(err)}.`, 'error');
  session.auditCursors = [null]; // a refusal is audited: show it
  refreshAll();
}

// The reason must not be blank (checked here, no request); everything else the server validates.
export function onSetPin(event) {
  event.preventDefault();
  clearFieldErrors();
  const [state, reason] = [$('pin-state').value, $('pin-reason').value];
  if (!reason.trim()) return setFieldError('reason', 'Give a reason: it goes into the audit trail.');
  const expiresAt = localInputToUtc($('pin-expires').value);
  if (!expiresAt) return setFieldError('expires_at', 'Choose when the pin ends: a date and a time.');
  const request = () => api('/v1/pin', { method: 'PUT', json: { state, reason, expires_at: expiresAt } });
  return change('pin-submit', 'The pin was not set', request, () => {
    resetPinForm();
    showMessage(`Pinned ${state} until ${dateFormat.format(new Date(expiresAt))}: it takes effect at the next tick, within 60 s.`, 'ok');
    $('pin-heading').focus(); // the button it was on is disabled while the change runs
  });
}

// Clearing asks first (the safe answer has the focus); the answer clears or keeps the pin.
export function askToClear(asking) {
  hide(asking, 'pin-clear');
  hide(!asking, 'pin-clear-confirm');
  $(asking ? 'pin-clear-no' : 'pin-clear').focus();
}
export function onClearPin() {
  return change('pin-clear-yes', 'The pin was not cleared', () => api('/v1/pin', { method: 'DELETE' }), (res) => {
    hide(true, 'pin-clear-confirm');
    showMessage(res.status === 204 ? 'There was no pin to clear.' : 'The pin is cleared: the next tick, within 60 s, decides on the readings again.', 'ok');
    $('pin-heading').focus();
  });
}
