// Requests to the sentinel's /v1 API, as any client makes them, and its refusals.
import { session } from './session.js';

// A refused or failed request: its HTTP status (0: no answer) and its problem document.
const httpError = (status, problem) => Object.assign(new Error(problem.detail || problem.title || `HTTP ${status}`), { status, problem });
export const isHttp = (err) => Boolean(err && err.problem);
export const isStatus = (err, status) => isHttp(err) && err.status === status;
async function readProblem(res) {
  const body = (res.headers.get('Content-Type') || '').includes('json') ? await res.json().catch(() => null) : null;
  return body && typeof body === 'object' ? body : { title: res.statusText || 'Error', status: res.status };
}

// Every request: the bearer token, same-origin credentials, never cached. Changes add the
// console's header, which the server requires of a browser's changes (with Origin checks).
export async function api(path, { method = 'GET', json, accept = 'application/json', token = session.token } = {}) {
  const headers = { Authorization: 'Bearer ' + token, Accept: accept };
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (method !== 'GET') headers['X-Sentinel-Console'] = '1';
  if (json !== undefined) [headers['Content-Type'], init.body] = ['application/json', JSON.stringify(json)];
  const res = await fetch(path, init).catch(() => Promise.reject(httpError(0, { title: 'The server could not be reached' })));
  if (!res.ok) throw httpError(res.status, await readProblem(res));
  return res;
}
export function describe(err) {
  const text = isHttp(err) ? err.problem.detail || err.problem.title || 'the request failed' : 'an unexpected error';
  return isHttp(err) && err.status ? `${text} (${err.status})` : text;
}

export const loadJson = async (path, render) => render(await (await api(path)).json());
