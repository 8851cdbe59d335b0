// The pin as it is (GET /v1/pin) and as the last decision had it: the state card's Pinned line,
// the pin card and its countdown against the server's clock.
import { $, el, formatDuration, hide, setState, setText, timeNode } from './dom.js';
import { session } from './session.js';

// The state card's Pinned line, from the decided state; when the stored pin says otherwise (set or
// cleared since the last tick), what the next tick will do and when.
export function renderPinned() {
  const [s, pin] = [session.decided, session.pin];
  if (!s) return $('pinned').replaceChildren('—');
  const parts = s.pinned ? ['yes, until ', timeNode(s.pin_expires_at)] : ['no'];
  const inForce = pin && Date.parse(pin.expires_at) > Date.now() + session.offsetMs;
  if (inForce && !(s.pinned && s.pin_expires_at === pin.expires_at)) {
    parts.push(el('span', { cls: 'hint pin-pending', text: ` (a pin to ${pin.state} is set: it takes effect at the next tick, within 60 s)` }));
  } else if (!pin && s.pinned) {
    parts.push(el('span', { cls: 'hint pin-pending', text: ' (the pin was cleared: the next tick, within 60 s, decides on the readings again)' }));
  }
  $('pinned').replaceChildren(...parts);
}

export function renderPin(pin) {
  session.pin = pin || null;
  hide(!pin, 'pin-details');
  setText('pin-none', pin ? '' : 'No pin'); // empty: not displayed (CSS)
  // Staff see "Clear the pin" only when there is one; it asks before it clears.
  hide(!pin || !session.staff, 'pin-clear');
  if (!pin) hide(true, 'pin-clear-confirm');
  $('pin-clear').disabled = !pin;
  renderPinned();
  setState($('pin-state-value'), pin ? pin.state : null);
  for (const key of ['state', 'reason', 'actor']) setText(`pin-${key}-value`, pin ? pin[key] : '');
  $('pin-expires-value').replaceChildren(pin ? timeNode(pin.expires_at) : '');
  updateCountdown();
}

// Every second: the time left, against the server's clock.
export function updateCountdown() {
  const pin = session.pin;
  const left = pin ? Date.parse(pin.expires_at) - (Date.now() + session.offsetMs) : NaN;
  const ended = pin && (pin.active === false || left <= 0);
  setText('pin-countdown', isNaN(left) ? '' : ended ? '(expired: the next tick removes it)' : `(expires in ${formatDuration(left)})`);
}
