// Numbers as the exact decimals they are written as: a bandwidth of 0.7 GB/s is 7/10, a weight of
// 0.1 is 1/10, so arithmetic the rules define on them (TIME-2's transfer times, SCORE-3's ties) can
// be done in integers, where floating point would leave dust (21,609,054,208 / 0.7 is
// 30,870,077,440.000004 in doubles; 7/3 computed two ways differs in its last bit).
import { plainDecimal } from './time';

/** A non-negative finite number as the integer `digits` over 10^`scale`. */
export interface ExactDecimal {
  digits: bigint;
  scale: number;
}

/** The exact decimals of the few bandwidths, sizes and weights a run uses, by value. */
const known = new Map<number, ExactDecimal>();
const KNOWN_AT_MOST = 4096;

/** `value` exactly as its shortest decimal reads (the text a config gives it). */
export function exactDecimal(value: number): ExactDecimal {
  let exact = known.get(value);
  if (exact === undefined) {
    if (!(value >= 0) || !Number.isFinite(value)) throw new RangeError(`${value} is not a non-negative finite number`);
    const [whole, fraction = ''] = plainDecimal(value).split('.');
    exact = { digits: BigInt(whole + fraction), scale: fraction.length };
    if (known.size < KNOWN_AT_MOST) known.set(value, exact);
  }
  return exact;
}

/** The digits of `exact` at a larger scale (the same number over 10^`scale`). */
export function atScale(exact: ExactDecimal, scale: number): bigint {
  if (scale < exact.scale) throw new RangeError(`scale ${scale} is below the number's own ${exact.scale}`);
  return exact.digits * 10n ** BigInt(scale - exact.scale);
}

/** ceil(a / b) of non-negative decimals, exactly, as a number (the caller knows it fits). */
export function ceilQuotient(a: number, b: number): number {
  const top = exactDecimal(a);
  const bottom = exactDecimal(b);
  if (bottom.digits === 0n) throw new RangeError('division by zero');
  const scale = Math.max(top.scale, bottom.scale);
  const numerator = atScale(top, scale);
  const denominator = atScale(bottom, scale);
  return Number((numerator + denominator - 1n) / denominator);
}
