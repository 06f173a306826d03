// Regression tests for simulator defects found with configs nobody wrote scenarios for: a run
// that stalls, one that ends with unfinished requests, unlimited shared bandwidth, HostPinned
// chains, failed plays, per-role shared caps and the phase of decode placement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay, assertEveryRequestEnded, UnfinishedRequestsError } from '../../src/replay';
import { Cluster, ClusterSetupError } from '../../src/sim/cluster';
import { InvariantError, Phase } from '../../src/kernel';
import { clusterSpec, requestSpecs } from '../../src/config/build';
import { summaryText } from '../../src/cli/replay';
import { parseAgenticTrace } from '../../src/agentic/trace';
import type { KvEvent } from '../../src/events/model';
import { ADMISSION_ATTEMPTS_KEPT } from '../../src/engine/request';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { aggregated, aggregatedEngine, disaggregated } from '../support/configs';

function replay(yaml: string) {
  const config = parseReplayConfig(yaml, 'test config');
  return runReplay(config, { keep_event_history: true });
}

const STALL = aggregated({ host: 'num_host_blocks: 16, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 0.1', requests: [
    '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
    '{ id: b, session: B, arrival_ms: 5, prompt: [{ tokens: 24 }], output_length: 1 }',
    '{ id: x, session: X, arrival_ms: 20, prompt: [{ tokens: 8 }], output_length: 12 }',
    '{ id: y, session: A, arrival_ms: 20.25, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
  ] });

test('defect 1: a preempted request and a finished restore no longer wait for each other (every request finishes)', () => {
  const { report, result } = replay(STALL);
  assert.deepEqual(result.stuck, []);
  assert.deepEqual(report.per_request.map((r) => [r.request_id, r.status]), [['a1', 'finished'], ['b', 'finished'], ['x', 'finished'], ['y', 'finished']]);
  assert.equal(report.per_request[3].host_reused_tokens, 8);
});

test('defect 1: two restores on a rank with one running slot run one after the other', () => {
  const yaml = aggregated({ engine: { num_gpu_blocks: 5, max_num_seqs: 1 }, host: 'num_host_blocks: 16, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1', requests: [
    '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
    '{ id: c1, session: C, arrival_ms: 2, prompt: [{ tokens: 9 }], output_length: 2 }',
    '{ id: f, session: F, arrival_ms: 5, prompt: [{ tokens: 20 }], output_length: 1 }',
    '{ id: a2, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
    '{ id: c2, session: C, arrival_ms: 20, extends: c1, prompt: [{ tokens: 4 }], output_length: 2 }',
  ] });
  const { report, result } = replay(yaml);
  assert.deepEqual(result.stuck, []);
  assert.equal(report.summary.requests.finished, 5);
  const loads = result.transfers.filter((t) => t.direction === 'h2d');
  assert.equal(loads.length, 2);
  assert.ok(loads[1].submitted_ns >= loads[0].finished_ns!, 'the second restore starts after the first is admitted');
});

