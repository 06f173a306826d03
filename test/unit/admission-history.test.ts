// A request's admission history in the report: every attempt to admit it, when, on which blocks,
// with what outcome, and in words why it had to wait (a G2 prefix still being stored or being
// loaded for another request, too few G1 blocks for the prompt, for a restore or for the KV of a
// prefill worker). What a reader of the report has to explain a queue time: each test pins one
// path's attempts exactly. And what an attempt does besides: it touches its prompt's G2 entries,
// and the first admission fixes the reuse the report attributes to the request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { aggregated, tightDecodeWorker } from '../support/configs';

type Attempt = [time_ms: number, outcome: string, g1_blocks: number, host_blocks: number, reason: string | null];

/** Each request's admission history, attempt by attempt. */
function histories(yaml: string): Record<string, Attempt[]> {
  const { report } = runReplay(parseReplayConfig(yaml, 'test config'), {});
  const byRequest: Record<string, Attempt[]> = {};
  for (const record of report.per_request) {
    assert.equal(record.status, 'finished', `${record.request_id} finishes`);
    byRequest[record.request_id] = record.admission_history.map((a) => [a.time_ns / 1e6, a.outcome, a.g1_blocks, a.host_blocks, a.reason]);
  }
  return byRequest;
}

const NO_BLOCKS = 'not enough free G1 blocks';
const NO_ROOM_FOR_RESTORE = 'not enough free G1 blocks for the restore and the rest of the prompt';

test('a request waiting for G1 blocks another holds is refused at each pass until they are free, then admitted', () => {
  const history = histories(
    aggregated({
      engine: { num_gpu_blocks: 6 },
      requests: ['{ id: a, session: A, arrival_ms: 0, prompt: [{ tokens: 17 }], output_length: 4 }', '{ id: b, session: B, arrival_ms: 0.5, prompt: [{ tokens: 17 }], output_length: 4 }'],
    }),
  );
  assert.deepEqual(history.a, [[0, 'admitted', 0, 0, null]]);
  assert.deepEqual(history.b, [
    [1, 'no-blocks', 0, 0, NO_BLOCKS],
    [1.5, 'no-blocks', 0, 0, NO_BLOCKS],
    [2, 'no-blocks', 0, 0, NO_BLOCKS],
    [2.5, 'admitted', 0, 0, null],
  ]);
});

// a1's two blocks reach G2 and b's prompt evicts them from G1; y1 and y2 both resume a1.
const TWO_RESUMES = aggregated({
  engine: { num_gpu_blocks: 12 },
  host: 'num_host_blocks: 16, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 0.1',
  requests: [
    '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
    '{ id: b, session: B, arrival_ms: 5, prompt: [{ tokens: 48 }], output_length: 1 }',
    '{ id: y1, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
    '{ id: y2, session: A, arrival_ms: 20.1, extends: a1, prompt: [{ tokens: 5 }], output_length: 2 }',
  ],
});

test('a G2 prefix being loaded for another request on the rank defers a request, which then reuses it from G1', () => {
  const history = histories(TWO_RESUMES);
  assert.deepEqual(history.y1, [
    [20, 'loading', 0, 2, null],
    [40, 'admitted', 0, 2, null],
  ]);
  assert.deepEqual(history.y2, [
    [20.1, 'deferred', 0, 2, 'G2 block being loaded by another request on this rank'],
    [40, 'admitted', 2, 0, null],
  ]);
});

test('a G2 prefix still being stored by another rank into the shared pool defers a request until the copy ends', () => {
  const history = histories(
    aggregated({
      replicas: 2,
      engine: { num_gpu_blocks: 12 },
      host: 'num_host_blocks: 16, scope: cluster_shared, d2h_bandwidth_gbps: 0.01, h2d_bandwidth_gbps: 1',
      requests: [
        '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
        '{ id: b, session: B, arrival_ms: 2.5, prompt: [{ tokens: 40 }], output_length: 1 }',
        '{ id: y1, session: A, arrival_ms: 3, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
      ],
    }),
  );
  assert.deepEqual(history.y1, [
    [3, 'deferred', 0, 2, 'G2 block still being stored'],
    [201, 'loading', 0, 2, null],
    [203, 'admitted', 0, 2, null],
  ]);
});

test('a restore waits until G1 has room for the restored blocks and the rest of the prompt', () => {
  const history = histories(
    aggregated({
      engine: { num_gpu_blocks: 6 },
      host: 'num_host_blocks: 16, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 0.1',
      requests: [
        '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
        '{ id: b, session: B, arrival_ms: 5, prompt: [{ tokens: 24 }], output_length: 1 }',
        '{ id: x, session: X, arrival_ms: 20, prompt: [{ tokens: 8 }], output_length: 12 }',
        '{ id: y, session: A, arrival_ms: 20.25, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
      ],
    }),
  );
  const refused = Array.from({ length: 11 }, (_, i): Attempt => [21 + i / 2, 'no-blocks', 0, 2, NO_ROOM_FOR_RESTORE]);
  assert.deepEqual(history.y, [...refused, [26.5, 'loading', 0, 2, null], [46.5, 'admitted', 0, 2, null]]);
});

