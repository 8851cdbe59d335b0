// Everything, again (every 10 s, and after each change): one refresh at a time, at most one
// waiting; the promise settles once a refresh that started after the call has ended.
import { describe, isStatus, loadJson } from './api.js';
import { loadAudit } from './audit.js';
import { dateFormat, setText, showMessage } from './dom.js';
import { renderOverview } from './overview.js';
import { renderPin } from './pin_view.js';
import { loadScorecard } from './scorecard.js';
import { REFUSED_401, endSession, session } from './session.js';
import { loadTimeline } from './timeline.js';

export const REFRESH_MS = 10000;

export function refreshAll() {
  if (!session.queued) {
    const next = () => ((session.queued = null), refreshOnce());
    session.queued = session.running = session.running.then(next, next);
  }
  return session.queued;
}

async function refreshOnce() {
  if (!session.token) return;
  const pin = loadJson('/v1/pin', (p) => renderPin(p.pin));
  // The timeline changes once a minute at most: drawn again when a tick is recorded or after 60 s.
  const overview = loadJson('/v1/overview', renderOverview);
  const drawn = overview.then(() => session.sequence === session.drawnSequence && Date.now() - (session.drawnAt || 0) < 60000, () => false);
  const timeline = drawn.then((fresh) => fresh || loadTimeline().then(() => Object.assign(session, { drawnSequence: session.sequence, drawnAt: Date.now() })));
  // The overview says whether a shadow is configured.
  const scorecard = overview.then(loadScorecard);
  const results = await Promise.allSettled([overview, pin, loadAudit(), timeline, scorecard]);
  const failures = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
  if (failures.some((e) => isStatus(e, 401))) return endSession(REFUSED_401, true);
  if (results[3].status === 'rejected') setText('timeline-status', `The timeline could not be loaded: ${describe(results[3].reason)}.`);
  if (failures.length) showMessage(`Could not refresh everything: ${describe(failures[0])}. Showing what was last loaded.`, 'error');
  else if (session.stale) showMessage('Up to date again.', 'ok');
  session.stale = failures.length > 0;
  setText('updated', `Updated ${dateFormat.format(new Date())}; refreshes every 10 s.`);
}
