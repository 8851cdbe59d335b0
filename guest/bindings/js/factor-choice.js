// Which published document a service acts on (docs/behaviour.md §9.1), decided by the admission
// component's pure `factor-choice.choose-factor` (WIT capacity:sentinel@3.2.0): the cache's
// document when usable, else the parameter's, else none (full capacity). This wraps jco's export
// the way index.js wraps the admission functions: inputs checked first, plain numbers out
// (jco's u64/s64 BigInts become numbers), `undefined` for an absent option, and the component's
// `reason` named `error` as in the Python package's FactorReading.
import { factorChoice } from './gen/admission/admission.js';
import { instant, u32 } from './checks.js';

/** What the rule made of one channel's read, as the WIT names it. */
export const ChannelVerdict = Object.freeze({
  NOT_READ: 'not-read',
  USABLE: 'usable',
  READ_FAILED: 'read-failed',
  UNREADABLE: 'unreadable',
  OUT_OF_RANGE: 'out-of-range',
  STALE: 'stale',
  FROM_THE_FUTURE: 'from-the-future',
});

function channelRead(name, read) {
  if (read === undefined || read === null) return { tag: 'not-read' };
  if (typeof read !== 'object') {
    throw new TypeError(`${name}: expected undefined, {tag: 'document' | 'failed', val: string} or {tag: 'not-read'}`);
  }
  if (read.tag === 'not-read') return { tag: 'not-read' };
  if (read.tag !== 'document' && read.tag !== 'failed') {
    throw new TypeError(`${name}: the tag is 'not-read', 'document' or 'failed', not ${JSON.stringify(read.tag)}`);
  }
  if (typeof read.val !== 'string') throw new TypeError(`${name}.val: expected a string, got ${typeof read.val}`);
  return { tag: read.tag, val: read.val };
}

const number = (v) => (v === undefined ? undefined : Number(v));

/**
 * The document to act on, from what each channel returned: `{tag: 'document', val: text}`,
 * `{tag: 'failed', val: why}`, or undefined (or `{tag: 'not-read'}`) when the channel is not
 * configured or was not read. `now` is unix seconds (a safe integer or a BigInt); `maxAge` and
 * `maxSkew` are whole seconds in u32.
 */
export function chooseFactor(cache, parameter, { now, maxAge, maxSkew } = {}) {
  const c = factorChoice.chooseFactor({
    cache: channelRead('cache', cache),
    parameter: channelRead('parameter', parameter),
    now: instant('now', now),
    maxAgeS: u32('maxAge', maxAge),
    maxSkewS: u32('maxSkew', maxSkew),
  });
  return {
    factor: c.factor,
    source: c.source,
    state: c.state,
    sequence: number(c.sequence),
    decidedAt: number(c.decidedAt),
    decidedAtDate: c.decidedAt === undefined ? undefined : new Date(Number(c.decidedAt) * 1000),
    ageS: number(c.ageS),
    error: c.reason,
    cache: c.cache,
    parameter: c.parameter,
  };
}
