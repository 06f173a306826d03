// The capacity search of `kvqual sweep` (search: in the sweep file) end to end: the smallest
// replica count meeting a TTFT constraint, named with its point and written as best.yaml (which
// replays to that point's digest), the Pareto front printed and in capacity.json; the same
// capacity.json from 2 shards merged; a search that names an unvaried parameter or an unknown
// metric refused before anything runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../support/paths';

const BIN = path.join(ROOT, 'bin', 'kvqual.js');

function kvqual(cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A sweep of the replica count of the prefill/decode example's decode role, with a search. */
function capacityFolder(search: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-capacity-'));
  fs.mkdirSync(path.join(dir, 'configs'));
  fs.copyFileSync(path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml'), path.join(dir, 'configs', 'base.yaml'));
  fs.writeFileSync(path.join(dir, 'sweep.yaml'), `base: configs/base.yaml\ngrid:\n  cluster.workers[0].replicas: [1, 2, 3]\n  router.kv_event_lag_ms: [0, 10]\n${search}`);
  return dir;
}

const SEARCH = 'search:\n  minimize: cluster.workers[0].replicas\n  subject_to: ["ttft_p99_ms <= LIMIT"]\n  pareto: ttft_p99_ms\n';

test('the smallest replica count meeting the TTFT constraint under every lag is named, written as best.yaml, and the same from shards merged', () => {
  // First the figures: every point's TTFT p99, to put the limit between two replica counts.
  const probe = capacityFolder('');
  try {
    const run = kvqual(probe, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '1');
    assert.equal(run.status, 0, run.stderr);
    const points = JSON.parse(fs.readFileSync(path.join(probe, 'out', 'sweep.json'), 'utf8')).points as { parameters: Record<string, number>; metrics: { ttft_p99_ms: number } }[];
    const worst = (replicas: number) => Math.max(...points.filter((p) => p.parameters['cluster.workers[0].replicas'] === replicas).map((p) => p.metrics.ttft_p99_ms));
    assert.ok(worst(1) > worst(2), `one replica is slower at p99 (${worst(1)} vs ${worst(2)} ms)`);
    const limit = worst(2);
    const dir = capacityFolder(SEARCH.replace('LIMIT', String(limit)));
    try {
      const whole = kvqual(dir, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '1');
      assert.equal(whole.status, 0, whole.stderr);
      assert.match(whole.stdout, new RegExp(`capacity: the smallest cluster\\.workers\\[0\\]\\.replicas meeting ttft_p99_ms <= ${limit} is 2 \\(cluster\\.workers\\[0\\]\\.replicas=2, router\\.kv_event_lag_ms=0`));
      assert.match(whole.stdout, /Pareto front of cluster\.workers\[0\]\.replicas against ttft_p99_ms:\n {4}cluster\.workers\[0\]\.replicas=1: ttft_p99_ms [\d.]+ \(misses: /);
      const answer = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'capacity.json'), 'utf8'));
      assert.equal(answer.best.objective, 2);
      // best.yaml replays to the winning point's digest.
      const best = path.join(dir, 'out', 'best.yaml');
      assert.match(fs.readFileSync(best, 'utf8'), /^# The winning config of the capacity search of sweep\.yaml: cluster\.workers\[0\]\.replicas=2, router\.kv_event_lag_ms=0\./);
      const replay = kvqual(dir, 'replay', best, '--json');
      assert.equal(replay.status, 0, replay.stderr);
      const document = JSON.parse(fs.readFileSync(path.join(dir, 'out', 'sweep.json'), 'utf8'));
      const winner = document.points.find((p: { index: number }) => p.index === answer.best.points[0]);
      assert.equal(JSON.parse(replay.stdout).digest, winner.digest);
      // Two shards merged: the same answer.
      for (const shard of ['1/2', '2/2']) assert.equal(kvqual(dir, 'sweep', 'sweep.yaml', '--out', 'shards', '--shard', shard, '--jobs', '1').status, 0);
      const merged = kvqual(dir, 'sweep', 'merge', 'shards/shard-1-of-2.json', 'shards/shard-2-of-2.json', '--out', 'merged');
      assert.equal(merged.status, 0, merged.stderr);
      assert.equal(fs.readFileSync(path.join(dir, 'merged', 'capacity.json'), 'utf8'), fs.readFileSync(path.join(dir, 'out', 'capacity.json'), 'utf8'));
      assert.match(merged.stdout, /capacity: the smallest cluster\.workers\[0\]\.replicas meeting .* is 2 /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
});

test('a search of an unvaried parameter, over text values, or with an unknown metric is refused before anything runs', () => {
  const cases: [string, RegExp][] = [
    ['search:\n  minimize: cluster.workers[0].dp_size\n', /search\.minimize: cluster\.workers\[0\]\.dp_size is not varied by this sweep/],
    ['search:\n  minimize: cluster.workers[0].replicas\n  subject_to: ["ttft_p98_ms <= 5"]\n', /search\.subject_to\[0\]: "ttft_p98_ms" is not a sweep metric; did you mean ttft_p99_ms\?/],
    ['search:\n  minimize: cluster.workers[0].replicas\n  subject_to: ["ttft_p99_ms = 5"]\n', /search\.subject_to\[0\]: "ttft_p99_ms = 5" is not a constraint/],
    ['search:\n  minimize: cluster.workers[0].replicas\n  maximize: router.kv_event_lag_ms\n', /search: give one of minimize and maximize/],
  ];
  for (const [search, message] of cases) {
    const dir = capacityFolder(search);
    try {
      const run = kvqual(dir, 'sweep', 'sweep.yaml', '--out', 'out', '--jobs', '1');
      assert.equal(run.status, 2, search);
      assert.match(run.stderr, message, search);
      assert.equal(fs.existsSync(path.join(dir, 'out')), false, 'nothing written');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
