// The last 24 hours (GET /v1/timeline.svg). The SVG needs the bearer token, so it is fetched,
// then shown from a blob: URL (the old one revoked).
import { api } from './api.js';
import { $, hide, setText } from './dom.js';
import { session } from './session.js';

export async function loadTimeline() {
  // Drawn at the width it is shown at (so its text is read at its size), in the reader's own time zone.
  const box = getComputedStyle($('timeline-section'));
  const inner = $('timeline-section').clientWidth - parseFloat(box.paddingLeft) - parseFloat(box.paddingRight);
  // Its 1 px border on each side comes on top: the drawing is 2 px narrower than the card's inside.
  const width = String(Math.min(2400, Math.max(640, Math.floor(inner) - 2)));
  const query = new URLSearchParams({ hours: '24', zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC', width });
  // A zone the server's time zone data lacks is drawn in UTC, and the drawing says so.
  const blob = await (await api('/v1/timeline.svg?' + query.toString(), { accept: 'image/svg+xml' })).blob();
  const url = URL.createObjectURL(blob.type.startsWith('image/svg+xml') ? blob : new Blob([blob], { type: 'image/svg+xml' }));
  if (session.timelineUrl) URL.revokeObjectURL(session.timelineUrl); // the image shown stays decoded
  $('timeline').src = session.timelineUrl = url;
  hide(false, 'timeline');
  setText('timeline-status', '');
}
