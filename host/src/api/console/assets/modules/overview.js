// The overview (GET /v1/overview): the state card, the readings against the thresholds, the
// policy versions.
import { $, el, formatNumber, setState, setText, timeNode } from './dom.js';
import { renderPinned } from './pin_view.js';
import { session } from './session.js';

export function renderOverview(o) {
  const serverNow = Date.parse(o.now);
  if (!Number.isNaN(serverNow)) session.offsetMs = serverNow - Date.now();
  const s = o.state;
  setState($('state'), s ? s.state : null);
  if (!s) setText('state', 'unknown (nothing decided yet)');
  $('decided-at').replaceChildren(s ? timeNode(s.decided_at) : '—');
  setText('cause', (s && s.cause) || '—');
  session.decided = s || null;
  renderPinned();
  setText('decided-policy', s && s.policy ? `${s.policy.name} ${s.policy.version}` : '—');
  setText('sequence', s && s.sequence !== undefined ? String(s.sequence) : '—');
  session.sequence = s ? s.sequence : null;
  const items = Object.entries((s && s.factors) || {}).map(([key, value]) => {
    const number = typeof value === 'number' && Number.isFinite(value);
    const fill = el('span', { cls: 'factor-fill' });
    fill.style.width = (number ? Math.min(1, Math.max(0, value)) * 100 : 0).toFixed(1) + '%'; // CSSOM: allowed by the CSP
    const name = el('span', { cls: 'factor-name', text: key });
    const shown = el('span', { cls: 'factor-value', text: number ? value.toFixed(2) : String(value) });
    return el('li', { cls: 'factor' }, [name, shown, el('span', { cls: 'factor-bar', attrs: { 'aria-hidden': 'true' } }, [fill])]);
  });
  $('factors').replaceChildren(...(items.length ? items : [el('li', { text: 'No factors published yet' })]));
  setText('explanation', o.explanation || '—');
  setText('reading-failed', o.reading_failed ? 'The last reading failed: ' + o.reading_failed : '');
  renderReadings(o.readings || []);
  renderPolicies(o.policies || {});
}

// One row per signal; a value at or above a threshold is marked by class and in words.
function renderReadings(readings) {
  const rows = readings.map((r) => {
    const known = typeof r.value === 'number' && Number.isFinite(r.value);
    let level = known ? 'normal' : 'no reading';
    if (known && typeof r.critical === 'number' && r.value >= r.critical) level = 'critical';
    else if (known && typeof r.constrained === 'number' && r.value >= r.constrained) level = 'constrained';
    const above = level === 'critical' || level === 'constrained';
    return el('tr', { cls: above ? 'level-' + level : '', attrs: { 'data-signal': r.signal || '', 'data-level': level } }, [
      el('th', { text: r.label || r.signal, attrs: { scope: 'row', title: r.signal || '' } }),
      el('td', { cls: 'num value', text: known ? formatNumber(r.value, r.unit) : 'no reading' }),
      el('td', { cls: 'num', text: formatNumber(r.constrained, r.unit) }),
      el('td', { cls: 'num', text: formatNumber(r.critical, r.unit) }),
      el('td', { cls: 'level', text: above ? `at or above ${level}` : level }),
    ]);
  });
  $('readings').tBodies[0].replaceChildren(...rows);
}

function renderPolicies(p) {
  const a = p.active;
  const active = a ? `Active: ${a.name} ${a.version}${a.kind ? ` (${a.kind})` : ''}${a.digest ? `, digest ${a.digest}` : ''}. ` : '';
  setText('policy-active', active + (p.shadow ? `Shadow: ${p.shadow}.` : 'No shadow policy.'));
  session.shadow = p.shadow || null;
  const yes = (b) => (b ? 'yes' : 'no');
  const rows = (p.versions || []).map((v) => el('tr', {}, [
    el('th', { text: v.version, attrs: { scope: 'row' } }), el('td', { text: yes(v.active) }), el('td', { text: yes(v.shadow) }),
    el('td', { text: v.health || '—' }),
  ]));
  $('policies').tBodies[0].replaceChildren(...rows);
}
