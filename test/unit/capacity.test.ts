// The capacity search's answer from a sweep's points (src/sweep/capacity.ts): a configuration
// meets the constraints only under every seed and when clean, its metric is the worst over its
// seeds, the best is the smallest (or largest) objective among those that meet them, ties to the
// first, and the Pareto front keeps the configurations nothing beats on both counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerSearch, parseConstraint } from '../../src/sweep/capacity';
import { METRICS, SWEEP_FORMAT, type SweepDocument } from '../../src/sweep/results';
import type { SearchSpec } from '../../src/sweep/spec';

/** Points over replicas × seeds with the given p99 TTFT (ms), all clean unless listed. */
function document(ttft: Record<string, number>, search: SearchSpec, unclean: number[] = []): SweepDocument {
  const replicas = [1, 2, 4, 8];
  const seeds = [1, 2];
  const points = replicas.flatMap((r, i) =>
    seeds.map((seed, j) => {
      const index = i * seeds.length + j;
      const metrics = Object.fromEntries(METRICS.map((m) => [m, 0])) as SweepDocument['points'][number]['metrics'];
      metrics.ttft_p99_ms = ttft[`${r}/${seed}`];
      metrics.requests_finished = 10;
      const clean = !unclean.includes(index);
      return { index, parameters: { 'cluster.workers[0].replicas': r, seed }, clean, problem: clean ? null : 'stuck', metrics, digest: `sha256:${'0'.repeat(64)}`, wall_ms: 0 };
    }),
  );
  return { format: SWEEP_FORMAT, sweep_digest: '0'.repeat(64), base: 'b.yaml', parameters: ['cluster.workers[0].replicas', 'seed'], values: { 'cluster.workers[0].replicas': replicas, seed: seeds }, metrics: [...METRICS], search, points_total: points.length, points };
}

const TTFT = { '1/1': 9000, '1/2': 8000, '2/1': 1900, '2/2': 2100, '4/1': 1500, '4/2': 1400, '8/1': 1500, '8/2': 1450 };

test('the smallest replica count meeting the constraint under every seed wins; the worst seed decides', () => {
  const answer = answerSearch(document(TTFT, { minimize: 'cluster.workers[0].replicas', subject_to: ['ttft_p99_ms <= 2000'] }))!;
  assert.equal(answer.best?.objective, 4, '2 replicas meet it under seed 1 only');
  assert.deepEqual(answer.best?.points, [4, 5]);
  assert.equal(answer.best?.metrics.ttft_p99_ms, 1500);
  assert.deepEqual([answer.configurations, answer.feasible], [4, 2]);
  const two = answerSearch(document(TTFT, { minimize: 'cluster.workers[0].replicas', subject_to: ['ttft_p99_ms <= 2100'] }))!;
  assert.equal(two.best?.objective, 2, 'at the limit, it holds');
  const strict = answerSearch(document(TTFT, { minimize: 'cluster.workers[0].replicas', subject_to: ['ttft_p99_ms < 2100'] }))!;
  assert.equal(strict.best?.objective, 4);
});

test('a run that was not clean rules its configuration out; none meeting the constraints is said', () => {
  const answer = answerSearch(document(TTFT, { minimize: 'cluster.workers[0].replicas', subject_to: ['ttft_p99_ms <= 2000'] }, [5]))!;
  assert.equal(answer.best?.objective, 8);
  const none = answerSearch(document(TTFT, { minimize: 'cluster.workers[0].replicas', subject_to: ['ttft_p99_ms <= 100'] }))!;
  assert.equal(none.best, null);
  const most = answerSearch(document(TTFT, { maximize: 'cluster.workers[0].replicas', subject_to: ['ttft_p99_ms <= 2000'] }))!;
  assert.equal(most.best?.objective, 8);
});

test('the Pareto front keeps the configurations no other beats on both replicas and TTFT', () => {
  const answer = answerSearch(document(TTFT, { minimize: 'cluster.workers[0].replicas', subject_to: [], pareto: 'ttft_p99_ms' }))!;
  // 8 replicas (worst 1500 ms) is beaten by 4 (worst 1500 ms, fewer replicas).
  assert.deepEqual(answer.pareto?.front.map((c) => [c.objective, c.metrics.ttft_p99_ms]), [[1, 9000], [2, 2100], [4, 1500]]);
  assert.equal(answerSearch({ ...document(TTFT, { minimize: 'x', subject_to: [] }), search: undefined }), null, 'no search, no answer');
});

test('a constraint is a metric, a relation and a number', () => {
  assert.deepEqual(parseConstraint(' goodput_ratio >= 0.95 ', 'w'), { text: 'goodput_ratio >= 0.95', metric: 'goodput_ratio', relation: '>=', limit: 0.95 });
  assert.throws(() => parseConstraint('ttft_p99_ms == 2', 'search.subject_to[0]'), /^SweepError: search\.subject_to\[0\]: "ttft_p99_ms == 2" is not a constraint/);
});
