// `BulkFactorReader`: what a service reads before admitting bulk work (docs/behaviour.md §9.1);
// the Node twin of the Python package's reader.py, the same behaviour in camelCase.
//
//   const reader = new BulkFactorReader({ cache: 'redis://cache:6379/0', parameter: 'ssm:/capacity/state' });
//   const reading = await reader.read();       // never rejects for a failed read
//   const result = resolveBudget({ factor: reading.factor, ... });
//
// Each `read()` within `refresh` seconds of the last fetch answers from memory (a monotonic
// clock). A fetch reads the cache; the parameter only when the cache's document is not usable
// (missing, unreadable, out of range, stale or from the future); the admission component's
// `choose-factor` judges what came back, so Node, Python and Rust agree to the letter. A document
// older (by sequence) than the newest one acted on is refused while that one is fresh
// (sequence-fence.js): the reader never goes back to an older decision. When neither channel
// gives a usable document, the reader acts on the newest one it acted on while that one is fresh
// (`source: 'remembered'`); only then does it answer `factor: undefined`, which admission turns
// into full capacity with `factorReadFailed`. The parameter is called at most once per
// `parameterRefresh` and backs off after failures (parameter-pace.js), so a fleet of readers
// during a cache outage stays within what SSM serves.
//
// Concurrent callers share one fetch (the pending promise), each channel keeps one client for
// the reader's life, and a fetch is bounded by `timeout` per channel. A channel that stops being
// usable, acting on the remembered document, and full capacity are logged once when they start
// and once when they end;
// `counters()` says how often each channel gave what.
import { openChannel } from './channels.js';
import { U32_MAX } from './checks.js';
import { chooseFactor } from './factor-choice.js';
import { ParameterPace, jittered } from './parameter-pace.js';
import { REMEMBERED, SequenceFence } from './sequence-fence.js';

/** The Redis key the sentinel publishes to unless configured otherwise. */
export const DEFAULT_CACHE_KEY = 'capacity:state';
/** A document older than this (seconds) is stale: three missed minute ticks. */
export const DEFAULT_MAX_AGE = 180;
/** How far ahead of this host's clock a document's `decided_at` may be (seconds). */
export const DEFAULT_MAX_SKEW = 30;
/**
 * How long the parameter's answer is reused (seconds): 1,000 readers call it about 33 times a
 * second, within SSM's 40 for a standard parameter.
 */
export const DEFAULT_PARAMETER_REFRESH = 30;

const OPTIONS = ['cache', 'parameter', 'cacheKey', 'maxAge', 'maxSkew', 'refresh', 'parameterRefresh', 'timeout', 'logger', 'clock'];
// setTimeout's longest delay.
const MAX_TIMEOUT_S = (2 ** 31 - 1) / 1000;

function whole(name, value, low) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected a whole number of seconds, got ${typeof value}`);
  if (!Number.isInteger(value) || value < low || value > U32_MAX) {
    throw new RangeError(`${name}: expected a whole number of seconds from ${low} to ${U32_MAX}, got ${value}`);
  }
  return value;
}

function seconds(name, value, positive) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected a number of seconds, got ${typeof value}`);
  if (!Number.isFinite(value) || value < 0 || (positive && value === 0) || (positive && value > MAX_TIMEOUT_S)) {
    const range = positive ? `a positive number of seconds up to ${MAX_TIMEOUT_S}` : 'a finite non-negative number of seconds';
    throw new RangeError(`${name}: expected ${range}, got ${value}`);
  }
  return value;
}

/** One channel's part of the component's reason (`cache: ...; parameter: ...`). */
function part(reason, channel) {
  for (const p of (reason ?? '').split('; parameter: ')) {
    if (channel === 'cache' && p.startsWith('cache: ')) return p.slice('cache: '.length);
    if (channel === 'parameter' && !p.startsWith('cache: ')) return p.startsWith('parameter: ') ? p.slice('parameter: '.length) : p;
  }
  return reason ?? '';
}

const elapsed = (since) => ((performance.now() - since) / 1000).toFixed(0);

