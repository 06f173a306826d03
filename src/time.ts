// Virtual time: integer nanoseconds (TIME-1), exact parsing of user durations, and formatting.
// No floating-point clock anywhere: "14.999 ms" is 14,999,000 ns, exactly.

/** Integer nanoseconds of virtual time. */
export type Nanos = number;

export const NS_PER_US = 1_000;
export const NS_PER_MS = 1_000_000;
export const NS_PER_S = 1_000_000_000;
const NS_PER_MS_BIG = BigInt(NS_PER_MS);

/** A unit a time can be written in. */
export type TimeUnit = 'ns' | 'us' | 'µs' | 'ms' | 's';

/** Decimal places each unit has down to a whole nanosecond (1 ms = 10^6 ns). */
const UNIT_DECIMALS: Record<TimeUnit, number> = { ns: 0, us: 3, µs: 3, ms: 6, s: 9 };

const DURATION_PATTERN = /^\s*(\d+)(?:\.(\d+))?\s*(ns|us|µs|ms|s)\s*$/;

export class DurationError extends Error {}

/**
 * Parses "14.999 ms", "0.5 ms", "2 s", "250 us", "7 ns" into integer nanoseconds.
 * A value with more decimals than the unit can express exactly (e.g. "1.0000001 ms") is an error,
 * never a silent rounding.
 */
export function parseDurationNs(text: string): Nanos {
  const match = DURATION_PATTERN.exec(text);
  if (!match) {
    throw new DurationError(`"${text}" is not a duration: write a number and a unit (ns, us, ms, s), e.g. "14.999 ms"`);
  }
  const [, whole, fraction = '', unit] = match;
  const decimals = UNIT_DECIMALS[unit as TimeUnit];
  if (fraction.length > decimals) {
    throw new DurationError(
      `"${text}" has ${fraction.length} decimals; ${unit} allows at most ${decimals} (time is whole nanoseconds)`,
    );
  }
  const total = decimalToBigNs(fraction === '' ? whole : `${whole}.${fraction}`, unit as TimeUnit, 'exact');
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new DurationError(`"${text}" is too large for the virtual clock`);
  }
  return Number(total);
}

const DECIMAL_PATTERN = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,4}))?$/;
const U64_LIMIT = 1n << 64n;

/**
 * Exact nanoseconds, as a bigint, of a non-negative decimal number written in `unit`: the text of
 * a JSON number such as "1718000000.123456" (s) or "10.5" (ms). Unlike parseDurationNs the result
 * may exceed 2^53 ns (epoch timestamps do) but must fit in 64 bits. A value finer than a
 * nanosecond is an error with 'exact'; with 'nearest' it is rounded half up (a float captured in
 * a log carries no more precision than its digits).
 */
export function decimalToBigNs(text: string, unit: TimeUnit, rounding: 'exact' | 'nearest'): bigint {
  const match = DECIMAL_PATTERN.exec(text);
  if (!match) throw new DurationError(`${text} is not a non-negative decimal number`);
  const [, whole, fraction = '', exponent = '0'] = match;
  const scale = UNIT_DECIMALS[unit] + Number(exponent) - fraction.length;
  const digits = BigInt(whole + fraction);
  const total = scale >= 0 ? digits * 10n ** BigInt(scale) : divideRounded(text, unit, digits, 10n ** BigInt(-scale), rounding);
  if (total >= U64_LIMIT) throw new DurationError(`${text} ${unit} is too large: time must fit in 64 bits of nanoseconds`);
  return total;
}

function divideRounded(text: string, unit: TimeUnit, dividend: bigint, divisor: bigint, rounding: 'exact' | 'nearest'): bigint {
  const quotient = dividend / divisor;
  const remainder = dividend % divisor;
  if (remainder === 0n) return quotient;
  if (rounding === 'exact') throw new DurationError(`${text} ${unit} is not a whole number of nanoseconds`);
  return remainder * 2n >= divisor ? quotient + 1n : quotient;
}

/** The largest millisecond value the virtual clock holds (2^53 − 1 ns, about 104 days). */
const CLOCK_LIMIT_MS = Number.MAX_SAFE_INTEGER / NS_PER_MS;

/**
 * Why `ms` is not an exact time in whole nanoseconds within `max` milliseconds, or null when it
 * is one. The problem quotes the value as written ("0.0000001 has 7 decimals…", "1e+300 ms is
 * above the limit…") so a reader can name the field it came from in front of it.
 */
