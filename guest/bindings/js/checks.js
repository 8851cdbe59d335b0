// Argument checks shared by the wrappers (index.js, factor-choice.js) and the reader: each throws
// a RangeError or TypeError naming the argument, before anything reaches the component.

export const U32_MAX = 2 ** 32 - 1;
const S64_MIN = -(2n ** 63n);
const S64_MAX = 2n ** 63n - 1n;

/** An integer in u32. */
export function u32(name, value) {
  if (!Number.isInteger(value) || value < 0 || value > U32_MAX) {
    throw new RangeError(`${name}: expected an integer from 0 to ${U32_MAX}, got ${String(value)}`);
  }
  return value;
}

/** Unix seconds as a safe integer or a BigInt, to jco's BigInt s64. */
export function instant(name, value) {
  let big;
  if (typeof value === 'bigint') big = value;
  else if (Number.isSafeInteger(value)) big = BigInt(value);
  else throw new RangeError(`${name}: expected unix seconds as a safe integer or a BigInt, got ${String(value)}`);
  if (big < S64_MIN || big > S64_MAX) throw new RangeError(`${name}: ${big} is outside s64`);
  return big;
}

/** A string. */
export function text(name, value) {
  if (typeof value !== 'string') throw new TypeError(`${name}: expected a string, got ${typeof value}`);
  return value;
}