/** Reads the published bulk factor from the cache and, when needed, the parameter. */
export class BulkFactorReader {
  #cache;
  #parameter;
  #logger;
  #clock;
  #refreshMs;
  // {promise, until}: the last answer, reused until `until` (performance.now() ms).
  #memo;
  // The fetch in flight, shared by every caller that arrives meanwhile.
  #pending;
  #closed = false;
  #fence;
  #pace;
  #counts = { calls: 0, fetches: 0, fullCapacity: 0, remembered: 0, parameterCalls: 0, reads: { cache: {}, parameter: {} } };
  // Since when (performance.now()) each troubled channel, and the reader as a whole ('reader'),
  // has had no usable document: the start and the end of each episode are logged, nothing between.
  #trouble = new Map();
  // {since, kind}: since when the reader has acted on its remembered document ('remembered') or
  // run at full capacity ('full'); logged when it starts and when it ends.
  #episode;

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('BulkFactorReader: expected an options object');
    for (const name of Object.keys(options)) {
      if (!OPTIONS.includes(name)) throw new TypeError(`BulkFactorReader: unknown option ${name} (expected ${OPTIONS.join(', ')})`);
    }
    const {
      cache, parameter, cacheKey = DEFAULT_CACHE_KEY, maxAge = DEFAULT_MAX_AGE, maxSkew = DEFAULT_MAX_SKEW,
      refresh = 10, parameterRefresh, timeout = 2, logger = console, clock = () => Date.now() / 1000,
    } = options;
    if ((cache === undefined || cache === null) && (parameter === undefined || parameter === null)) {
      throw new TypeError('BulkFactorReader: needs a cache, a parameter or both');
    }
    if (typeof cacheKey !== 'string' || cacheKey === '') {
      throw new TypeError(`cacheKey: expected a non-empty Redis key, got ${JSON.stringify(cacheKey) ?? String(cacheKey)}`);
    }
    /** The settings, as validated. */
    this.cacheKey = cacheKey;
    this.maxAge = whole('maxAge', maxAge, 1);
    this.maxSkew = whole('maxSkew', maxSkew, 0);
    this.refresh = seconds('refresh', refresh, false);
    // Unset: the default, shortened to a third of a short maxAge.
    this.parameterRefresh = parameterRefresh === undefined
      ? Math.min(DEFAULT_PARAMETER_REFRESH, this.maxAge / 3)
      : seconds('parameterRefresh', parameterRefresh, false);
    if (this.parameterRefresh > this.maxAge / 3) {
      throw new RangeError(`parameterRefresh: expected at most a third of maxAge (${this.maxAge / 3} s), got ${parameterRefresh}: `
        + 'a document reused longer could go stale before the next call');
    }
    this.timeout = seconds('timeout', timeout, true);
    if (logger === null || typeof logger !== 'object' || !['warn', 'error', 'info'].every((m) => typeof logger[m] === 'function')) {
      throw new TypeError('logger: expected an object with warn, error and info methods');
    }
    if (typeof clock !== 'function') throw new TypeError('clock: expected a function returning unix seconds');
    this.#logger = logger;
    this.#clock = clock;
    this.#refreshMs = this.refresh * 1000;
    this.#fence = new SequenceFence(this.maxAge);
    this.#pace = new ParameterPace(this.parameterRefresh, this.maxAge, Math.random, this.refresh);
    const timeoutMs = Math.max(1, Math.round(this.timeout * 1000));
    this.#cache = openChannel(cache, { setting: 'cache', key: cacheKey, timeoutMs });
    this.#parameter = openChannel(parameter, { setting: 'parameter', key: cacheKey, timeoutMs });
    Object.freeze(this);
  }

  /** The factor to admit with now; never rejects for a failed read (rejects after `close()`). */
  read() {
    if (this.#closed) return Promise.reject(new Error('BulkFactorReader: read() after close()'));
    this.#counts.calls++;
    const memo = this.#memo;
    if (memo !== undefined && performance.now() < memo.until) return memo.promise;
    if (this.#pending !== undefined) return this.#pending;
    const pending = this.#fetch().then((reading) => {
      this.#memo = { promise: Promise.resolve(reading), until: performance.now() + jittered(this.#refreshMs) };
      return reading;
    });
    this.#pending = pending;
    const clear = () => {
      if (this.#pending === pending) this.#pending = undefined;
    };
    pending.then(clear, clear);
    return pending;
  }

  /** A snapshot of the counters. */
  counters() {
    const { calls, fetches, fullCapacity, remembered, parameterCalls, reads } = this.#counts;
    return {
      calls, fetches, fullCapacity, remembered, parameterCalls, reads: { cache: { ...reads.cache }, parameter: { ...reads.parameter } },
    };
  }

  /** Waits for a fetch in flight, then closes the channels' clients. Later reads reject. */
  async close() {
    this.#closed = true;
    await this.#pending?.catch(() => {});
    await Promise.all([this.#cache?.close(), this.#parameter?.close()]);
  }

  async #fetch() {
    this.#counts.fetches++;
    // One `now` per fetch: both judgements of the cache's document use the same clock.
    const fetched = await this.#cache?.fetch();
    const now = Math.trunc(this.#clock());
    const [cache, cacheRefused] = this.#fence.screen(fetched, now);
    let reading = this.#choose(cache, undefined, now);
    let parameter;
    let parameterRefused = false;
    if (reading.factor === undefined && this.#parameter !== undefined) {
      const [answer, called] = await this.#pace.fetch(this.#parameter, performance.now(), this.#fence.freshFor(now));
      if (called) this.#counts.parameterCalls++;
      [parameter, parameterRefused] = this.#fence.screen(answer, now);
      reading = this.#choose(cache, parameter, now);
    }
    reading = this.#fence.settle(reading, [cacheRefused, parameterRefused], now);
    for (const [name, channel, fetched] of [['cache', this.#cache, cache], ['parameter', this.#parameter, parameter]]) {
      if (fetched !== undefined && channel !== undefined) {
        const verdict = reading[name];
        const reads = this.#counts.reads[name];
        reads[verdict] = (reads[verdict] ?? 0) + 1;
        this.#note(name, channel, verdict, reading);
      }
    }
    if (reading.factor === undefined) this.#counts.fullCapacity++;
    else if (reading.source === REMEMBERED) this.#counts.remembered++;
    this.#noteOverall(reading);
    return Object.freeze(reading);
  }

  #choose(cache, parameter, now) {
    return chooseFactor(cache, parameter, { now, maxAge: this.maxAge, maxSkew: this.maxSkew });
  }

  #log(level, message) {
    try {
      this.#logger[level](message);
    } catch {
      // a failing logger must not fail the read
    }
  }

  #note(name, channel, verdict, reading) {
    const since = this.#trouble.get(name);
    if (verdict === 'usable' && since !== undefined) {
      this.#trouble.delete(name);
      this.#log('info', `capacity ${name} ${channel.label} is usable again after ${elapsed(since)} s`);
    } else if (verdict !== 'usable' && since === undefined) {
      this.#trouble.set(name, performance.now());
      this.#log('warn', `capacity ${name} ${channel.label} is not usable (${verdict}): ${part(reading.error, name)}`);
    }
  }

  #noteOverall(reading) {
    const kind = reading.factor === undefined ? 'full' : reading.source === REMEMBERED ? 'remembered' : undefined;
    const was = this.#episode;
    if (was?.kind === kind) return;
    this.#episode = undefined;
    if (kind === undefined) {
      if (was !== undefined) {
        const spent = was.kind === 'full' ? 'at full capacity' : 'acting on the remembered document';
        this.#log('info', `bulk factor read again from the ${reading.source} after ${elapsed(was.since)} s ${spent}: `
          + `${reading.state} is ${reading.factor}`);
      }
      return;
    }
    this.#episode = { since: performance.now(), kind };
    if (kind === 'remembered') {
      this.#log('warn', `no usable capacity document: acting on the remembered one (sequence ${reading.sequence}, ${reading.state}, `
        + `bulk ${reading.factor}, decided_at ${rfc3339(reading.decidedAt)}) until it is stale at `
        + `${rfc3339(reading.decidedAt + this.maxAge)} (${reading.error})`);
    } else {
      this.#log('error', 'no usable capacity document: admitting bulk work at full capacity until one is readable '
        + `again (${reading.error})`);
    }
  }
}

/** Unix seconds as RFC 3339 in UTC, whole seconds. */
function rfc3339(unix) {
  const date = new Date(unix * 1000);
  return Number.isNaN(date.getTime()) ? String(unix) : date.toISOString().replace('.000Z', 'Z');
}