export function msProblem(ms: number, max: number = CLOCK_LIMIT_MS): string | null {
  if (exactMsNs(ms, max) !== null) return null;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return `${String(ms)} is not a number of milliseconds`;
  if (ms < 0) return `${String(ms)} is negative; a time must be ≥ 0 ms`;
  if (ms > max) {
    return max === CLOCK_LIMIT_MS ? `${String(ms)} ms is too large for the virtual clock` : `${String(ms)} ms is above the limit of ${max.toLocaleString('en-US')} ms`;
  }
  const text = plainDecimal(ms);
  const decimals = text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
  if (decimals > UNIT_DECIMALS.ms) return `${text} ms has ${decimals} decimals; ms allows at most ${UNIT_DECIMALS.ms} (time is whole nanoseconds)`;
  return null;
}

/** Below this many ms two numbers of at most six decimals are more than a double's step apart (2^-20 ms here). */
const EXACT_MS_LIMIT = 2 ** 32;

/**
 * The nanoseconds of `ms` when it is at most `max`, below EXACT_MS_LIMIT and reads with at most six
 * decimals; else null (then the decimal path of msProblem and msToNs decides). The same nanoseconds
 * as that path, without writing the number out: a number of at most six decimals n × 10^-6 is
 * the only one of them that rounds to `ms` (two differ by 10^-6, more than a double's step below
 * 2^32), so its shortest text has at most six decimals and reads n × 10^-6; and n / 10^6, rounded
 * once, gives `ms` back exactly when n is that number.
 */
function exactMsNs(ms: number, max: number): Nanos | null {
  if (typeof ms !== 'number' || !(ms >= 0 && ms <= max && ms < EXACT_MS_LIMIT)) return null;
  const ns = Math.round(ms * NS_PER_MS);
  // + 0: -0 ms is 0 ns.
  return ns / NS_PER_MS === ms ? ns + 0 : null;
}

/** Converts a millisecond number from a config or trace (up to six decimals) to exact nanoseconds; errors start with `where`. */
export function msToNs(ms: number, where = 'value', max?: number): Nanos {
  const exact = exactMsNs(ms, max ?? CLOCK_LIMIT_MS);
  if (exact !== null) return exact;
  const problem = msProblem(ms, max);
  if (problem !== null) throw new DurationError(`${where}: ${problem}`);
  return parseDurationNs(`${plainDecimal(ms)} ms`);
}

/**
 * A number written out in plain decimal digits, exactly as its shortest round-trip form reads:
 * 1e-7 → "0.0000001", 1.5e+21 → "1500000000000000000000" (never "1e+3" for 1e300).
 */
export function plainDecimal(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** The last instant of the virtual clock (whole nanoseconds kept exactly in a double): about 104 days. */
export const LAST_VIRTUAL_NS = Number.MAX_SAFE_INTEGER;

/** Virtual time as days, for instants too far out to read in milliseconds: "105.2 days". */
export function virtualDays(ns: number): string {
  return Number.isFinite(ns) ? `${(ns / 86_400e9).toFixed(1)} days` : 'an infinite time';
}

/**
 * A run that would go past the end of the virtual clock (LAST_VIRTUAL_NS): its pass times, delays
 * or output lengths add up to more than about 104 days of virtual time. A property of the input
 * (each value may be within its limit while their sum is not), reported as bad input.
 */
export class VirtualClockError extends Error {
  /** `what`: the instant or the pass that does not fit ("the pass completion due at 105.2 days"). */
  constructor(what: string) {
    super(`the run would go past the end of the virtual clock (about ${virtualDays(LAST_VIRTUAL_NS)} of virtual time): ${what}; shorten the pass times, delays or output lengths`);
    this.name = 'VirtualClockError';
  }
}

/** Formats nanoseconds as milliseconds with only the decimals needed: 14999000 → "14.999 ms". */
export function formatNs(ns: Nanos | bigint): string {
  const value = typeof ns === 'bigint' ? ns : BigInt(Math.round(ns));
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  const whole = abs / NS_PER_MS_BIG;
  const fraction = abs % NS_PER_MS_BIG;
  if (fraction === 0n) return `${sign}${whole} ms`;
  const digits = String(fraction).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}.${digits} ms`;
}

/** Milliseconds as a number, for reports only (never fed back into the clock). */
export function nsToMs(ns: Nanos): number {
  return ns / NS_PER_MS;
}
