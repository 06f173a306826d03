// Unit tests of `npm run bench -- loops` (bench/loops.ts) on made-up timings, never timed: a loop's
// figure is its wall time over the plain suite run's, met at or under its target (qualify 3×, npm
// test 18×) and missed above it; a loop or a plain run that did not run to its end is not measured,
// which never meets a target; the line printed names both walls, their CPU and the load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeTarget, targetMet } from '../../bench/harness';
import { loopLine, loopRatio, LOOP_TARGETS, type Timed } from '../../bench/loops';

const run = (wall_s: number, ok = true, cpu_s: number | null = wall_s * 1.5): Timed => ({ wall_s, cpu_s, ok, output: '' });

test('a loop is its wall over the plain run\'s: met at or under its target, missed above it', () => {
  const plain = run(3.4);
  assert.equal(loopRatio('npm test', run(3.4 * 18), plain, LOOP_TARGETS.test).value.toFixed(6), (18).toFixed(6));
  assert.equal(targetMet(loopRatio('npm test', run(3.4 * 17.9), plain, LOOP_TARGETS.test)), true);
  assert.equal(targetMet(loopRatio('npm test', run(143.7), plain, LOOP_TARGETS.test)), false);
  assert.equal(targetMet(loopRatio('npm run qualify', run(10), plain, LOOP_TARGETS.qualify)), true);
  assert.equal(targetMet(loopRatio('npm run qualify', run(33.2), plain, LOOP_TARGETS.qualify)), false);
  assert.equal(describeTarget(loopRatio('npm run qualify', run(33.2), plain, LOOP_TARGETS.qualify)), 'loops: npm run qualify beside a plain suite run 9.8 × (target ≤ 3.0 ×): MISSED');
});

test('a loop or a plain run that did not run to its end is not measured, and never meets its target', () => {
  for (const [loop, plain] of [
    [run(1, false), run(3.4)],
    [run(1), run(3.4, false)],
    [run(1), run(0)],
  ]) {
    const figure = loopRatio('npm test', loop, plain, LOOP_TARGETS.test);
    assert.ok(Number.isNaN(figure.value));
    assert.equal(targetMet(figure), false);
  }
});

test('the printed line names both walls, their CPU, what did not finish, and the load', () => {
  assert.match(loopLine('npm test', run(60.04, true, 100), run(3.4, true, 5.25), 1.25), /^loops: npm test 60\.0 s wall, 100\.0 s CPU; plain suite run 3\.4 s wall, 5\.3 s CPU \(load 1\.3 on \d+ cores\)$/);
  assert.match(loopLine('npm run qualify', run(9, false, null), run(3.4), 0), /^loops: npm run qualify 9\.0 s wall \(did not run to its end\); plain suite run 3\.4 s wall, 5\.1 s CPU \(load 0\.0/);
});
