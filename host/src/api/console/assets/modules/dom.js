// The page's DOM helpers and formats. Every node built from server data is made with
// createElement and textContent, never innerHTML (the CSP allows no inline script or style).

export const STATES = ['normal', 'constrained', 'critical', 'emergency'];

export const $ = (id) => document.getElementById(id);
export const hide = (hidden, ...ids) => ids.forEach((id) => ($(id).hidden = hidden));
export const setText = (id, text) => ($(id).textContent = text);

export function el(tag, { text, cls, attrs } = {}, children = []) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  node.append(...children);
  return node;
}

// Written only when it changes, so that a screen reader does not repeat it every refresh.
export function showMessage(text, kind = '') {
  $('message').className = kind ? 'message is-' + kind : 'message';
  if ($('message').textContent !== text) setText('message', text);
}

export const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' }); // with seconds and the zone
// A <time> for an RFC 3339 instant, shown in the browser's time zone.
export function timeNode(iso) {
  const ms = Date.parse(iso);
  if (!iso || Number.isNaN(ms)) return document.createTextNode(iso ? String(iso) : '—');
  return el('time', { text: dateFormat.format(new Date(ms)), attrs: { datetime: iso, title: iso } });
}
export function setState(node, state) {
  node.className = 'state-name ' + (STATES.includes(state) ? 'state-' + state : 'state-unknown');
  node.textContent = state || 'unknown';
}

const pad = (n) => String(n).padStart(2, '0');
export const localInput = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
export function formatDuration(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  return h > 0 ? `${h} h ${pad(m)} min ${pad(s)} s` : `${m} min ${pad(s)} s`;
}
// A datetime-local value (the browser's local time) as RFC 3339 in UTC, whole seconds; null when malformed.
export function localInputToUtc(value) {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return null;
  const date = new Date(value); // a date-time without an offset is local time (ECMAScript)
  return Number.isNaN(date.getTime()) ? null : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
export function formatNumber(value, unit) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const text = Number.isInteger(value) ? String(value) : value.toFixed(unit === '×' ? 2 : 1);
  return !unit ? text : unit === '×' ? text + '×' : `${text} ${unit}`;
}
