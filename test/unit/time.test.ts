// Unit tests of exact duration parsing and formatting (TIME-1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decimalToBigNs, DurationError, formatNs, msProblem, msToNs, parseDurationNs, plainDecimal } from '../../src/time';

test('user durations convert to exact integer nanoseconds', () => {
  assert.equal(parseDurationNs('14.999 ms'), 14_999_000);
  assert.equal(parseDurationNs('0.5 ms'), 500_000);
  assert.equal(parseDurationNs('12.499999 ms'), 12_499_999);
  assert.equal(parseDurationNs('2 s'), 2_000_000_000);
  assert.equal(parseDurationNs('250 us'), 250_000);
  assert.equal(parseDurationNs('7 ns'), 7);
  assert.equal(parseDurationNs('15ms'), 15_000_000);
});

test('more decimals than whole nanoseconds allow is an error, never a rounding', () => {
  assert.throws(() => parseDurationNs('1.0000001 ms'), DurationError);
  assert.throws(() => parseDurationNs('1.5 ns'), DurationError);
  assert.throws(() => parseDurationNs('fifteen ms'), /not a duration/);
  assert.throws(() => parseDurationNs('-1 ms'), DurationError);
});

test('milliseconds from configs convert exactly', () => {
  assert.equal(msToNs(14.999), 14_999_000);
  assert.equal(msToNs(0.1), 100_000);
  assert.equal(msToNs(1e-6), 1);
  assert.throws(() => msToNs(-1, 'router.kv_event_lag_ms'), /router.kv_event_lag_ms/);
});

test('a bad millisecond value is named with its field and quoted as written', () => {
  assert.throws(() => msToNs(0.0000001, 'workload.requests[0].arrival_ms'), /^Error: workload\.requests\[0\]\.arrival_ms: 0\.0000001 ms has 7 decimals; ms allows at most 6/);
  assert.throws(() => msToNs(1e-10, 'lag'), /lag: 0\.0000000001 ms has 10 decimals/, 'never rounded to 0');
  assert.throws(() => msToNs(1e300, 'arrival_ms'), /arrival_ms: 1e\+300 ms is too large for the virtual clock/);
  assert.equal(msProblem(1e300, 1000), '1e+300 ms is above the limit of 1,000 ms');
  assert.equal(msProblem(2.5, 1000), null);
  assert.equal(msProblem(-0.5), '-0.5 is negative; a time must be ≥ 0 ms');
  assert.equal(msProblem(Number.NaN), 'NaN is not a number of milliseconds');
});

test('numbers are written out in plain digits, exponent included (1e300 is not "1e+3")', () => {
  assert.equal(plainDecimal(1e-7), '0.0000001');
  assert.equal(plainDecimal(1.5e-7), '0.00000015');
  assert.equal(plainDecimal(1.5e21), '1500000000000000000000');
  assert.equal(plainDecimal(1e300), `1${'0'.repeat(300)}`);
  assert.equal(plainDecimal(14.999), '14.999');
  assert.equal(msToNs(2e-6), 2);
  assert.throws(() => msToNs(1.5e-6), /0\.0000015 ms has 7 decimals/);
});

test('formatting shows only the decimals needed', () => {
  assert.equal(formatNs(14_999_000), '14.999 ms');
  assert.equal(formatNs(15_000_000), '15 ms');
  assert.equal(formatNs(12_499_999), '12.499999 ms');
  assert.equal(formatNs(0), '0 ms');
});

test('formatting takes bigint nanoseconds too, beyond 2^53', () => {
  assert.equal(formatNs(14_999_000n), '14.999 ms');
  assert.equal(formatNs(1_718_000_000_123_456_789n), '1718000000123.456789 ms');
});

test('decimal numbers from logs convert to exact bigint nanoseconds', () => {
  assert.equal(decimalToBigNs('10.5', 'ms', 'exact'), 10_500_000n);
  assert.equal(decimalToBigNs('1718000000.123456789', 's', 'exact'), 1_718_000_000_123_456_789n);
  assert.equal(decimalToBigNs('1.5e3', 'ms', 'exact'), 1_500_000_000n);
  assert.equal(decimalToBigNs('1718000000123456789', 'ns', 'exact'), 1_718_000_000_123_456_789n);
});

