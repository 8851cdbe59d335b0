// A reader never goes back to an older decision (docs/behaviour.md §9.1, "Never back"): the
// Node twin of the Python package's sequence_fence.py, the same rule.
//
// Each published document carries the sentinel's `sequence`, which grows by one per decided
// minute. The channels refuse a lower sequence than the one they hold, but SSM has no
// compare-and-set (a stale sentinel's late write can land in the moment between another one's
// check and write), and a reader that falls back from the cache to the parameter can meet an
// older document there. So the reader remembers the newest document it has acted on, and while
// that one is fresh (not older than `maxAge`) a document with a lower sequence is refused as
// superseded: the reader keeps acting on the newest it has. The same holds when neither channel
// gives a usable document at all (the cache is down and the parameter throttled): the reader
// acts on the newest it has, `source: 'remembered'`, until that one is stale, and only then runs
// at full capacity. Once the newest is stale, the fence lifts (a store that was reset starts
// again at sequence 1, and its documents are accepted).

/** The verdict of a channel whose document was older than one already acted on. */
export const SUPERSEDED = 'superseded';
/** The source of a reading that neither channel gave: the newest document acted on, still fresh. */
export const REMEMBERED = 'remembered';

/** A document without a whole-number sequence (a string, a boolean, a fraction, none at all). */
const UNORDERED = Symbol('unordered');

/** The document's sequence, UNORDERED when none orders it, undefined when it is no JSON object. */
function sequenceOf(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  return Number.isSafeInteger(doc.sequence) ? doc.sequence : UNORDERED;
}

export class SequenceFence {
  #maxAge;
  #newest;

  constructor(maxAge) {
    this.#maxAge = maxAge;
  }

  #inForce(now) {
    const newest = this.#newest;
    if (newest === undefined || newest.decidedAt === undefined || now - newest.decidedAt > this.#maxAge) return undefined;
    return newest;
  }

  /** How many more seconds the newest document acted on stays fresh; undefined without one. */
  freshFor(now) {
    const newest = this.#inForce(now);
    return newest === undefined ? undefined : this.#maxAge - (now - newest.decidedAt);
  }

  /** `[fetched, refused]`: the channel read, or a failed read when it is older than the newest in force. */
  screen(fetched, now) {
    const newest = this.#inForce(now);
    if (fetched === undefined || newest?.sequence === undefined || fetched.tag !== 'document') return [fetched, false];
    const sequence = sequenceOf(fetched.val);
    if (sequence === UNORDERED) {
      // It cannot be ordered against the document in force, so it cannot be shown newer.
      const why = `superseded: the document's sequence is not a whole number, so it cannot be ordered after sequence ${newest.sequence} `
        + 'already read (the sentinel writes whole numbers; the newer decision stands)';
      return [{ tag: 'failed', val: why }, true];
    }
    if (sequence === undefined || sequence >= newest.sequence) return [fetched, false];
    const why = `superseded: sequence ${sequence} is older than sequence ${newest.sequence} already read `
      + '(a late write of a sentinel that lost its lease; the newer decision stands)';
    return [{ tag: 'failed', val: why }, true];
  }

  /**
   * The reading to act on: the component's, with refused channels marked superseded; or, when the
   * component found nothing usable (the channels failed, or the fence refused what they gave),
   * the newest document in force, re-aged, with `source: 'remembered'`. Remembers what is acted on.
   */
  settle(reading, [cacheRefused, parameterRefused], now) {
    const settled = { ...reading };
    if (cacheRefused) settled.cache = SUPERSEDED;
    if (parameterRefused) settled.parameter = SUPERSEDED;
    const newest = this.#inForce(now);
    if (settled.factor === undefined && newest !== undefined) {
      return {
        ...newest, source: REMEMBERED, ageS: now - newest.decidedAt, error: settled.error, cache: settled.cache, parameter: settled.parameter,
      };
    }
    if (settled.factor !== undefined) this.#newest = settled;
    return settled;
  }
}
