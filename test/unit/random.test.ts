// Unit tests of the named, seeded random streams (DET-1): reproducible per seed and name,
// independent across names, and `below` within its bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RandomStream, RandomStreams } from '../../src/random';

function draws(stream: RandomStream, count: number): number[] {
  return Array.from({ length: count }, () => stream.next());
}

test('the same seed and name give the same sequence', () => {
  const first = draws(new RandomStreams(1893).stream('router.tie_break'), 20);
  const second = draws(new RandomStreams(1893).stream('router.tie_break'), 20);
  assert.deepEqual(first, second);
  for (const draw of first) assert.ok(draw >= 0 && draw < 1, `${draw} is in [0, 1)`);
});

test('another seed or another name gives another sequence', () => {
  const base = draws(new RandomStreams(1893).stream('router.tie_break'), 5);
  assert.notDeepEqual(draws(new RandomStreams(1894).stream('router.tie_break'), 5), base);
  assert.notDeepEqual(draws(new RandomStreams(1893).stream('workload'), 5), base);
});

test('drawing from one stream does not shift another', () => {
  const quiet = new RandomStreams(7).stream('router.tie_break');
  const busy = new RandomStreams(7);
  draws(busy.stream('workload'), 1000);
  const firstTieBreak = busy.stream('router.tie_break').next();
  draws(busy.stream('workload'), 17);
  const laterTieBreaks = draws(busy.stream('router.tie_break'), 10);
  assert.deepEqual([firstTieBreak, ...laterTieBreaks], draws(quiet, 11));
});

test('a stream is created once per name and continues where it left off', () => {
  const streams = new RandomStreams(42);
  assert.equal(streams.stream('a'), streams.stream('a'));
  const whole = draws(new RandomStreams(42).stream('a'), 6);
  const split = [...draws(streams.stream('a'), 3), ...draws(streams.stream('a'), 3)];
  assert.deepEqual(split, whole);
});

test('below(n) gives integers in [0, n) and reaches every one of them', () => {
  const stream = new RandomStreams(3).stream('bounds');
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const value = stream.below(5);
    assert.ok(Number.isInteger(value) && value >= 0 && value < 5, `${value} is in [0, 5)`);
    seen.add(value);
  }
  assert.deepEqual([...seen].sort(), [0, 1, 2, 3, 4]);
  for (let i = 0; i < 100; i++) assert.equal(stream.below(1), 0);
});

test('below refuses a bound that is not a positive integer, and a seed must be an integer', () => {
  const stream = new RandomStreams(3).stream('bounds');
  for (const bound of [0, -1, 2.5, Number.NaN]) assert.throws(() => stream.below(bound), RangeError);
  assert.throws(() => new RandomStreams(1.5), RangeError);
});
