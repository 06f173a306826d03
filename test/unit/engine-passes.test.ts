// What each pass of an engine rank schedules (ENG-1, ENG-2): the token budget binds and chunks a
// long prefill, decode steps take a token each, a pass that preempted admits nothing new, restores
// in flight hold running slots, and the gaps between a request's tokens are the pass times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import type { PassObservation, RankEngine } from '../../src/engine/rank';

function run(engine: string, requests: string[], host = '', observe?: (rank: RankEngine, pass: PassObservation) => void) {
  const yaml = [
    'seed: 1',
    'cluster:',
    '  workers:',
    '    - role: aggregated',
    '      replicas: 1',
    `      engine: { block_size: 4, kv_cache_bytes_per_token: 1000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } }, ${engine} }`,
    ...(host ? [`      host_offload: { ${host} }`] : []),
    'router: { policy: kv }',
    'workload:',
    '  requests:',
    ...requests.map((r) => `    - ${r}`),
  ].join('\n');
  const passes: PassObservation[] = [];
  const outcome = runReplay(parseReplayConfig(yaml, 'passes test'), {
    observe: (cluster) =>
      (cluster.ranks[0].passObserver = (rank, pass) => {
        passes.push(pass);
        observe?.(rank, pass);
      }),
  });
  return { outcome, passes };
}

test('the token budget binds: a 20-token prompt under a budget of 8 is prefilled in chunks of 8, 8 and 4', () => {
  const { outcome, passes } = run('num_gpu_blocks: 16, max_num_seqs: 4, max_num_batched_tokens: 8', ['{ id: r, arrival_ms: 0, prompt: [{ tokens: 20 }], output_length: 2 }']);
  assert.deepEqual(passes.map((p) => p.scheduled_tokens), [8, 8, 4, 1]);
  const record = outcome.report.per_request[0];
  assert.equal(record.first_token_ms, 3, 'three prefill passes of 1 ms');
  assert.equal(record.last_token_ms, 3.5, 'then one decode pass of 0.5 ms');
});

test('each running request takes budget: two decoding requests and a budget of 1 decode one per pass', () => {
  const { passes } = run('num_gpu_blocks: 16, max_num_seqs: 4, max_num_batched_tokens: 4', [
    '{ id: a, arrival_ms: 0, prompt: [{ tokens: 4 }], output_length: 3 }',
    '{ id: b, arrival_ms: 0, prompt: [{ tokens: 4 }], output_length: 3 }',
  ]);
  for (const pass of passes) assert.ok(pass.scheduled_tokens <= 4, `a pass at ${pass.time_ns} ns scheduled ${pass.scheduled_tokens} tokens`);
  assert.equal(passes[0].scheduled_tokens, 4, 'the first prompt fills the budget');
  assert.equal(passes[0].running_requests, 1, 'so the second waits for the next pass');
});

test('the gaps between a request’s output tokens are its decode passes', () => {
  const { outcome } = run('num_gpu_blocks: 16, max_num_seqs: 4, max_num_batched_tokens: 64', ['{ id: r, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 4 }']);
  const summary = outcome.report.summary;
  assert.deepEqual([summary.itl_ms.count, summary.itl_ms.mean, summary.itl_ms.max], [3, 0.5, 0.5]);
  assert.equal(outcome.report.per_request[0].last_token_ms, 2.5);
});

test('a pass that preempted admits no new request', () => {
  // a and b grow past G1 together and one is preempted; c waits to be admitted meanwhile.
  const preemptingPasses: number[] = [];
  let seen = 0;
  const { outcome } = run(
    'num_gpu_blocks: 6, max_num_seqs: 4, max_num_batched_tokens: 64',
    [
      '{ id: a, arrival_ms: 0, prompt: [{ tokens: 7 }], output_length: 12 }',
      '{ id: b, arrival_ms: 0, prompt: [{ tokens: 7 }], output_length: 12 }',
      '{ id: c, arrival_ms: 1.5, prompt: [{ tokens: 3 }], output_length: 2 }',
    ],
    '',
    (rank, pass) => {
      if (rank.preemptionCount > seen) preemptingPasses.push(pass.time_ns);
      seen = rank.preemptionCount;
    },
  );
  assert.ok(preemptingPasses.length > 0, 'the case preempts');
  for (const record of outcome.report.per_request) {
    // Not even tried: the waiting queue is not considered in a pass that preempted.
    for (const attempt of record.admission_history) {
      assert.ok(!preemptingPasses.includes(attempt.time_ns), `${record.request_id} was considered for admission (${attempt.outcome}) at ${attempt.time_ns} ns, in a pass that preempted`);
    }
  }
  assert.equal(outcome.report.summary.requests.finished, 3);
});

test('restores in flight hold running slots: with one slot, a second resume waits until the first is admitted and done', () => {
  const { outcome } = run(
    'num_gpu_blocks: 16, max_num_seqs: 1, max_num_batched_tokens: 64',
    [
      '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
      '{ id: c1, session: C, arrival_ms: 2, prompt: [{ tokens: 9 }], output_length: 2 }',
      '{ id: f, session: F, arrival_ms: 5, prompt: [{ tokens: 60 }], output_length: 1 }',
      '{ id: a2, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
      '{ id: c2, session: C, arrival_ms: 20, extends: c1, prompt: [{ tokens: 4 }], output_length: 2 }',
    ],
    'num_host_blocks: 32, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 0.001',
  );
  const loads = outcome.result.transfers.filter((t) => t.direction === 'h2d');
  assert.equal(loads.length, 2, 'both resumes restore from G2');
  assert.ok(loads[1].submitted_ns >= loads[0].finished_ns!, 'the second restore starts only after the first one ended');
  assert.equal(outcome.report.summary.requests.finished, 5);
});
