// The pin's audit trail (GET /v1/pin/audit), a page of AUDIT_LIMIT records at a time, newest first.
import { describe, isStatus, loadJson } from './api.js';
import { $, el, setText, showMessage, timeNode } from './dom.js';
import { REFUSED_401, endSession, session } from './session.js';

const AUDIT_LIMIT = 10;

const auditCell = (label, content, cls) => el('td', { cls, attrs: { 'data-label': label } }, [el('span', {}, [content])]);
function renderAudit(page) {
  session.nextBefore = page.next_before ?? null;
  const rows = (page.entries || []).map((e) => {
    const refused = e.action === 'refused'; // nothing changed: `before` is the pin in force, `refusal` what was asked
    const pin = refused ? null : e.after || e.before;
    const [from, to] = [e.before ? e.before.state : 'none', e.after ? e.after.state : 'none'];
    return el('tr', { cls: 'audit-' + (e.action || 'unknown'), attrs: { 'data-id': e.id } }, [
      auditCell('Time', timeNode(e.at), 'audit-time'), auditCell('Actor', e.actor || '—', 'audit-actor'),
      auditCell('Action', e.action || '—', refused ? 'audit-action action-refused' : 'audit-action'),
      auditCell('State', refused ? `unchanged (${from === 'none' ? 'no pin' : from})` : `${from} → ${to}`, 'audit-states'),
      auditCell('Reason', (pin && pin.reason) || '—', 'audit-reason'), auditCell('Refusal', e.refusal || '—', 'audit-refusal'),
    ]);
  });
  if (!rows.length) rows.push(el('tr', { cls: 'empty-row' }, [el('td', { text: 'No audit records here.', attrs: { colspan: 6 } })]));
  $('audit').replaceChildren(...rows);
  setText('audit-page', `Page ${session.auditCursors.length}`);
  $('audit-newer').disabled = session.auditCursors.length <= 1;
  $('audit-older').disabled = session.nextBefore === null;
}

export function loadAudit() {
  const before = session.auditCursors[session.auditCursors.length - 1];
  const query = new URLSearchParams({ limit: String(AUDIT_LIMIT) });
  if (before !== null) query.set('before', String(before));
  return loadJson('/v1/pin/audit?' + query.toString(), renderAudit);
}

export async function pageAudit(older) {
  const cursors = session.auditCursors.slice();
  if (older && session.nextBefore !== null) session.auditCursors.push(session.nextBefore);
  else if (!older && cursors.length > 1) session.auditCursors.pop();
  else return;
  try {
    await loadAudit();
  } catch (err) {
    if (isStatus(err, 401)) return endSession(REFUSED_401, true);
    session.auditCursors = cursors;
    return showMessage(`The audit page could not be loaded: ${describe(err)}.`, 'error');
  }
  const [clicked, other] = older ? [$('audit-older'), $('audit-newer')] : [$('audit-newer'), $('audit-older')];
  if (clicked.disabled) (other.disabled ? $('audit-heading') : other).focus();
}