test("a decode worker takes a request's KV from the prefill worker once it has room for it, and says so at each step", () => {
  const yaml = tightDecodeWorker(['{ id: p1, session: A, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 4 }', '{ id: p2, session: B, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 4 }']);
  const history = histories(yaml);
  const moving = 'KV moving from the prefill worker';
  const moved = 'KV transferred from the prefill worker';
  const noRoom = 'not enough free G1 blocks for the KV from the prefill worker';
  assert.deepEqual(history.p1, [
    [0, 'admitted', 0, 0, null],
    [1, 'loading', 0, 0, moving],
    [2.004, 'admitted', 0, 0, moved],
  ]);
  assert.deepEqual(history.p2, [
    [0, 'admitted', 0, 0, null],
    [1, 'no-blocks', 0, 0, noRoom],
    [2.004, 'no-blocks', 0, 0, noRoom],
    [3.004, 'no-blocks', 0, 0, noRoom],
    [4.004, 'no-blocks', 0, 0, noRoom],
    [5.004, 'loading', 0, 0, moving],
    [6.008, 'admitted', 0, 0, moved],
  ]);
});

test('G2-5: an admission attempt refreshes its prompt in G2 even when G1 holds it, so a newer store evicts the prefix used longer ago', () => {
  const reusedFromG2 = (yaml: string) => {
    const { report } = runReplay(parseReplayConfig(yaml, 'test config'), {});
    return Object.fromEntries(report.per_request.map((record) => [record.request_id, record.host_reused_tokens]));
  };
  // a1's and c1's prompts fill the 4-block pool; y resumes a1 from G1 (its G2 entries are touched);
  // d1's store evicts the 2 blocks used longest ago (c1's); b clears G1; r resumes y from G2, q resumes c1.
  const reused = reusedFromG2(
    aggregated({
      engine: { num_gpu_blocks: 16 },
      host: 'num_host_blocks: 4, scope: dp_rank_local, d2h_bandwidth_gbps: 10, h2d_bandwidth_gbps: 10',
      requests: [
        '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 1 }',
        '{ id: c1, session: C, arrival_ms: 3, prompt: [{ tokens: 8 }], output_length: 1 }',
        '{ id: y, session: A, arrival_ms: 10, extends: a1, prompt: [{ tokens: 1 }], output_length: 1 }',
        '{ id: d1, session: D, arrival_ms: 15, prompt: [{ tokens: 8 }], output_length: 1 }',
        '{ id: b, session: B, arrival_ms: 20, prompt: [{ tokens: 64 }], output_length: 1 }',
        '{ id: r, session: A, arrival_ms: 40, extends: y, prompt: [{ tokens: 1 }], output_length: 1 }',
        '{ id: q, session: C, arrival_ms: 45, extends: c1, prompt: [{ tokens: 1 }], output_length: 1 }',
      ],
    }),
  );
  assert.equal(reused.r, 8, "a1's prefix, touched by y at 10 ms, is still in G2");
  assert.equal(reused.q, 0, "c1's prefix was evicted by d1's store");
});

test('G2-6: reuse is attributed at the first admission, also for a request preempted and admitted again with more of its prompt cached', () => {
  const yaml = aggregated({
    engine: { num_gpu_blocks: 8 },
    requests: [
      '{ id: a0, session: A, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 1 }',
      '{ id: s, session: S, arrival_ms: 2, prompt: [{ tokens: 8 }], output_length: 12 }',
      '{ id: r, session: A, arrival_ms: 2.1, extends: a0, prompt: [{ tokens: 4 }], output_length: 12 }',
    ],
  });
  const { report } = runReplay(parseReplayConfig(yaml, 'test config'), {});
  const r = report.per_request.find((record) => record.request_id === 'r')!;
  // Admitted on a0's 2 cached blocks, preempted as both grow, admitted again on 3 (its own third block stayed cached).
  assert.deepEqual(
    r.admission_history.filter((attempt) => attempt.outcome === 'admitted').map((attempt) => [attempt.time_ns / 1e6, attempt.g1_blocks]),
    [
      [3, 2],
      [9.5, 3],
    ],
  );
  assert.equal(r.g1_reused_tokens, 8, 'the 2 blocks of the first admission');
  assert.equal(r.host_reused_tokens, 0);
});