test('finer than a nanosecond is an error when exact, rounded half up when nearest', () => {
  assert.throws(() => decimalToBigNs('2.5', 'ns', 'exact'), /not a whole number of nanoseconds/);
  assert.equal(decimalToBigNs('25e-1', 'ns', 'nearest'), 3n);
  assert.equal(decimalToBigNs('12.4999994', 'ms', 'nearest'), 12_499_999n);
  assert.equal(decimalToBigNs('0.30000000000000004', 's', 'nearest'), 300_000_000n);
});

test('times beyond 64 bits of nanoseconds, negative or not numbers are errors', () => {
  assert.throws(() => decimalToBigNs('18446744073.709551616', 's', 'exact'), /too large/);
  assert.equal(decimalToBigNs('18446744073.709551615', 's', 'exact'), (1n << 64n) - 1n);
  assert.throws(() => decimalToBigNs('-1', 'ms', 'nearest'), DurationError);
  assert.throws(() => decimalToBigNs('1e99999', 'ms', 'nearest'), DurationError);
  assert.throws(() => decimalToBigNs('ten', 'ms', 'nearest'), DurationError);
});

/** msToNs and msProblem as they read every number: written out in plain decimal digits, then parsed exactly. */
function msToNsByText(ms: number, max = Number.MAX_SAFE_INTEGER / 1e6): number | string {
  if (!Number.isFinite(ms)) return 'not a number';
  if (ms < 0) return 'negative';
  if (ms > max) return 'above the limit';
  const text = plainDecimal(ms);
  const decimals = text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
  if (decimals > 6) return 'too many decimals';
  return parseDurationNs(`${text} ms`);
}

test('milliseconds convert as their decimal text does, whether or not a number takes the short way (below 2^32 ms)', () => {
  const micros = fc.oneof(fc.integer({ min: 0, max: 2 ** 32 * 1e6 }), fc.integer({ min: 0, max: 10_000_000 })).map((n) => n / 1e6);
  const near = fc.tuple(micros, fc.integer({ min: -3, max: 3 })).map(([ms, steps]) => {
    let value = ms;
    for (let i = 0; i < Math.abs(steps); i++) value = steps > 0 ? nextUp(value) : nextDown(value);
    return value;
  });
  const any = fc.oneof(micros, near, fc.double({ min: -1, max: 2 ** 33, noNaN: true }), fc.constant(-0), fc.constant(2 ** 32 - 1e-6), fc.constant(2 ** 32), fc.integer({ min: 0, max: 2 ** 40 }));
  const max = fc.oneof(fc.constant(undefined), fc.constant(1000), fc.double({ min: 0, max: 2 ** 33, noNaN: true }));
  fc.assert(
    fc.property(any, max, (ms, limit) => {
      const expected = msToNsByText(ms, limit);
      const problem = msProblem(ms, limit);
      assert.equal(problem === null, typeof expected === 'number', `msProblem(${ms}, ${limit}): ${problem}`);
      if (typeof expected === 'number') assert.ok(Object.is(msToNs(ms, 'value', limit), expected), `msToNs(${ms}, ${limit})`);
      else assert.throws(() => msToNs(ms, 'value', limit), DurationError);
    }),
    { numRuns: 20_000, seed: 1893 },
  );
});

/** The next double above a non-negative finite one (and below, for nextDown). */
function nextUp(value: number): number {
  if (value === 0) return Number.MIN_VALUE;
  const view = new Float64Array([value]);
  const bits = new BigUint64Array(view.buffer);
  bits[0] += 1n;
  return view[0];
}
function nextDown(value: number): number {
  if (value <= 0) return value;
  const view = new Float64Array([value]);
  const bits = new BigUint64Array(view.buffer);
  bits[0] -= 1n;
  return view[0];
}
