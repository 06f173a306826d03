// Unit tests of exact duration parsing and formatting (TIME-1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurationError, formatNs, msToNs, parseDurationNs } from '../../src/time';

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

test('formatting shows only the decimals needed', () => {
  assert.equal(formatNs(14_999_000), '14.999 ms');
  assert.equal(formatNs(15_000_000), '15 ms');
  assert.equal(formatNs(12_499_999), '12.499999 ms');
  assert.equal(formatNs(0), '0 ms');
});
