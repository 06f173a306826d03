// A step's measured values are shown as measured only when the step asserted them
// (steps/support/measured.ts, src/signoff/model.ts measuredText): a value asserted before or after
// it was recorded is asserted; one the step never asserted is shown as recorded, not asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measurement } from '../../src/report/evidence';
import { measuredText } from '../../src/signoff/model';
import { assertedOn, awaitingAssertion, stepBegins } from '../../steps/support/measured';

test('a value is asserted when the step asserts that number, before or after recording it; another number or an object does not', () => {
  stepBegins();
  assertedOn(7);
  const before = awaitingAssertion(measurement('before', 7, 'ms'));
  const after = awaitingAssertion(measurement('after', 3, 'ms'));
  const never = awaitingAssertion(measurement('never', 5, 'ms'));
  assert.deepEqual([before.asserted, after.asserted, never.asserted], [true, false, false]);
  assertedOn({ value: 5 });
  assertedOn('3');
  assert.equal(after.asserted, false);
  assertedOn(3);
  assert.deepEqual([before.asserted, after.asserted, never.asserted], [true, true, false]);
});

test('the sign-off shows an unasserted value as recorded, not asserted; an asserted one, or one from older evidence, as it reads', () => {
  assert.equal(measuredText({ ...measurement('lag', 5, 'ms'), asserted: false }), 'lag = 5 ms (recorded by its step, not asserted)');
  assert.equal(measuredText({ ...measurement('lag', 5, 'ms'), asserted: true }), 'lag = 5 ms');
  assert.equal(measuredText(measurement('lag', 5, 'ms')), 'lag = 5 ms');
});

test('a new step forgets what the step before it asserted', () => {
  stepBegins();
  assertedOn(9);
  stepBegins();
  assert.equal(awaitingAssertion(measurement('later', 9)).asserted, false);
});
