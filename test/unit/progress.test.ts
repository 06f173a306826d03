// The replay's progress display: told as requests end, stopped at the end, absent when not given
// (piped output gets nothing extra), and never part of what a run computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../src/cli/main';
import type { CliIo, ProgressDisplay } from '../../src/cli/io';
import { ROOT } from '../support/paths';


function io(progress?: () => ProgressDisplay | null): { io: CliIo; out: string[] } {
  const out: string[] = [];
  return { io: { stdout: (t) => void out.push(t), stderr: (t) => void out.push(t), cwd: ROOT, progress }, out };
}

test('a replay tells its progress display how many requests have ended, then stops it; the summary is the same without one', () => {
  const updates: [number, number, number][] = [];
  let stopped = 0;
  const withBar = io(() => ({ update: (ended, total, virtual_ms) => void updates.push([ended, total, virtual_ms]), stop: () => void stopped++ }));
  assert.equal(runCli(['replay', 'examples/configs/two-replicas-private.yaml'], withBar.io), 0);
  assert.equal(stopped, 1);
  assert.deepEqual(updates.map(([ended, total]) => [ended, total]), [[1, 4], [2, 4], [3, 4], [4, 4]]);
  assert.ok(updates.every(([, , virtual_ms], i) => i === 0 || virtual_ms >= updates[i - 1][2]), 'virtual time never goes back');
  const without = io();
  assert.equal(runCli(['replay', 'examples/configs/two-replicas-private.yaml'], without.io), 0);
  assert.equal(without.out.join(''), withBar.out.join(''));
});
