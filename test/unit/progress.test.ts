// The replay's progress display: told as requests end and every 65,536 kernel events, stopped at
// the end, absent when not given (piped output gets nothing extra), and never part of what a run
// computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../src/cli/main';
import type { CliIo, ProgressDisplay } from '../../src/cli/io';
import { ROOT } from '../support/paths';
import { readFileSync, writeFileSync } from 'node:fs';
import { scratchFolder } from '../support/scratch';
import * as path from 'node:path';


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

test('in a long stretch where no request ends, the progress display still hears of the virtual time every 65,536 kernel events', (t) => {
  // The fuzzer's preemption spin with a 90 times faster restore: about 100,000 kernel events of
  // preempting one request before anything ends (test/fixtures/fuzz/preemption-spin.yaml).
  const dir = scratchFolder('progress', t);
  const config = path.join(dir, 'spin.yaml');
  writeFileSync(config, readFileSync(path.join(ROOT, 'test', 'fixtures', 'fuzz', 'preemption-spin.yaml'), 'utf8').replace('shared_h2d_bandwidth_gbps: 0.01', 'shared_h2d_bandwidth_gbps: 0.9'));
  const updates: [number, number, number][] = [];
  const withBar = io(() => ({ update: (ended, total, virtual_ms) => void updates.push([ended, total, virtual_ms]), stop: () => undefined }));
  assert.equal(runCli(['replay', config], withBar.io), 0);
  const ticks = updates.filter(([ended], i) => i > 0 && ended === updates[i - 1][0]);
  assert.ok(ticks.length >= 1, `updates: ${JSON.stringify(updates)}`);
  assert.ok(updates.every(([, , virtual_ms], i) => i === 0 || virtual_ms >= updates[i - 1][2]), 'virtual time never goes back');
  assert.deepEqual(updates.at(-1)!.slice(0, 2), [5, 5]);
  const without = io();
  assert.equal(runCli(['replay', config], without.io), 0);
  assert.equal(without.out.join(''), withBar.out.join(''), 'the same run and summary without a display');
});

test('the progress bar\'s time left: "…" until a request has ended (never cli-progress\'s "NFs"), then the rate so far in seconds or minutes', () => {
  const { etaText } = require(path.join(ROOT, 'bin', 'progress.js')) as { etaText: (ended: number, total: number, elapsedMs: number) => string };
  assert.equal(etaText(0, 100, 5_000), '…');
  assert.equal(etaText(10, 100, 5_000), '45s');
  assert.equal(etaText(1, 100, 2_000), '3m18s');
  assert.equal(etaText(100, 100, 9_000), '0s');
});
