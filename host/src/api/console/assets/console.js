// The capacity sentinel console: vanilla JS, no build step. Served under a strict CSP (no inline
// script or style, no eval): every node built from server data is made with createElement and
// textContent, never innerHTML. The API token lives in sessionStorage only (this tab), is sent
// in the Authorization header only, and is never logged or put in a URL. Signing out reloads the
// page, so that nothing shown stays in memory or in the DOM.
// Longer than 400 lines: the page's one script, loaded without modules or a build step, whose
// parts (sign-in, refresh, pin form and its confirmation, audit paging) share one closure: the
// session and the DOM helpers.
'use strict';

(() => {
  const TOKEN_KEY = 'sentinel-token';
  const NOTICE_KEY = 'sentinel-notice'; // a sign-out's message, shown after the reload
  const [REFRESH_MS, AUDIT_LIMIT] = [10000, 10]; // every 10 s; 10 audit records a page
  const STATES = ['normal', 'constrained', 'critical', 'emergency'];
  const PIN_FIELDS = { state: 'pin-state', reason: 'pin-reason', expires_at: 'pin-expires' }; // API field -> input (error: `<input>-error`)
  const REFUSED_401 = 'Your token was refused (401): sign in again.';

  // offsetMs: the server's clock minus the browser's; auditCursors: the `before` of each audit page seen (the last: shown).
  const session = { token: null, name: null, role: null, offsetMs: 0, pin: null, auditCursors: [null], nextBefore: null };
  Object.assign(session, { timelineUrl: null, running: Promise.resolve(), queued: null, stale: false });

  const $ = (id) => document.getElementById(id);
  const hide = (hidden, ...ids) => ids.forEach((id) => ($(id).hidden = hidden));
  const setText = (id, text) => ($(id).textContent = text);

  // A refused or failed request: its HTTP status (0: no answer) and its problem document.
  const httpError = (status, problem) => Object.assign(new Error(problem.detail || problem.title || `HTTP ${status}`), { status, problem });
  const isHttp = (err) => Boolean(err && err.problem);
  const isStatus = (err, status) => isHttp(err) && err.status === status;
  async function readProblem(res) {
    const body = (res.headers.get('Content-Type') || '').includes('json') ? await res.json().catch(() => null) : null;
    return body && typeof body === 'object' ? body : { title: res.statusText || 'Error', status: res.status };
  }

  // Every request: the bearer token, same-origin credentials, never cached. Changes add the
  // console's header, which the server requires of a browser's changes (with Origin checks).
  async function api(path, { method = 'GET', json, accept = 'application/json', token = session.token } = {}) {
    const headers = { Authorization: 'Bearer ' + token, Accept: accept };
    const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
    if (method !== 'GET') headers['X-Sentinel-Console'] = '1';
    if (json !== undefined) [headers['Content-Type'], init.body] = ['application/json', JSON.stringify(json)];
    const res = await fetch(path, init).catch(() => Promise.reject(httpError(0, { title: 'The server could not be reached' })));
    if (!res.ok) throw httpError(res.status, await readProblem(res));
    return res;
  }
  function describe(err) {
    const text = isHttp(err) ? err.problem.detail || err.problem.title || 'the request failed' : 'an unexpected error';
    return isHttp(err) && err.status ? `${text} (${err.status})` : text;
  }

  function el(tag, { text, cls, attrs } = {}, children = []) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    node.append(...children);
    return node;
  }
  // Written only when it changes, so that a screen reader does not repeat it every refresh.
  function showMessage(text, kind = '') {
    $('message').className = kind ? 'message is-' + kind : 'message';
    if ($('message').textContent !== text) setText('message', text);
  }

  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' }); // with seconds and the zone
  // A <time> for an RFC 3339 instant, shown in the browser's time zone.
  function timeNode(iso) {
    const ms = Date.parse(iso);
    if (!iso || Number.isNaN(ms)) return document.createTextNode(iso ? String(iso) : '—');
    return el('time', { text: dateFormat.format(new Date(ms)), attrs: { datetime: iso, title: iso } });
  }
  function setState(node, state) {
    node.className = 'state-name ' + (STATES.includes(state) ? 'state-' + state : 'state-unknown');
    node.textContent = state || 'unknown';
  }

  const pad = (n) => String(n).padStart(2, '0');
  const localInput = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  function formatDuration(ms) {
    const total = Math.max(0, Math.floor(ms / 1000));
    const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
    return h > 0 ? `${h} h ${pad(m)} min ${pad(s)} s` : `${m} min ${pad(s)} s`;
  }
  // A datetime-local value (the browser's local time) as RFC 3339 in UTC, whole seconds; null when malformed.
  function localInputToUtc(value) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return null;
    const date = new Date(value); // a date-time without an offset is local time (ECMAScript)
    return Number.isNaN(date.getTime()) ? null : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  function formatNumber(value, unit) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
    const text = Number.isInteger(value) ? String(value) : value.toFixed(unit === '×' ? 2 : 1);
    return !unit ? text : unit === '×' ? text + '×' : `${text} ${unit}`;
  }

  function renderOverview(o) {
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
    const yes = (b) => (b ? 'yes' : 'no');
    const rows = (p.versions || []).map((v) => el('tr', {}, [
      el('th', { text: v.version, attrs: { scope: 'row' } }), el('td', { text: yes(v.active) }), el('td', { text: yes(v.shadow) }),
      el('td', { text: v.health || '—' }),
    ]));
    $('policies').tBodies[0].replaceChildren(...rows);
  }

  // The state card's Pinned line, from the decided state; when the stored pin says otherwise (set or
  // cleared since the last tick), what the next tick will do and when.
  function renderPinned() {
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

  function renderPin(pin) {
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
  function updateCountdown() {
    const pin = session.pin;
    const left = pin ? Date.parse(pin.expires_at) - (Date.now() + session.offsetMs) : NaN;
    const ended = pin && (pin.active === false || left <= 0);
    setText('pin-countdown', isNaN(left) ? '' : ended ? '(expired: the next tick removes it)' : `(expires in ${formatDuration(left)})`);
  }
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

  const loadJson = async (path, render) => render(await (await api(path)).json());
  function loadAudit() {
    const before = session.auditCursors[session.auditCursors.length - 1];
    const query = new URLSearchParams({ limit: String(AUDIT_LIMIT) });
    if (before !== null) query.set('before', String(before));
    return loadJson('/v1/pin/audit?' + query.toString(), renderAudit);
  }
  // The SVG needs the bearer token, so it is fetched, then shown from a blob: URL (the old one revoked).
  async function loadTimeline() {
    // Drawn at the width it is shown at (so its text is read at its size), in the reader's own time zone.
    const box = getComputedStyle($('timeline-section'));
    const inner = $('timeline-section').clientWidth - parseFloat(box.paddingLeft) - parseFloat(box.paddingRight);
    const width = String(Math.min(2400, Math.max(640, Math.floor(inner))));
    const query = new URLSearchParams({ hours: '24', zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC', width });
    // A zone the server's time zone data lacks is drawn in UTC, and the drawing says so.
    const blob = await (await api('/v1/timeline.svg?' + query.toString(), { accept: 'image/svg+xml' })).blob();
    const url = URL.createObjectURL(blob.type.startsWith('image/svg+xml') ? blob : new Blob([blob], { type: 'image/svg+xml' }));
    if (session.timelineUrl) URL.revokeObjectURL(session.timelineUrl); // the image shown stays decoded
    $('timeline').src = session.timelineUrl = url;
    hide(false, 'timeline');
    setText('timeline-status', '');
  }

  // Everything, again (every 10 s, and after each change): one refresh at a time, at most one waiting;
  // the promise settles once a refresh that started after the call has ended.
  function refreshAll() {
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
    const results = await Promise.allSettled([overview, pin, loadAudit(), timeline]);
    const failures = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (failures.some((e) => isStatus(e, 401))) return endSession(REFUSED_401, true);
    if (results[3].status === 'rejected') setText('timeline-status', `The timeline could not be loaded: ${describe(results[3].reason)}.`);
    if (failures.length) showMessage(`Could not refresh everything: ${describe(failures[0])}. Showing what was last loaded.`, 'error');
    else if (session.stale) showMessage('Up to date again.', 'ok');
    session.stale = failures.length > 0;
    setText('updated', `Updated ${dateFormat.format(new Date())}; refreshes every 10 s.`);
  }

  // Viewers get no pin form at all: hidden, inert and disabled.
  function applyRole(staff) {
    session.staff = staff;
    hide(!staff, 'pin-editor', 'pin-form');
    hide(!staff || !session.pin, 'pin-clear');
    if (!staff) hide(true, 'pin-clear-confirm');
    $('pin-form').inert = !staff;
    $('pin-fieldset').disabled = !staff;
    if (staff) resetPinForm();
  }
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

  // Forgets the token, then reloads the page (which drops everything shown) with a message.
  function endSession(text, error = false) {
    session.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.setItem(NOTICE_KEY, (error ? '!' : '') + text);
    location.replace(location.pathname);
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

  // A refused change changes nothing on the page but the message, the field's error and the audit.
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
  function onSetPin(event) {
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
  function askToClear(asking) {
    hide(asking, 'pin-clear');
    hide(!asking, 'pin-clear-confirm');
    $(asking ? 'pin-clear-no' : 'pin-clear').focus();
  }
  function onClearPin() {
    return change('pin-clear-yes', 'The pin was not cleared', () => api('/v1/pin', { method: 'DELETE' }), (res) => {
      hide(true, 'pin-clear-confirm');
      showMessage(res.status === 204 ? 'There was no pin to clear.' : 'The pin is cleared: the next tick, within 60 s, decides on the readings again.', 'ok');
      $('pin-heading').focus();
    });
  }

  async function pageAudit(older) {
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
})();