test('defect 2: a request left waiting when the simulation runs out of work is named, with where it waits and since when', () => {
  const config = parseReplayConfig(STALL, 'test config');
  const cluster = new Cluster(clusterSpec(config));
  for (const request of requestSpecs(config)) cluster.submit(request);
  // Sabotage: the rank never starts another pass after 20 ms, as a stalled engine would.
  const rank = cluster.ranks[0];
  const kick = rank.kick.bind(rank);
  rank.kick = () => {
    if (cluster.kernel.now < 20_000_000) kick();
  };
  const result = cluster.run();
  assert.deepEqual(result.stuck.map((s) => [s.request_id, s.status, s.worker_id, s.dp_rank]), [['x', 'waiting', 0, 0], ['y', 'waiting', 0, 0]]);
  assert.match(result.stuck[0].where, /^waiting at position 1 of 2 in the queue of worker 0 dp rank 0$/);
  assert.equal(result.stuck[0].last_progress_ns, 20_000_000);
  assert.throws(() => assertEveryRequestEnded(result), (error: unknown) => {
    assert.ok(error instanceof UnfinishedRequestsError);
    assert.match(error.message, /^2 request\(s\) never ended .*: x \(waiting at position 1 of 2 in the queue of worker 0 dp rank 0, no progress since 20 ms\); y \(/);
    return true;
  });
});

test('defect 2: where an unfinished request is held, in words, with its state: waiting in the queue, loading its G2 prefix, running', () => {
  // a1 and c1 reach G2, b evicts them from G1; y and z resume them on a rank with one running slot.
  const yaml = aggregated({
    engine: { num_gpu_blocks: 16, max_num_seqs: 1 },
    host: 'num_host_blocks: 32, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 0.1',
    requests: [
      '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
      '{ id: c1, session: C, arrival_ms: 3, prompt: [{ tokens: 9 }], output_length: 2 }',
      '{ id: b, session: B, arrival_ms: 6, prompt: [{ tokens: 64 }], output_length: 1 }',
      '{ id: y, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 40 }',
      '{ id: z, session: C, arrival_ms: 20, extends: c1, prompt: [{ tokens: 4 }], output_length: 2 }',
      '{ id: w, session: D, arrival_ms: 20, prompt: [{ tokens: 4 }], output_length: 2 }',
    ],
  });
  const config = parseReplayConfig(yaml, 'test config');
  const cluster = new Cluster(clusterSpec(config));
  const requests = requestSpecs(config).map((request) => cluster.submit(request));
  const rank = cluster.ranks[0];
  const held = (at_ms: number) => {
    cluster.kernel.run(at_ms * 1_000_000);
    return requests.filter((request) => request.state !== 'finished').map((request) => `${request.request_id} ${request.state}: ${rank.whereIs(request)}`);
  };
  assert.deepEqual(held(20.5), ['y waiting: waiting at position 1 of 3 in the queue', 'z waiting: waiting at position 2 of 3 in the queue', 'w waiting: waiting at position 3 of 3 in the queue']);
  assert.deepEqual(held(30), ['y loading: loading its G2 prefix at position 1 of 2 in the queue', 'z loading: loading its G2 prefix at position 2 of 2 in the queue']);
  assert.deepEqual(held(45), ['y running: running (1 of 1)', 'z loading: loading its G2 prefix at position 1 of 1 in the queue']);
  assert.deepEqual(held(64), ['y waiting: waiting at position 1 of 1 in the queue', 'z running: running (1 of 1)']);
});

test('defect 2: the summary of an all-failed run lists each failure with its reason and shows no latency figures', () => {
  const yaml = aggregated({ engine: { num_gpu_blocks: 2 }, requests: [
    '{ id: big1, arrival_ms: 0, prompt: [{ tokens: 40 }], output_length: 2 }',
    '{ id: big2, arrival_ms: 1, prompt: [{ tokens: 40 }], output_length: 2 }',
  ] });
  const { report, result } = replay(yaml);
  assertEveryRequestEnded(result);
  const text = summaryText('cfg.yaml', report);
  assert.match(text, /^cfg\.yaml: 0\/2 requests finished \(2 failed\) in /);
  assert.match(text, /metrics: none \(no request finished\)/);
  assert.match(text, /failed: big1: needs 11 G1 blocks for its prompt and output; the rank has 2/);
  assert.match(text, /failed: big2: needs 11 G1 blocks/);
});

const sharedPool = (bandwidths: string) => aggregated({ replicas: 2, host: `num_host_blocks: 16, scope: cluster_shared, ${bandwidths}`, requests: [
    '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
    '{ id: f1, arrival_ms: 2, prompt: [{ tokens: 20 }], output_length: 1 }',
    '{ id: f2, arrival_ms: 2, prompt: [{ tokens: 20 }], output_length: 1 }',
    '{ id: a2, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 2 }',
  ] });

test('defect 3: a shared pool with unlimited bandwidth (0) restores instantly instead of crashing', () => {
  const { report, result } = replay(sharedPool('d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0, shared_d2h_bandwidth_gbps: 0, shared_h2d_bandwidth_gbps: 0'));
  assertEveryRequestEnded(result);
  assert.equal(report.summary.requests.finished, 4);
  for (const transfer of result.transfers) assert.equal(transfer.finished_ns, transfer.started_ns, `transfer ${transfer.transfer_id} takes no time`);
});

/** Checks every HostPinned Stored of a run: its blocks are consecutive prompt blocks right after its parent. */
function hostStoredEvents(result: ReturnType<typeof replay>['result']): KvEvent[] {
  return result.batches.flatMap(({ batch }) => batch.events).filter((event) => event.tier === 'HostPinned' && event.data.type === 'Stored');
}

test('defect 4: a write-through cohort with a hole goes out as parent-linked runs, and the mirror accepts the chain', () => {
  // The pool holds a1's four blocks and b's two once b has evicted a1's block 1: a2's store then
  // finds its two victims in b's blocks (it never evicts a block it names, 0, 2 and 3 included).
  const yaml = aggregated({ engine: { num_gpu_blocks: 16, max_num_batched_tokens: 8 }, host: 'num_host_blocks: 5, scope: dp_rank_local, d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0', requests: [
    '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 1 }',
    '{ id: b, session: B, arrival_ms: 10, prompt: [{ tokens: 8 }], output_length: 1 }',
    '{ id: a2, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 1 }',
  ] });
  const outcome = replay(yaml);
  assert.equal(outcome.report.summary.event_stream_failure, null);
  assertEveryRequestEnded(outcome.result);
  const stored = hostStoredEvents(outcome.result);
  // a2's cohort is blocks 1 and 4 (block 1 was evicted for b; 0, 2, 3 are still in G2): two runs.
  const last = stored.slice(-2).map((event) => (event.data.type === 'Stored' ? [event.data.start_position, event.data.blocks.length] : null));
  assert.deepEqual(last, [[1, 1], [4, 1]]);
});

test('defect 4: a completed cohort is evicted children first, so its first block outlives the others', () => {
  const yaml = aggregated({ engine: { num_gpu_blocks: 16 }, host: 'num_host_blocks: 4, scope: dp_rank_local, d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0', requests: [
    '{ id: a1, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 1 }',
    '{ id: b, arrival_ms: 10, prompt: [{ tokens: 4 }], output_length: 1 }',
  ] });
  const { result, report } = replay(yaml);
  assert.equal(report.summary.event_stream_failure, null);
  const removed = result.batches.flatMap(({ batch }) => batch.events).filter((event) => event.tier === 'HostPinned' && event.data.type === 'Removed');
  const a1Blocks = hostStoredEvents(result)[0];
  assert.ok(a1Blocks.data.type === 'Stored' && removed.length === 1 && removed[0].data.type === 'Removed');
  assert.deepEqual(removed[0].data.block_hashes, [a1Blocks.data.blocks[3].block_hash], 'the last block (a leaf) is the victim');
});

test('defect 5: a failed play skips a request released for a later arrival (a tool delay) before it arrives', () => {
  const trace = [
    JSON.stringify({ schema: 'dynamo.agentic_mooncake', version: 2, block_size: 4 }),
    JSON.stringify({ play_id: 'p', request_id: 'huge', session_id: 's', input_length: 400, output_length: 2, hash_ids: Array.from({ length: 100 }, (_, i) => i + 1), not_before_ms: 0, dependencies: [] }),
    JSON.stringify({ play_id: 'p', request_id: 'later', session_id: 's2', input_length: 8, output_length: 2, hash_ids: [500, 501], not_before_ms: 50, dependencies: [] }),
  ].join('\n');
  const yaml = `
seed: 1
cluster:
  workers:
    - role: aggregated
      replicas: 1${aggregatedEngine()}
router: { policy: kv }
workload:
  agentic: { trace: t.jsonl, lanes: 1, assignment: stride, iterations: 1 }
`;
  const { report, result } = runReplay(parseReplayConfig(yaml, 'test config'), { agentic_trace: parseAgenticTrace(trace, 't.jsonl') });
  assertEveryRequestEnded(result);
  const byId = Object.fromEntries(report.per_request.map((r) => [r.request_id.split('/').at(-1), r]));
  assert.equal(byId.huge.status, 'failed');
  assert.equal(byId.later.status, 'skipped');
  assert.equal(byId.later.first_admission_ms, null);
  assert.match(byId.later.skip_reason!, /play .* failed: request .*huge failed \(needs /);
  // The skipped request's arrival never happens: the run ends with its last work, not at 50 ms, and
  // its prompt, never sent, is not among the tokens the run's reuse is a share of.
  assert.equal(result.end_ns, 0, 'huge fails at its admission, at 0 ms, and nothing else runs');
  assert.equal(report.summary.virtual_duration_ms, 0);
  assert.equal(report.summary.tokens.input, 400, "huge's prompt only");
  assert.equal(byId.later.arrival_ms, 0, 'reported at the instant it was skipped, as a request skipped before its release is');
});

test('a request alone on its rank that needs G1 blocks an ended request still holds (its copy to G2 runs) is preempted and waits for them, instead of failing', () => {
  // f ends at 1 ms holding its 2 blocks until its slow copy to G2 ends (2,001 ms); r fits the 6 blocks
  // alone (8 + 14 − 1 tokens) but not beside them. It used to fail: "needs 5 G1 blocks; the rank has 6".
  const yaml = aggregated({
    engine: { num_gpu_blocks: 6 },
    host: 'num_host_blocks: 16, scope: dp_rank_local, d2h_bandwidth_gbps: 0.001, h2d_bandwidth_gbps: 1',
    requests: ['{ id: f, session: F, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 1 }', '{ id: r, session: R, arrival_ms: 0.5, prompt: [{ tokens: 8 }], output_length: 14 }'],
  });
  const { report } = replay(yaml);
  const r = report.per_request.find((record) => record.request_id === 'r')!;
  assert.equal(r.status, 'finished', r.failure_reason ?? '');
  assert.equal(r.preemptions, 1);
  assert.deepEqual(
    r.admission_history.map((attempt) => [attempt.time_ns / 1e6, attempt.outcome]),
    [
      [1, 'admitted'],
      [6, 'no-blocks'],
      [2001, 'admitted'],
    ],
  );
});

test('defect 6: each role of a shared pool keeps its own per-rank bandwidth and first-byte latency', () => {
  const yaml = `
seed: 1
cluster:
  workers:
    - role: aggregated
      replicas: 1${aggregatedEngine()}
      host_offload: { num_host_blocks: 16, scope: cluster_shared, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80, kv_layout_id: L }
    - role: aggregated
      replicas: 1${aggregatedEngine()}
      host_offload: { num_host_blocks: 16, scope: cluster_shared, d2h_bandwidth_gbps: 4, h2d_bandwidth_gbps: 4, latency_to_first_byte_ms: 0.001, shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80, kv_layout_id: L }
router: { policy: kv }
workload:
  requests:
    - { id: r1, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 1 }
`;
  const cluster = new Cluster(clusterSpec(parseReplayConfig(yaml, 'test config')));
  const done: number[][] = [];
  for (const rank of cluster.ranks) {
    rank.host!.transfers.submit({
      direction: 'h2d', rank_index: rank.rank_index, ...rank.rank, bytes: 4000, blocks: 1, request_id: null,
      onComplete: () => done.push([rank.rank.worker_id, cluster.kernel.now]),
    });
  }
  cluster.kernel.run();
  // Worker 0: 4000 bytes at 1 GB/s. Worker 1: 1 µs to the first byte, then 4000 bytes at 4 GB/s.
  assert.deepEqual(done, [[1, 2000], [0, 4000]]);
});

test('defect 7: a decode placement made when a decode worker finishes a request comes after that finish (dispatch phase)', () => {
  const yaml = disaggregated({
    bandwidth_gbps: 2,
    latency_ms: 0.999,
    prefillBlocks: 16,
    decodeReplicas: 2,
    decodeBlocks: 16,
    requests: ['{ id: r1, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 2 }', '{ id: r2, arrival_ms: 2, prompt: [{ tokens: 8 }], output_length: 2 }'],
  });
  const { report, result } = replay(yaml);
  assertEveryRequestEnded(result);
  const [r1, r2] = report.per_request;
  assert.equal(r1.last_token_ms, 3, 'r1 finishes on its decode worker at 3 ms');
  assert.equal(r2.first_token_ms, 3, "r2's prefill ends at 3 ms too");
  const placement = r2.decode_routing!;
  // r2's decode worker is chosen at its first token, 3 ms, in the dispatch phase: r1's decode worker
  // is already free then, so both decode workers tie.
  assert.equal(placement.tied_candidates, 2, JSON.stringify(placement.candidates));
  const [first, second] = placement.candidates;
  assert.equal(first.load, second.load, 'neither decode worker still counts r1');
});

test('a handed-off request too large for its decode rank fails there before its KV moves, and the prefill worker lets its blocks go', () => {
  // r1 needs 4 G1 blocks to decode but the decode rank has 3: it fails there at its first token
  // (1 ms), its KV never moves, and the prefill worker's 8 blocks are free again for r2 (7 blocks).
  const yaml = disaggregated({
    bandwidth_gbps: 1,
    latency_ms: 0.5,
    prefillBlocks: 8,
    decodeReplicas: 1,
    decodeBlocks: 3,
    requests: ['{ id: r1, arrival_ms: 0, prompt: [{ tokens: 12 }], output_length: 2 }', '{ id: r2, arrival_ms: 0.5, prompt: [{ tokens: 25 }], output_length: 1 }'],
  });
  const { report, result } = replay(yaml);
  assertEveryRequestEnded(result);
  const [r1, r2] = report.per_request;
  assert.equal(r1.status, 'failed');
  assert.match(r1.failure_reason!, /needs 4 G1 blocks for its prompt and output; the rank \(decode worker\) has 3/);
  assert.equal(result.transfers.filter((t) => t.direction === 'p2d').length, 0, "r1's KV never moves");
  assert.equal(r2.status, 'finished');
  assert.equal(r2.first_admission_ms, 1, "r2 is admitted on the prefill worker when r1's blocks are let go");
});

test('the end-of-run check compares the mirror with every rank block by block: a missing, an extra or a swapped block fails it', () => {
  const config = parseReplayConfig(aggregated({ replicas: 2, host: 'num_host_blocks: 16', requests: ['{ id: a, arrival_ms: 0, prompt: [{ tokens: 12 }], output_length: 2 }', '{ id: b, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }'] }), 'mirror check test');
  let cluster: Cluster | null = null;
  const outcome = runReplay(config, { observe: (c) => (cluster = c) });
  assert.equal(outcome.result.failure, null);
  const c = cluster as unknown as { router: Cluster['router']; ranks: Cluster['ranks']; checkMirrorMatchesEngines(): void };
  c.checkMirrorMatchesEngines(); // consistent after the run
  const rank = c.ranks.find((r) => r.g1.cachedBlocks > 0)!;
  const index = c.router.mirror.rankIndex(rank.rank)!;
  const held = Array.from(rank.g1.sortedIds());
  const device = c.router.mirror.device;
  device.removeId(index, held[0]);
  assert.throws(() => c.checkMirrorMatchesEngines(), /\(Device\) holds \d+ blocks but the engine holds \d+ after every event was delivered$/);
  const other = c.ranks.find((r) => r !== rank)!;
  const foreign = Array.from(other.g1.sortedIds()).find((id) => !held.includes(id));
  assert.notEqual(foreign, undefined, 'the other rank holds a block this one does not');
  device.addId(index, foreign!);
  assert.throws(() => c.checkMirrorMatchesEngines(), /\(Device\) holds (\d+) blocks but the engine holds \1 after every event was delivered \(different blocks\)/);
  device.removeId(index, foreign!);
  device.addId(index, held[0]);
  c.checkMirrorMatchesEngines();
  const host = c.router.mirror.host;
  host.addId(index, foreign!);
  assert.throws(() => c.checkMirrorMatchesEngines(), /\(HostPinned\) holds/);
});

test('a run ends with the mirror check: a mirror that lost a block by the end fails the run, naming the rank and tier', () => {
  const config = parseReplayConfig(aggregated({ replicas: 2, host: 'num_host_blocks: 16', requests: ['{ id: a, arrival_ms: 0, prompt: [{ tokens: 12 }], output_length: 2 }'] }), 'mirror check at the end');
  // After everything else, the router's mirror forgets one block that worker 0's G1 still holds (an engine that stopped sending events would leave the same).
  const forgetLate = (c: Cluster) =>
    c.kernel.at(1_000_000_000_000, Phase.PassStart, 0, () => {
      const rank = c.ranks.find((r) => r.g1.cachedBlocks > 0)!;
      c.router.mirror.device.removeId(c.router.mirror.rankIndex(rank.rank)!, rank.g1.sortedIds()[0]);
    });
  assert.throws(() => runReplay(config, { observe: forgetLate }), (error: Error) => error instanceof InvariantError && /^router mirror of worker \d+ dp rank 0 \(Device\) holds \d+ blocks but the engine holds \d+ after every event was delivered$/.test(error.message));
  assert.equal(runReplay(config).result.failure, null, 'the same run untouched passes the check');
});

test('a cluster refuses a setup the config layer would never build: no roles, decode workers mixed with aggregated ones, prefill without decode, decode without prefill, no KV transfer link', () => {
  const agg = clusterSpec(parseReplayConfig(aggregated({ requests: ['{ id: a, arrival_ms: 0, prompt: [{ tokens: 12 }], output_length: 2 }'] }), 'setup'));
  const pd = clusterSpec(parseReplayConfig(disaggregated({ bandwidth_gbps: 1, latency_ms: 0, prefillBlocks: 8, decodeReplicas: 1, decodeBlocks: 8, requests: ['{ id: a, arrival_ms: 0, prompt: [{ tokens: 12 }], output_length: 2 }'] }), 'setup'));
  assert.doesNotThrow(() => new Cluster(agg));
  assert.doesNotThrow(() => new Cluster(pd));
  const refused = (spec: typeof agg, message: RegExp) => assert.throws(() => new Cluster(spec), (error: Error) => error instanceof ClusterSetupError && error.name === 'ClusterSetupError' && message.test(error.message));
  const [prefill, decode] = [pd.roles.find((r) => r.role === 'prefill')!, pd.roles.find((r) => r.role === 'decode')!];
  refused({ ...agg, roles: [] }, /^cluster\.workers: at least one role is needed/);
  refused({ ...pd, roles: [...pd.roles, agg.roles[0]] }, /^cluster\.workers: aggregated workers cannot be mixed with/);
  refused({ ...pd, roles: [decode] }, /^cluster\.workers: decode workers need prefill workers/);
  refused({ ...pd, roles: [prefill] }, /^cluster\.workers: prefill workers need decode workers/);
  refused({ ...pd, kv_transfer: undefined }, /^cluster\.kv_transfer_bandwidth_gbps: a prefill\/decode cluster/);
});

test('a request preempted and readmitted thousands of times keeps its first 999 attempts and its latest, and its record counts the rest', () => {
  // The fuzzer's preemption spin with a 98 times faster restore: 2,552 preemptions instead of 12 million.
  const fixture = readFileSync(path.join(ROOT, 'test', 'fixtures', 'fuzz', 'preemption-spin.yaml'), 'utf8');
  const text = fixture.replace('shared_h2d_bandwidth_gbps: 0.01', 'shared_h2d_bandwidth_gbps: 0.98');
  assert.notEqual(text, fixture);
  const outcome = runReplay(parseReplayConfig(text, 'spin.yaml'));
  const spinning = outcome.report.per_request.find((record) => record.preemptions > 0)!;
  assert.ok(spinning.preemptions > 2 * ADMISSION_ATTEMPTS_KEPT, `${spinning.preemptions} preemptions`);
  assert.equal(spinning.admission_history.length, ADMISSION_ATTEMPTS_KEPT);
  // Admitted once, then readmitted after each preemption: every attempt is kept or counted.
  assert.equal(spinning.admission_history.length + spinning.admission_attempts_omitted!, spinning.preemptions + 1);
  const times = spinning.admission_history.map((attempt) => attempt.time_ns);
  assert.deepEqual(times, [...times].sort((a, b) => a - b), 'attempts in order, the latest last');
  assert.equal(spinning.admission_history.at(-1)!.outcome, 'admitted');
  assert.ok(spinning.admission_history.at(-1)!.time_ns > spinning.admission_history.at(-2)!.time_ns, 'the last place holds the latest attempt');
  for (const record of outcome.report.per_request) if (record.request_id !== spinning.request_id) assert.equal(record.admission_attempts_omitted, undefined, record.request_id);
});

test('a request on its decode rank is load by its blocks only: its prompt, computed on the prefill worker, is no prefill still to do there (SCORE-2, PD-1)', () => {
  const yaml = disaggregated({
    bandwidth_gbps: 100,
    latency_ms: 0,
    prefillBlocks: 32,
    decodeReplicas: 2,
    decodeBlocks: 32,
    requests: ['{ id: r1, arrival_ms: 0, prompt: [{ tokens: 15 }], output_length: 50 }', '{ id: r2, arrival_ms: 5, prompt: [{ tokens: 8 }], output_length: 50 }'],
  });
  const { report, result } = replay(yaml);
  assertEveryRequestEnded(result);
  const [r1, r2] = report.per_request;
  const placement = r2.decode_routing!;
  assert.ok(r1.last_token_ms! > placement.time_ns / 1e6, 'r1 still decodes when r2 is placed');
  const onR1sWorker = placement.candidates.find((c) => c.worker_id === r1.decode_worker_id)!;
  assert.deepEqual(
    placement.candidates.map((c) => c.active_prefill_tokens),
    [0, 0],
    'no decode candidate counts prompt tokens to prefill (r1 counted its 15 until it finished)',
  );
  assert.equal(onR1sWorker.decode_blocks, 3 + 2, "r1's 3 complete blocks and r2's own 2");
  assert.notEqual(r2.decode_worker_id, r1.decode_worker_id, 'r2 goes to the decode worker without r1');
});

test('a prefill worker needs G1 for the prompt only: a prompt that fills it exactly runs there, its outputs are decoded elsewhere (PD-1)', () => {
  const run = (prompt_tokens: number) =>
    replay(
      disaggregated({
        bandwidth_gbps: 10,
        latency_ms: 0,
        prefillBlocks: 4,
        decodeReplicas: 1,
        decodeBlocks: 64,
        requests: [`{ id: r1, arrival_ms: 0, prompt: [{ tokens: ${prompt_tokens} }], output_length: 2 }`],
      }),
    ).report.per_request[0];
  // 16 tokens are the prefill worker's 4 blocks; the second output token is decoded on the decode worker.
  const fits = run(16);
  assert.equal(fits.status, 'finished', fits.failure_reason ?? '');
  assert.equal(fits.first_token_ms, 1, 'its prefill pass');
  // 17 tokens need 5 blocks there: the prompt alone does not fit, and the reason says so.
  const tooLong = run(17);
  assert.equal(tooLong.status, 'failed');
  assert.equal(tooLong.failure_reason, 'needs 5 G1 blocks for its prompt; the rank (prefill worker) has 4');
});

test('a request that cannot be admitted for want of G1 room does not refresh its cached prefix: LRU evicts that older prefix first (ENG-3)', () => {
  // A frees its prefix p at 1 ms; C frees its blocks at 3 ms. W, which starts with p, is refused
  // admission pass after pass (no room). When D needs blocks, p (older) goes before C's blocks; W,
  // admitted at 6 ms, then reuses nothing. kvqual used to put p back as the most recent at every
  // refusal, so C's blocks went first and W reused 1 token.
  const { report } = replay(`seed: 1
cluster: {workers: [{role: aggregated, replicas: 1, engine: {block_size: 1, num_gpu_blocks: 8, max_num_seqs: 4, max_num_batched_tokens: 5, timing: {fixed: {prefill_ms: 1, decode_ms: 1}}}}]}
router: {policy: kv}
workload:
  prefixes: {p: 2}
  requests:
    - {id: A, arrival_ms: 0, prompt: [{prefix: p}], output_length: 1}
    - {id: D, arrival_ms: 0, prompt: [{tokens: 3}], output_length: 5}
    - {id: C, arrival_ms: 1, prompt: [{tokens: 2}], output_length: 1}
    - {id: W, arrival_ms: 1, prompt: [{prefix: p}, {tokens: 4}], output_length: 1}
`);
  const w = report.per_request.find((r) => r.request_id === 'W')!;
  assert.deepEqual([w.g1_reused_tokens, w.first_admission_ms, w.first_token_ms], [0, 6, 8]);
});
