// The shadow's scorecard (GET /v1/policies/shadow/scorecard): its live decisions over its shadow
// period scored against the active version's, as `sentinel policy shadow-report` prints them.
// The server scores in the background; until then it answers `computing`, and the next refresh
// shows the card.
import { loadJson } from './api.js';
import { $, el, hide, setText, timeNode } from './dom.js';
import { session } from './session.js';

// Each measure: its field, its label and how it is written.
const fixed = (digits) => (v) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '—');
const MEASURES = [
  ['flaps_per_day', 'Flaps per day', fixed(2)],
  ['transitions', 'Transitions', String],
  ['bulk_capacity_minutes', 'Bulk capacity-minutes', fixed(1)],
  ['minutes_to_protect', 'Minutes to protect', (v) => (v === null || v === undefined ? 'none critical' : String(v))],
  ['over_protection_minutes', 'Over-protection minutes', String],
  ['invariant_violations', 'Invariant violations', String],
];

export function loadScorecard() {
  if (!session.shadow) {
    hide(true, 'scorecard');
    return Promise.resolve();
  }
  return loadJson('/v1/policies/shadow/scorecard', renderScorecard);
}

function renderScorecard(s) {
  hide(s.status === 'none', 'scorecard');
  const card = s.card;
  hide(!card, 'scorecard-table');
  const computed = s.computed_at ? [' Scored ', timeNode(s.computed_at), s.refreshing ? '; scoring again now.' : '.'] : [];
  if (s.status === 'computing') {
    $('scorecard-status').replaceChildren(`Scoring shadow ${s.shadow_version}'s period: the card appears at the next refresh.`);
  } else if (s.status === 'failed') {
    $('scorecard-status').replaceChildren(`No scorecard for shadow ${s.shadow_version}: ${s.problem || 'unknown'}.`, ...computed);
  } else if (card) {
    const period = [`Shadow ${s.shadow_version} against active ${card.active_version} over ${card.ticks} ticks, `,
      timeNode(card.period_from), ' to ', timeNode(card.period_to), '.'];
    $('scorecard-status').replaceChildren(...period, ...computed);
  }
  if (!card) return;
  setText('scorecard-active-heading', card.active_version + ' (active)');
  setText('scorecard-shadow-heading', s.shadow_version + ' (shadow)');
  const rows = MEASURES.map(([key, label, show]) => el('tr', { attrs: { 'data-measure': key } }, [
    el('th', { text: label, attrs: { scope: 'row' } }),
    el('td', { cls: 'num', text: show(card.active[key]) }),
    el('td', { cls: 'num', text: show(card.shadow[key]) }),
  ]));
  $('scorecard-table').tBodies[0].replaceChildren(...rows);
  const live = $('scorecard-live');
  live.className = card.live_record ? 'hint' : 'hint is-warning';
  live.textContent = card.live_record
    ? 'The replay decided as the shadow did live: these are its own measures. Promotion (sentinel policy promote) judges them by a gate file.'
    : `Not the shadow's live record: ${card.live_record_problem}. Promotion refuses it.`;
}
