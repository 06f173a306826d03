// What each pass of an engine rank schedules (ENG-1, ENG-2): the token budget binds and chunks a
// long prefill, decode steps take a token each, a pass that preempted admits nothing new, restores
// in flight hold running slots, and the gaps between a request's tokens are the pass times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { requestSpecs } from '../../src/config/build';
import type { PassObservation, RankEngine } from '../../src/engine/rank';
import { eventLogOf } from '../../src/fuzz/runCase';
import { SimRequest } from '../../src/engine/request';
import type { Placement } from '../../src/router/router';

/** One aggregated worker (4-token blocks, 1 ms prefill, 0.5 ms decode) with these engine settings, host memory and requests. */
function configYaml(engine: string, requests: string[], host: string): string {
  return [
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
}

/** When a request of a run was first admitted, in ns. */
function admittedAt(outcome: ReturnType<typeof runReplay>, request_id: string): number {
  return outcome.report.per_request.find((r) => r.request_id === request_id)!.admission_history.find((a) => a.outcome === 'admitted')!.time_ns;
}

function run(engine: string, requests: string[], host = '', observe?: (rank: RankEngine, pass: PassObservation) => void) {
  const yaml = configYaml(engine, requests, host);
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

test('restores in flight take no running slot, as in vLLM: with one slot, two resumes load at once, and the second is admitted when the first is done', () => {
  const { outcome } = run(
    'num_gpu_blocks: 16, max_num_seqs: 1, max_num_batched_tokens: 64',
    [
      '{ id: a1, session: A, arrival_ms: 0, prompt: [{ tokens: 9 }], output_length: 2 }',
      '{ id: c1, session: C, arrival_ms: 2, prompt: [{ tokens: 9 }], output_length: 2 }',
      '{ id: f, session: F, arrival_ms: 5, prompt: [{ tokens: 60 }], output_length: 1 }',
      '{ id: a2, session: A, arrival_ms: 20, extends: a1, prompt: [{ tokens: 4 }], output_length: 30 }',
      '{ id: c2, session: C, arrival_ms: 20, extends: c1, prompt: [{ tokens: 4 }], output_length: 2 }',
    ],
    'num_host_blocks: 32, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 0.001',
  );
  const loads = outcome.result.transfers.filter((t) => t.direction === 'h2d');
  assert.equal(loads.length, 2, 'both resumes restore from G2');
  assert.ok(loads[1].submitted_ns < loads[0].finished_ns!, 'the second restore starts while the first one loads');
  const a2 = outcome.report.per_request.find((r) => r.request_id === 'a2')!;
  assert.ok(admittedAt(outcome, 'c2') >= a2.last_token_ms! * 1_000_000, 'the second resume waits, loaded, for the one running slot');
  assert.ok(admittedAt(outcome, 'c2') >= loads[1].finished_ns!);
  assert.equal(outcome.report.summary.requests.finished, 5);
});

/** The same config run twice: batching runs of identical decode passes, and stepping each one. */
function batchedAndStepped(engine: string, requests: string[], host = '') {
  return batchedAndSteppedYaml(configYaml(engine, requests, host));
}

/** batchedAndStepped for a whole config (the passes of its first rank). */
function batchedAndSteppedYaml(yaml: string) {
  const runWith = (step_every_pass: boolean) => {
    const passes: PassObservation[] = [];
    let kernelEvents = 0;
    const outcome = runReplay(parseReplayConfig(yaml, 'decode runs test'), {
      step_every_pass,
      keep_event_history: true,
      observe: (cluster) => {
        cluster.ranks[0].passObserver = (_rank, pass) => passes.push(pass);
        const run = cluster.run.bind(cluster);
        cluster.run = () => {
          const result = run();
          kernelEvents = cluster.kernel.eventsProcessed;
          return result;
        };
      },
    });
    return { outcome, passes, kernelEvents, events: eventLogOf(outcome) };
  };
  return { batched: runWith(false), stepped: runWith(true) };
}

test('a run of identical decode passes goes through the kernel as one action, with the same tokens, passes and digest as stepping', () => {
  // One request: 8-token prompt, 40 output tokens; blocks of 4 tokens, so a new block every 4 decode steps.
  const { batched, stepped } = batchedAndStepped('num_gpu_blocks: 32, max_num_seqs: 4, max_num_batched_tokens: 64', ['{ id: r, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 40 }']);
  assert.equal(batched.outcome.report.digest, stepped.outcome.report.digest);
  assert.deepEqual(batched.passes, stepped.passes, 'every pass observed, at its own start, with its own shape');
  assert.equal(stepped.passes.length, 40, 'one prefill pass, then 39 decode passes');
  assert.equal(batched.outcome.report.per_request[0].last_token_ms, 1 + 39 * 0.5);
  assert.ok(batched.kernelEvents < stepped.kernelEvents / 2, `batched ${batched.kernelEvents} kernel events, stepped ${stepped.kernelEvents}`);
});

test('a request arriving during a decode run cuts it: at a pass boundary it joins the next pass, mid-pass the pass after', () => {
  const engine = 'num_gpu_blocks: 64, max_num_seqs: 4, max_num_batched_tokens: 64';
  const long = '{ id: long, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 30 }';
  // The long request's decode passes end at 1.5, 2, 2.5, … ms: one arrival on a boundary, one inside a pass.
  for (const arrival of ['3', '3.25', '1.5', '1.0']) {
    const { batched, stepped } = batchedAndStepped(engine, [long, `{ id: late, arrival_ms: ${arrival}, prompt: [{ tokens: 4 }], output_length: 6 }`]);
    assert.equal(batched.outcome.report.digest, stepped.outcome.report.digest, `arrival at ${arrival} ms`);
    assert.deepEqual(batched.passes, stepped.passes, `arrival at ${arrival} ms`);
    assert.ok(batched.kernelEvents < stepped.kernelEvents, `arrival at ${arrival} ms: batched ${batched.kernelEvents}, stepped ${stepped.kernelEvents}`);
  }
});

test('no decode run starts while a preempted request waits for G1 blocks: it may be readmitted at the next pass boundary', () => {
  // Two G1 blocks, two one-token prompts: each decodes in one block until r0's fourth token needs a
  // second block; r1 is preempted for it and waits, readmitted once room frees. (A fuzzer counterexample.)
  const { batched, stepped } = batchedAndStepped('num_gpu_blocks: 2, max_num_seqs: 2, max_num_batched_tokens: 32', [
    '{ id: r0, arrival_ms: 0, prompt: [{ tokens: 1 }], output_length: 7 }',
    '{ id: r1, arrival_ms: 0, prompt: [{ tokens: 1 }], output_length: 5 }',
  ]);
  assert.equal(batched.outcome.report.digest, stepped.outcome.report.digest);
  assert.deepEqual(batched.passes, stepped.passes);
  const waited = stepped.outcome.report.per_request.filter((record) => record.admission_history.some((attempt) => attempt.outcome === 'no-blocks'));
  assert.ok(waited.length > 0, 'a preempted request did wait for blocks');
});

test('no decode run starts while events are due at the end of the pass (a fuzzer counterexample)', () => {
  // One request slot and a budget of one token a pass: r2 decodes while KV events of the requests
  // before it are still due at the ends of its passes. The shrunk case the fuzzer found when the
  // decode run ignored the events due.
  const { batched, stepped } = batchedAndSteppedYaml(`seed: 0
cluster:
  workers:
    - role: aggregated
      replicas: 1
      engine: { block_size: 2, num_gpu_blocks: 13, max_num_seqs: 1, max_num_batched_tokens: 1, kv_cache_bytes_per_token: 1, timing: { fixed: { prefill_ms: 0.25, decode_ms: 0.25 } } }
router: { policy: round_robin, kv_event_lag_ms: 0 }
workload:
  trace_block_size: 2
  requests:
    - { id: r0, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 0 }
    - { id: r1, arrival_ms: 0, hash_ids: [0], input_length: 2, output_length: 0 }
    - { id: r2, arrival_ms: 0, prompt: [{ tokens: 5 }], output_length: 6 }
`);
  assert.equal(batched.outcome.report.digest, stepped.outcome.report.digest);
  assert.deepEqual(batched.passes, stepped.passes);
  assert.equal(batched.events, stepped.events, 'the same KV events, emitted at the same instants');
});

test('no decode run starts while a running request has complete blocks still to write to G2 (a fuzzer counterexample)', () => {
  // Workers share one slow G2 pool. A request decodes while some of its complete blocks are not yet
  // written through to the pool; the write starts at a pass end, so the passes differ. The shrunk
  // case the fuzzer found when the decode run ignored pending write-through.
  const { batched, stepped } = batchedAndSteppedYaml(`seed: 0
cluster:
  workers:
    - role: aggregated
      replicas: 1
      engine: { block_size: 4, num_gpu_blocks: 2, max_num_seqs: 1, max_num_batched_tokens: 32, kv_cache_bytes_per_token: 1, timing: { table: { prefill: [{ tokens: 1, ms: 0.25 }], decode: [{ batch_size: 1, context_tokens: 1, ms: 0.25 }], source: generated } } }
    - role: aggregated
      replicas: 2
      engine: { block_size: 4, num_gpu_blocks: 13, max_num_seqs: 1, max_num_batched_tokens: 32, kv_cache_bytes_per_token: 1, timing: { fixed: { prefill_ms: 0.25, decode_ms: 0.25 } } }
      host_offload: { num_host_blocks: 2, scope: cluster_shared, d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0, latency_to_first_byte_ms: 0, shared_d2h_bandwidth_gbps: 0.1, shared_h2d_bandwidth_gbps: 0 }
router: { policy: kv, kv_event_lag_ms: 0.25 }
workload:
  trace_block_size: 2
  prefixes: { prefix 0: 1 }
  requests:
    - { id: r0, arrival_ms: 0, prompt: [{ prefix: prefix 0 }, { tokens: 3 }], output_length: 3 }
    - { id: r1, arrival_ms: 0, prompt: [{ prefix: prefix 0 }, { tokens: 7 }], output_length: 0 }
    - { id: r2, arrival_ms: 0, hash_ids: [0], input_length: 1, output_length: 0 }
`);
  assert.equal(batched.outcome.report.digest, stepped.outcome.report.digest);
  assert.equal(batched.events, stepped.events, 'the same KV events, emitted at the same instants');
});

test("a request's placements and admission attempts are its own: every request starts with one frozen empty list, and its first item gives it an array of its own", () => {
  const identity = (request_id: string) => ({ request_id, ordinal: 0, session_id: null, play_id: null, cache_id: null, lane: null });
  const [a, b] = [new SimRequest(identity('a'), 16, 1), new SimRequest(identity('b'), 16, 1)];
  assert.ok(Object.isFrozen(a.routing_history) && Object.isFrozen(a.admission_history) && Object.isFrozen(a.host_restore_sources));
  const placement = (time_ns: number) => ({ request_id: 'a', ordinal: 0, time_ns, policy: 'kv', candidates: [], worker_id: 0, dp_rank: 0, device_blocks: 0, host_blocks: 0, selected_overlap_blocks: 0, best_available_overlap_blocks: 0, reported_overlap_tokens: 0, tied_candidates: 1 }) satisfies Placement;
  a.addPlacement(placement(1));
  a.addPlacement(placement(2));
  a.addAttempt({ time_ns: 3, worker_id: 0, dp_rank: 0, outcome: 'deferred', g1_blocks: 0, host_blocks: 1, reason: 'pending' });
  assert.deepEqual(a.routing_history.map((p) => p.time_ns), [1, 2]);
  assert.deepEqual(a.admission_history.map((attempt) => attempt.outcome), ['deferred']);
  assert.equal(b.routing_history.length + b.admission_history.length, 0, 'another request saw them');
  assert.throws(() => (b.routing_history as Placement[]).push(placement(4)), TypeError, 'the shared empty list took an item');
});

test("preparing a store touches the request's keys already in G2, as vLLM's offloading connector does: a long prefill's first blocks outlive another request's newer ones", () => {
  // Two workers share a 6-block pool; copies are instant. r (16 tokens) is prefilled on worker 0 in
  // two chunks of 8: its first two blocks are stored at 1 ms, s's two at 1.5 ms (worker 1), and r's
  // last two are prepared at 2 ms, which touches r's first two again. The pool is then full, and
  // t's two blocks at 4 ms evict the two least recently used: s's, not r's first ones.
  const yaml = [
    'seed: 1',
    'cluster:',
    '  workers:',
    '    - role: aggregated',
    '      replicas: 2',
    '      engine: { block_size: 4, num_gpu_blocks: 16, max_num_seqs: 4, max_num_batched_tokens: 8, kv_cache_bytes_per_token: 1000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }',
    '      host_offload: { num_host_blocks: 6, scope: cluster_shared, d2h_bandwidth_gbps: 0, h2d_bandwidth_gbps: 0, shared_d2h_bandwidth_gbps: 0, shared_h2d_bandwidth_gbps: 0 }',
    'router: { policy: kv }',
    'workload:',
    '  requests:',
    '    - { id: r, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 1, target_worker: 0 }',
    '    - { id: s, arrival_ms: 0.5, prompt: [{ tokens: 8 }], output_length: 1, target_worker: 1 }',
    '    - { id: t, arrival_ms: 3, prompt: [{ tokens: 8 }], output_length: 1, target_worker: 1 }',
  ].join('\n');
  const config = parseReplayConfig(yaml, 'touch test');
  const outcome = runReplay(config, { keep_event_history: true });
  assert.equal(outcome.report.summary.requests.finished, 3);
  // The pool's residency at the end, from the HostPinned events (each worker's stream tells the whole shared pool).
  const inPool = new Set<bigint>();
  for (const { batch } of outcome.result.batches) {
    if (batch.worker_id !== 0) continue;
    for (const event of batch.events) {
      if (event.tier !== 'HostPinned') continue;
      if (event.data.type === 'Stored') for (const block of event.data.blocks) inPool.add(block.block_hash);
      if (event.data.type === 'Removed') for (const hash of event.data.block_hashes) inPool.delete(hash);
    }
  }
  const resident = (id: string) => requestSpecs(config).find((spec) => spec.identity.request_id === id)!.prompt.blockHashes(4).map((hash) => inPool.has(hash));
  assert.deepEqual(resident('r'), [true, true, true, true], "r's four blocks stay");
  assert.deepEqual(resident('s'), [false, false], "s's blocks, older than r's first two once those were touched, are evicted");
  assert.deepEqual(resident('t'), [true, true]);
});

test("a request that ended keeps its GPU blocks while its prompt is still being copied to G2, as vLLM's offloading connector does", () => {
  // r ends at its prefill (1 ms) with its three blocks' copy to G2 still waiting 10 ms for its first
  // byte; s needs three of the four GPU blocks and is admitted only when that copy ends.
  const { outcome } = run(
    'num_gpu_blocks: 4, max_num_seqs: 4, max_num_batched_tokens: 64',
    ['{ id: r, arrival_ms: 0, prompt: [{ tokens: 12 }], output_length: 1 }', '{ id: s, arrival_ms: 2, prompt: [{ tokens: 12 }], output_length: 1 }'],
    'num_host_blocks: 16, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, latency_to_first_byte_ms: 10',
  );
  const copy = outcome.result.transfers.find((t) => t.direction === 'd2h')!;
  assert.equal(copy.blocks, 3);
  assert.equal(admittedAt(outcome, 's'), copy.finished_ns, "s is admitted the moment r's copy ends");
  assert.ok(admittedAt(outcome, 's') > 11_000_000);
  assert.equal(outcome.report.summary.requests.finished, 2);
});

test('an ended request keeps its GPU blocks until the last of its G2 copies ends, not the first', () => {
  // r's 16 tokens are prefilled in two chunks of 8 (1 ms each): a copy of two blocks starts at 1 ms and
  // another at 2 ms, each waiting 10 ms for its first byte on the rank's one D2H lane (FIFO). r ends
  // at 2 ms; s needs three of the four GPU blocks and is admitted only when the second copy ends.
  const { outcome } = run(
    'num_gpu_blocks: 5, max_num_seqs: 4, max_num_batched_tokens: 8',
    ['{ id: r, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 1 }', '{ id: s, arrival_ms: 3, prompt: [{ tokens: 12 }], output_length: 1 }'],
    'num_host_blocks: 16, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1, latency_to_first_byte_ms: 10',
  );
  const copies = outcome.result.transfers.filter((t) => t.direction === 'd2h').sort((a, b) => a.finished_ns! - b.finished_ns!);
  assert.ok(copies.length >= 2 && copies[0].finished_ns! < copies[1].finished_ns!, 'two copies end at different times');
  assert.equal(admittedAt(outcome, 's'), copies[1].finished_ns, "s is admitted when r's second copy ends");
});

test('a pass that preempts two requests still being copied to G2 computes when the later of their copies ends, as vLLM waits for them', () => {
  // a (20 tokens), b and c (4 tokens each) fill the 7 GPU blocks at their prefill (0 to 1 ms); their
  // copies to G2 then take 1 ms a block, one after the other on the rank's D2H lane: a's ends at
  // 6 ms, b's at 7 ms, c's at 8 ms. The second pass needs two more blocks: it preempts c, then b
  // itself, and computes only when both copies are done.
  const engine = 'num_gpu_blocks: 7, max_num_seqs: 4, max_num_batched_tokens: 64';
  const requests = ['a', 'b', 'c'].map((id) => `{ id: ${id}, arrival_ms: 0, prompt: [{ tokens: ${id === 'a' ? 20 : 4} }], output_length: 3 }`);
  const host = 'num_host_blocks: 16, d2h_bandwidth_gbps: 0.004, h2d_bandwidth_gbps: 1';
  const { outcome, passes } = run(engine, requests, host);
  const copyEnd = (id: string) => outcome.result.transfers.find((t) => t.direction === 'd2h' && t.request_id === id)!.finished_ns!;
  assert.deepEqual(['a', 'b', 'c'].map(copyEnd), [6_000_000, 7_000_000, 8_000_000]);
  assert.deepEqual(['b', 'c'].map((id) => outcome.report.per_request.find((r) => r.request_id === id)!.preemptions), [1, 1]);
  assert.deepEqual(passes.slice(0, 2).map((pass) => pass.time_ns), [0, copyEnd('c')], 'the second pass computes when the later copy ends');
  assert.equal(outcome.report.summary.requests.finished, 3);
  // The same run without a pass observer (as `kvqual replay` runs it) waits alike.
  const plain = runReplay(parseReplayConfig(configYaml(engine, requests, host), 'plain'));
  assert.equal(plain.report.digest, outcome.report.digest);
});

test('a prefill worker hands off only requests with output tokens left: a 1-token request ends there', () => {
  const yaml = [
    'seed: 1',
    'cluster:',
    '  kv_transfer_bandwidth_gbps: 1',
    '  workers:',
    '    - { role: prefill, replicas: 1, engine: { block_size: 4, num_gpu_blocks: 8, max_num_seqs: 4, max_num_batched_tokens: 64, kv_cache_bytes_per_token: 1000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } } }',
    '    - { role: decode, replicas: 1, engine: { block_size: 4, num_gpu_blocks: 8, max_num_seqs: 4, max_num_batched_tokens: 64, kv_cache_bytes_per_token: 1000, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } } }',
    'router: { policy: kv }',
    'workload:',
    '  requests:',
    '    - { id: one, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 1 }',
    '    - { id: two, arrival_ms: 0, prompt: [{ tokens: 8 }], output_length: 2 }',
  ].join('\n');
  const outcome = runReplay(parseReplayConfig(yaml, 'handoff test'), {});
  const handoffs = outcome.result.transfers.filter((t) => t.direction === 'p2d').map((t) => t.request_id);
  assert.deepEqual(handoffs, ['two']);
  assert.equal(outcome.report.summary.requests.finished, 2);
});
