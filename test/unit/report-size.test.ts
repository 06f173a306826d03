// A placement record keeps the chosen rank and the runner-up, so a report grows with the number
// of requests, not with requests × workers; every candidate is kept only when asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { canonicalJsonPretty } from '../../src/report/canonical';

function config(workers: number, requests: number): string {
  const lines = [
    'seed: 7',
    'cluster:',
    '  workers:',
    '    - role: aggregated',
    `      replicas: ${workers}`,
    '      engine: { block_size: 4, num_gpu_blocks: 64, max_num_seqs: 8, max_num_batched_tokens: 256, kv_cache_bytes_per_token: 1000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }',
    '      host_offload: { num_host_blocks: 64 }',
    'router: { kv_event_lag_ms: 1 }',
    'workload:',
    '  prefixes: { system: 16 }',
    '  requests:',
  ];
  for (let i = 0; i < requests; i++) lines.push(`    - { id: r${i}, arrival_ms: ${i}, prompt: [{ prefix: system }, { tokens: ${5 + (i % 7)} }], output_length: 3 }`);
  return lines.join('\n');
}

const reportBytes = (workers: number, requests: number, kept_scores?: 'all') =>
  canonicalJsonPretty(runReplay(parseReplayConfig(config(workers, requests), 'size test'), { kept_scores }).report).length;

test('a placement record keeps two candidates: the report of 256 workers is about the size of the report of 16', () => {
  const outcome = runReplay(parseReplayConfig(config(256, 20), 'size test'));
  for (const record of outcome.report.per_request) {
    const placement = record.routing_history[0];
    assert.equal(placement.candidates.length, 2, `${record.request_id} keeps the chosen worker and the runner-up`);
    assert.ok(placement.candidates.some((c) => c.worker_id === placement.worker_id), 'the chosen worker is among them');
  }
  const small = reportBytes(16, 20);
  const large = reportBytes(256, 20);
  assert.ok(large < small * 1.2, `256 workers: ${large} bytes vs 16 workers: ${small} bytes`);
  assert.ok(reportBytes(16, 40) > small * 1.7, 'twice the requests, about twice the report');
});

test('--scores all keeps every candidate, and the decisions are the same', () => {
  const two = runReplay(parseReplayConfig(config(8, 10), 'size test'));
  const all = runReplay(parseReplayConfig(config(8, 10), 'size test'), { kept_scores: 'all' });
  assert.equal(all.report.per_request[0].routing_history[0].candidates.length, 8);
  assert.deepEqual(
    two.report.per_request.map((r) => [r.worker_id, r.first_token_ms, r.routing_history[0].best_available_overlap_blocks]),
    all.report.per_request.map((r) => [r.worker_id, r.first_token_ms, r.routing_history[0].best_available_overlap_blocks]),
  );
});
