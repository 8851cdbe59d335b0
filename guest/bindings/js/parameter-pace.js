// How often a reader calls the parameter (docs/behaviour.md §9.1, "At fleet scale"); the same
// rule as the Python package's parameter_pace.py.
//
// Every service process runs a reader, so during a cache outage a fleet's readers all go to the
// parameter. SSM serves a standard parameter at 40 GetParameter calls a second by default: 1,000
// readers that each called it every 10 s would ask for 100 a second, be throttled, and (without a
// remembered document) fall back to full capacity exactly when the fleet is under stress. So the
// parameter is paced apart from the cache:
// - after a call that gave an answer, the next one is due `interval` seconds later;
// - after k calls in a row that failed (throttled, refused, timed out), `interval × 2^k` seconds
//   later, at most `maxAge / 3`, so a reader still tries a few times before the document it acts
//   on goes stale;
// - every delay is jittered by ±25 %, so readers that failed together do not retry together.
// Between calls the parameter's last answer is judged again at the reader's clock. `interval` 0
// turns pacing off: every fetch that needs the parameter calls it (tests, a local file).

/** Every delay is multiplied by a factor drawn uniformly from [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.25;

/** `seconds` spread by ±JITTER at random. */
export const jittered = (seconds, draw = Math.random) => seconds * (1 - JITTER + 2 * JITTER * draw());

/** When the parameter may be called again, and its last answer meanwhile. */
export class ParameterPace {
  #interval;
  #cap;
  #draw;
  #failures = 0;
  #dueMs = 0;
  #last;

  constructor(interval, maxAge, draw = Math.random) {
    this.#interval = interval;
    this.#cap = maxAge / 3;
    this.#draw = draw;
  }

  /** Calls in a row that failed. */
  get failures() {
    return this.#failures;
  }

  /** `[fetched, called]`: the parameter's answer at monotonic time `nowMs`, and whether a call was made for it. */
  async fetch(channel, nowMs) {
    const last = this.#last;
    if (last !== undefined && nowMs < this.#dueMs) {
      if (last.tag === 'failed') {
        const inS = ((this.#dueMs - nowMs) / 1000).toFixed(0);
        return [{ tag: 'failed', val: `${last.val} (next call to the parameter in ${inS} s)` }, false];
      }
      return [last, false];
    }
    const fetched = await channel.fetch();
    this.#failures = fetched?.tag === 'failed' ? this.#failures + 1 : 0;
    const delay = this.#failures ? Math.min(this.#cap, this.#interval * 2 ** this.#failures) : this.#interval;
    this.#dueMs = nowMs + jittered(delay, this.#draw) * 1000;
    this.#last = fetched;
    return [fetched, true];
  }
}
