// How often a reader calls the parameter (docs/behaviour.md §9.1, "At fleet scale"); the same
// rule as the Python package's parameter_pace.py.
//
// Every service process runs a reader, so during a cache outage a fleet's readers all go to the
// parameter. SSM serves a standard parameter at 40 GetParameter calls a second by default: 1,000
// readers that each called it every 10 s would ask for 100 a second, be throttled, and (without a
// remembered document) fall back to full capacity exactly when the fleet is under stress. So the
// parameter is paced apart from the cache:
// - the first call after the cache stops serving (the pace was not consulted for longer than
//   `interval` and the reader's refresh), while the reader still acts on a fresh remembered
//   document, waits a random part of `interval` (at most half the time that document stays
//   fresh), so a fleet whose cache failed at once does not call at once;
// - after a call that gave an answer, the next one is due `interval` seconds later;
// - after k calls in a row that failed (throttled, refused, timed out), `interval × 2^k` seconds
//   later, at most `maxAge / 3`, and at most half the time the remembered document stays fresh,
//   so a reader tries again, and again, before it would have to run at full capacity;
// - every delay is jittered by ±25 %, so readers that failed together do not retry together.
// Between calls the parameter's last answer is judged again at the reader's clock. `interval` 0
// turns pacing off: every fetch that needs the parameter calls it (tests, a local file).

/** Every delay is multiplied by a factor drawn uniformly from [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.25;

/** `seconds` spread by ±JITTER at random. */
export const jittered = (seconds, draw = Math.random) => seconds * (1 - JITTER + 2 * JITTER * draw());

/** The shortest wait before a retry, seconds. */
const FLOOR = 1;

/** When the parameter may be called again, and its last answer meanwhile. */
export class ParameterPace {
  #interval;
  #cap;
  #draw;
  #failures = 0;
  #dueMs = 0;
  #last;
  #consultedMs;
  #idleAfterMs;
  #spreading = false;

  constructor(interval, maxAge, draw = Math.random, refresh = 0) {
    this.#interval = interval;
    // Unconsulted this long (the cache served meanwhile), the next need starts a new outage.
    this.#idleAfterMs = (Math.max(interval, refresh) * (1 + JITTER) + 1) * 1000;
    this.#cap = maxAge / 3;
    this.#draw = draw;
  }

  /** Calls in a row that failed. */
  get failures() {
    return this.#failures;
  }

  /**
   * `[fetched, called]`: the parameter's answer at monotonic time `nowMs` (undefined: not read
   * yet, its first call is being spread), and whether a call was made for it. `freshFor`: how many
   * more seconds the document the reader acts on stays fresh, undefined without one.
   */
  async fetch(channel, nowMs, freshFor) {
    const idle = this.#consultedMs === undefined || nowMs - this.#consultedMs > this.#idleAfterMs;
    this.#consultedMs = nowMs;
    const last = this.#last;
    if (nowMs < this.#dueMs) {
      if (last === undefined) return [undefined, false];
      if (last.tag === 'failed') {
        const inS = ((this.#dueMs - nowMs) / 1000).toFixed(0);
        return [{ tag: 'failed', val: `${last.val} (next call to the parameter in ${inS} s)` }, false];
      }
      return [last, false];
    }
    if (idle && !this.#spreading && freshFor !== undefined && this.#interval > 0) {
      this.#spreading = true;
      this.#last = undefined;
      this.#dueMs = nowMs + this.#draw() * Math.min(this.#interval, freshFor / 2) * 1000;
      return [undefined, false];
    }
    this.#spreading = false;
    const fetched = await channel.fetch();
    this.#failures = fetched?.tag === 'failed' ? this.#failures + 1 : 0;
    let delay = this.#interval;
    if (this.#failures) {
      delay = Math.min(this.#cap, this.#interval * 2 ** this.#failures);
      if (freshFor !== undefined) delay = Math.min(delay, Math.max(FLOOR, freshFor / 2));
    }
    this.#dueMs = nowMs + jittered(delay, this.#draw) * 1000;
    this.#last = fetched;
    return [fetched, true];
  }
}
