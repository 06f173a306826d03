// Virtual time: integer nanoseconds (TIME-1), exact parsing of user durations, and formatting.
// No floating-point clock anywhere: "14.999 ms" is 14,999,000 ns, exactly.

/** Integer nanoseconds of virtual time. */
export type Nanos = number;

export const NS_PER_US = 1_000;
export const NS_PER_MS = 1_000_000;
export const NS_PER_S = 1_000_000_000;

const UNIT_SCALE: Record<string, { ns: number; decimals: number }> = {
  ns: { ns: 1, decimals: 0 },
  us: { ns: NS_PER_US, decimals: 3 },
  µs: { ns: NS_PER_US, decimals: 3 },
  ms: { ns: NS_PER_MS, decimals: 6 },
  s: { ns: NS_PER_S, decimals: 9 },
};

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
  const scale = UNIT_SCALE[unit];
  if (fraction.length > scale.decimals) {
    throw new DurationError(
      `"${text}" has ${fraction.length} decimals; ${unit} allows at most ${scale.decimals} (time is whole nanoseconds)`,
    );
  }
  const fractionNs = fraction === '' ? 0 : Number(fraction.padEnd(scale.decimals, '0')) * (scale.ns / 10 ** scale.decimals);
  const total = Number(whole) * scale.ns + fractionNs;
  if (!Number.isSafeInteger(total)) {
    throw new DurationError(`"${text}" is too large for the virtual clock`);
  }
  return total;
}

/** Converts a millisecond number from a config or trace (up to six decimals) to exact nanoseconds. */
export function msToNs(ms: number, where = 'value'): Nanos {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new DurationError(`${where}: ${ms} is not a non-negative number of milliseconds`);
  }
  return parseDurationNs(`${decimalString(ms)} ms`);
}

function decimalString(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toFixed(9).replace(/\.?0+$/, '');
}

/** Formats nanoseconds as milliseconds with only the decimals needed: 14999000 → "14.999 ms". */
export function formatNs(ns: Nanos): string {
  const sign = ns < 0 ? '-' : '';
  const abs = Math.abs(ns);
  const whole = Math.floor(abs / NS_PER_MS);
  const fraction = abs % NS_PER_MS;
  if (fraction === 0) return `${sign}${whole} ms`;
  const digits = String(fraction).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}.${digits} ms`;
}

/** Milliseconds as a number, for reports only (never fed back into the clock). */
export function nsToMs(ns: Nanos): number {
  return ns / NS_PER_MS;
}
