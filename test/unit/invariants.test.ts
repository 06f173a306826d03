// The invariant checker must be able to fail: a clean run of an example config passes, and each
// hand-broken copy of it (an unfinished request, a failure without a reason, an over-capacity
// pass, an invalid or incomplete event log, time running backwards, a transfer of partial blocks,
// reuse beyond the prompt, an undocumented reconciliation reason, a crash, two different digests)
// is reported under the invariant it breaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseReplayConfig } from '../../src/config/load';
import { checkRun, declaredBandwidths, declaredLagMs, declaredRouterWeights, passViolations, transferBandwidthsOf, type InvariantName, type ObservedRun } from '../../src/fuzz/invariants';
import YAML from 'yaml';
import { formatNs, msToNs } from '../../src/time';
import { determinismViolations, runObserved } from '../../src/fuzz/runCase';
import { PassLedger } from '../../src/fuzz/passLedger';
import { InvariantError } from '../../src/kernel';
import { EventTransport } from '../../src/events/transport';
import { parseAgenticTrace } from '../../src/agentic/trace';
import { ROOT } from '../support/paths';
import { aggregated, tightDecodeWorker } from '../support/configs';
import { checkEventLog } from '../../src/events/checkLog';
import { parseWireLog } from '../../src/events/wire';
import { buildReport, digestPending, type RequestRecord, type RunReport, type RunSummary } from '../../src/report/report';
import type { PlayRecord } from '../../src/agentic/driver';
import { runReplay } from '../../src/replay';
import { digestOf } from '../../src/report/canonical';

const EXAMPLE = path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml');

function cleanRun(): ObservedRun {
  const run = runObserved(parseReplayConfig(readFileSync(EXAMPLE, 'utf8'), EXAMPLE), {});
  assert.equal(run.error, null);
  return run;
}

/**
 * checkRun of a run whose requests a test changed after its report was made: the summary and the
 * run's statistics then no longer add up the records made from them (and a changed token time no
 * longer fits the metrics), which only those invariants' own tests are about.
 */
function checkChanged(run: ObservedRun): ReturnType<typeof checkRun> {
  return checkRun(run).filter((violation) => violation.invariant !== 'report-summary' && violation.invariant !== 'request-metrics');
}

function brokenInvariants(run: ObservedRun): InvariantName[] {
  return [...new Set(checkChanged(run).map((violation) => violation.invariant))];
}

test('a clean run of an example config breaks no invariant, and its passes were observed', () => {
  const run = cleanRun();
  assert.deepEqual(checkRun(run), []);
  assert.ok(run.passes.length > 0);
  assert.ok(run.event_log.length > 0);
  assert.ok(run.outcome!.result.transfers.length > 0);
});

test('a request that never ended is named with where it waits', () => {
  const run = cleanRun();
  const request = run.outcome!.result.requests[1];
  request.state = 'waiting';
  const violations = checkChanged(run);
  assert.deepEqual(violations.map((v) => v.invariant), ['request-ended']);
  assert.match(violations[0].message, new RegExp(`request ${request.request_id} never ended: waiting on worker \\d dp rank 0 since`));
});

test('a request that never ended on its first rank is named there, waiting since its last admission attempt', () => {
  const run = cleanRun();
  const request = run.outcome!.result.requests.find((r) => r.rank_index === 0 && r.admission_history.length > 1)!;
  assert.ok(request, 'a request on the first rank admitted at its second attempt');
  request.state = 'waiting';
  const [first, last] = [request.admission_history[0], request.admission_history.at(-1)!];
  assert.ok(first.time_ns < last.time_ns);
  const rank = run.outcome!.result.ranks[0].rank;
  const violations = checkChanged(run);
  assert.deepEqual(violations.map((v) => v.message), [`request ${request.request_id} never ended: waiting on worker ${rank.worker_id} dp rank ${rank.dp_rank} since ${formatNs(last.time_ns)} (arrived ${formatNs(request.arrival_ns)}, ${request.output_tokens}/${request.output_length} output tokens; last admission attempt on worker ${last.worker_id} dp rank ${last.dp_rank} at ${formatNs(last.time_ns)}: ${last.outcome})`]);
});

test('a decode half that never ended is named on its decode worker, waiting since its first attempt there', () => {
  const yaml = tightDecodeWorker(['{ id: p1, session: A, arrival_ms: 0, prompt: [{ tokens: 16 }], output_length: 4 }']);
  const run = runObserved(parseReplayConfig(yaml, 'pd.yaml'), {});
  const request = run.outcome!.result.requests.find((r) => r.stage === 'decode')!;
  request.state = 'waiting';
  const violations = checkChanged(run);
  assert.deepEqual(violations.map((v) => v.invariant), ['request-ended']);
  assert.match(violations[0].message, new RegExp(`^request ${request.request_id} never ended: waiting on decode worker ${request.decode_worker_id} dp rank 0 since 1 ms \\(arrived 0 ms, `));
});

test('a failed or skipped request without a reason, or a finish short of its output, is a violation', () => {
  for (const state of ['failed', 'skipped'] as const) {
    const run = cleanRun();
    run.outcome!.result.requests[0].state = state;
    assert.deepEqual(brokenInvariants(run), ['request-ended'], state);
    const request = run.outcome!.result.requests[0];
    if (state === 'failed') request.failure_reason = 'needs 9 G1 blocks; the rank has 8';
    else request.skip_reason = 'play p failed: request p/r0 failed (needs 9 G1 blocks; the rank has 8)';
    assert.deepEqual(brokenInvariants(run), [], `${state} with a reason`);
  }
  const run = cleanRun();
  run.outcome!.result.requests[0].output_tokens -= 1;
  assert.deepEqual(brokenInvariants(run), ['request-ended']);
});

test('a pass over any capacity is a violation', () => {
  const overs: [string, (pass: ObservedRun['passes'][number]) => void][] = [
    ['running requests', (pass) => (pass.running_requests = pass.max_num_seqs + 1)],
    [
      'token budget',
      (pass) => {
        pass.shape.prefill_tokens += pass.max_num_batched_tokens + 1 - pass.scheduled_tokens; // the shape agrees with the plan
        pass.shape.has_prefill = true;
        pass.scheduled_tokens = pass.max_num_batched_tokens + 1;
      },
    ],
    ['G1', (pass) => (pass.g1_occupied_blocks = pass.num_gpu_blocks + 1)],
    ['G2', (pass) => (pass.host_used_blocks = pass.host_capacity_blocks! + 1)],
  ];
  for (const [what, breakPass] of overs) {
    const run = cleanRun();
    breakPass(run.passes[0]);
    const violations = checkRun(run);
    assert.deepEqual(violations.map((v) => v.invariant), ['capacity'], what);
    assert.match(violations[0].message, /worker \d dp rank 0, pass at .*: \d+ .* > \d+/);
  }
});

test('a pass whose duration is not what its timing model gives, or whose shape disagrees with its plan, is a violation', () => {
  const breaks: [string, (pass: ObservedRun['passes'][number]) => void, RegExp][] = [
    ['fixed, 1 ns longer', (pass) => (pass.duration_ns += 1), /fixed timing gives/],
    ['zero', (pass) => (pass.duration_ns = 0), /not a whole number of at least 1/],
    ['fraction', (pass) => (pass.duration_ns = 0.5), /not a whole number/],
    ['shape', (pass) => (pass.shape.prefill_tokens += 1), /its shape counts/],
    [
      'linear, rounded down',
      (pass) => {
        pass.pass_time = { model: 'linear', base_ps: 1_500n, prefill_token_ps: 0n, decode_sequence_ps: 0n, context_token_ps: 0n };
        pass.duration_ns = 1; // 1.5 ns rounds up to 2
      },
      /the linear model gives 1500 ps/,
    ],
    [
      'table, off its point',
      (pass) => {
        pass.shape = { has_prefill: true, prefill_tokens: pass.scheduled_tokens, decode_sequences: 0, context_tokens: pass.scheduled_tokens, decode_context_tokens: 0 };
        pass.pass_time = { model: 'table', prefill_tokens: [pass.scheduled_tokens], prefill_ns: [7_000], decode_batch_sizes: [1], decode_context_tokens: [1], decode_ns: [[1]] };
        pass.duration_ns = 7_001;
      },
      /the table's point is 7000 ns/,
    ],
  ];
  for (const [what, breakPass, message] of breaks) {
    const run = cleanRun();
    breakPass(run.passes[0]);
    const violations = checkRun(run);
    assert.deepEqual(violations.map((v) => v.invariant), ['pass-time'], what);
    assert.match(violations[0].message, message, what);
  }
  const linear = cleanRun();
  linear.passes[0].pass_time = { model: 'linear', base_ps: 1_500n, prefill_token_ps: 0n, decode_sequence_ps: 0n, context_token_ps: 0n };
  linear.passes[0].duration_ns = 2;
  assert.deepEqual(checkRun(linear), [], '1.5 ns rounded up to 2 ns holds');
});

test('an event log the strict checker rejects, or that does not parse, is a violation', () => {
  const run = cleanRun();
  const lines = run.event_log.trimEnd().split('\n');
  run.event_log = `${[lines[0], ...lines].join('\n')}\n`; // the first batch twice: a duplicate / out-of-sequence event
  const rejected = checkChanged(run);
  assert.deepEqual(rejected.map((v) => v.invariant), ['event-stream']);
  assert.match(rejected[0].message, /^line 2: ./, 'the line the checker stopped at');
  run.event_log = '{"worker_id": 0}\n';
  const unparsed = checkChanged(run);
  assert.deepEqual(unparsed.map((v) => v.invariant), ['event-stream']);
  assert.match(unparsed[0].message, /^the event log does not parse: line 1: ./);
});

test('an event log that leaves the mirror different from the engines is a violation', () => {
  const run = cleanRun();
  const lines = run.event_log.trimEnd().split('\n');
  run.event_log = `${lines.slice(0, -1).join('\n')}\n`; // the last batch never delivered
  assert.deepEqual(brokenInvariants(run), ['mirror-matches-engines']);
});

test('the KV events showing more blocks on a rank than its G1 or G2 holds is a violation, counted from the events alone', () => {
  const run = cleanRun();
  const report = checkEventLog(parseWireLog(run.event_log));
  assert.equal(report.status, 'clean');
  if (report.status !== 'clean') return;
  const rank = run.outcome!.result.ranks[0];
  const seen = report.ranks.find((r) => r.worker_id === rank.rank.worker_id && r.dp_rank === rank.rank.dp_rank)!;
  assert.ok(seen.peak_resident_blocks.Device > 0 && seen.peak_resident_blocks.HostPinned > 0, 'the example stores on both tiers');
  // The engines' own counts (the capacity invariant's) are left as they were: only the events' count is checked here.
  (rank.g1 as { capacity_blocks: number }).capacity_blocks = seen.peak_resident_blocks.Device - 1;
  (rank.host!.pool as { capacity_blocks: number }).capacity_blocks = seen.peak_resident_blocks.HostPinned - 1;
  const where = `worker ${rank.rank.worker_id} dp rank ${rank.rank.dp_rank}`;
  assert.deepEqual(
    checkChanged(run).filter((v) => v.invariant === 'reported-capacity'),
    [
      { invariant: 'reported-capacity', message: `${where}: the KV events show ${seen.peak_resident_blocks.Device} G1 blocks at once, num_gpu_blocks is ${seen.peak_resident_blocks.Device - 1}` },
      { invariant: 'reported-capacity', message: `${where}: the KV events show ${seen.peak_resident_blocks.HostPinned} G2 blocks at once, its G2 holds ${seen.peak_resident_blocks.HostPinned - 1}` },
    ],
  );
});

/** The example with the round-robin policy, on three replicas (or the given workers' lines). */
function roundRobinRun(workers = 'replicas: 3'): ObservedRun {
  const yaml = readFileSync(EXAMPLE, 'utf8').replace('replicas: 2', workers).replace('policy: kv', 'policy: round_robin');
  const run = runObserved(parseReplayConfig(yaml, EXAMPLE), {});
  assert.equal(run.error, null);
  return run;
}

test('round robin: placements out of turn are a violation; the order among placements of one instant is free', () => {
  const run = roundRobinRun();
  assert.deepEqual(checkRun(run), []);
  const placed = (id: string) => run.outcome!.result.requests.find((r) => r.request_id === id)!.routing_history[0];
  // a1 at 0 ms, b1 and c1 at 5 ms, a2 at 20 ms over workers 0, 1, 2: 0, then 1 and 2, then 0.
  assert.deepEqual(['a1', 'b1', 'c1', 'a2'].map((id) => [placed(id).time_ns, placed(id).worker_id]), [[0, 0], [5_000_000, 1], [5_000_000, 2], [20_000_000, 0]]);
  [placed('b1').worker_id, placed('c1').worker_id] = [2, 1];
  assert.deepEqual(checkChanged(run).filter((v) => v.invariant === 'round-robin'), [], 'two placements of one instant taken in the other order');
  placed('a2').worker_id = 1;
  assert.deepEqual(checkChanged(run).filter((v) => v.invariant === 'round-robin'), [
    {
      invariant: 'round-robin',
      message: 'after the 4 placement(s) made by 20 ms, worker 0 dp rank 0 had 1; cycling from the first of 3 candidates gives 1 each and one more to the first 1 (worker 0 dp rank 0: 1, worker 1 dp rank 0: 2, worker 2 dp rank 0: 1)',
    },
  ]);
});

test('the settings a config leaves out are read as the spec\'s defaults, not as the loader fills them in', () => {
  const config = { cluster: { workers: [{ role: 'aggregated', replicas: 2, host_offload: { num_host_blocks: 4 } }, { role: 'aggregated', host_offload: { num_host_blocks: 4, scope: 'cluster_shared', h2d_bandwidth_gbps: 0 } }, { role: 'aggregated' }] }, router: { policy: 'kv', host_cache_hit_weight: 1 } };
  assert.deepEqual(declaredRouterWeights(config, 4), { block_size: 4, overlap_score_credit: 1, host_cache_hit_weight: 1, prefill_load_scale: 1, router_temperature: 0 });
  assert.deepEqual(declaredRouterWeights({ cluster: config.cluster }, 4), { block_size: 4, overlap_score_credit: 1, host_cache_hit_weight: 0.75, prefill_load_scale: 1, router_temperature: 0 });
  assert.equal(declaredLagMs(config), 0);
  const privateLinks = { shared: false, d2h_gbps: 32, h2d_gbps: 32, shared_d2h_gbps: 80, shared_h2d_gbps: 80 };
  assert.deepEqual(declaredBandwidths(config), { workers: [privateLinks, privateLinks, { shared: true, d2h_gbps: 32, h2d_gbps: 0, shared_d2h_gbps: 80, shared_h2d_gbps: 80 }, null], kv_transfer: null });
  // The example gives host_cache_hit_weight 1.0; had it been left out and the loader defaulted it to
  // 1.0 instead of SCORE-2's 0.75, the placements' costs are not what the spec's weights give.
  const run = cleanRun();
  assert.ok(run.outcome!.result.requests.some((r) => r.routing_history.some((p) => p.candidates.some((c) => c.host_blocks > 0))), 'a placement credits host blocks');
  const raw = YAML.parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, Record<string, unknown>>;
  delete raw.router.host_cache_hit_weight;
  run.router = declaredRouterWeights(raw, run.router.block_size);
  assert.ok(checkChanged(run).some((v) => v.invariant === 'placement-cost' && /credit is/.test(v.message)));
});

test('a placement credited with other blocks than the KV events the router had applied give is a violation', () => {
  const run = cleanRun();
  const credited = run.placement_views.find((view) => view.placement.candidates.some((c) => c.device_blocks + c.host_blocks > 0));
  assert.ok(credited !== undefined, 'some placement credits cached blocks');
  assert.ok(run.placement_views.every((view) => view.block_hashes.length > 0 && view.applied_events >= 0));
  const candidate = credited.placement.candidates.find((c) => c.device_blocks + c.host_blocks > 0)!;
  // As if the router had scored before applying any event: the events applied by then give nothing.
  credited.applied_events = 0;
  const at = `placing request ${credited.placement.request_id} at ${formatNs(credited.placement.time_ns)} after 0 KV event(s)`;
  assert.deepEqual(
    checkChanged(run).filter((v) => v.invariant === 'router-view'),
    [{ invariant: 'router-view', message: `${at}: worker ${candidate.worker_id} dp rank ${candidate.dp_rank} was credited ${candidate.device_blocks} GPU and ${candidate.host_blocks} host block(s); those events give 0 and 0` }],
  );
});

/**
 * One worker, 6 G1 blocks and private G2: a1's 17-token prompt (4 blocks) is written through to G2, b1
 * evicts a1's last block from G1, and a2 (extending a1) is placed when the worker holds 3 of a1's
 * blocks in G1 and the fourth in G2 only: credited 3 GPU and 1 host block.
 */
function gpuThenHostRun(): { run: ObservedRun; view: ObservedRun['placement_views'][number] } {
  const yaml = aggregated({
    host: 'num_host_blocks: 16, scope: dp_rank_local, d2h_bandwidth_gbps: 1, h2d_bandwidth_gbps: 1',
    requests: [
      '{ id: a1, arrival_ms: 0, prompt: [{ tokens: 17 }], output_length: 1 }',
      '{ id: b1, arrival_ms: 10, prompt: [{ tokens: 11 }], output_length: 1 }',
      '{ id: a2, arrival_ms: 30, extends: a1, prompt: [{ tokens: 4 }], output_length: 1 }',
    ],
  });
  const run = runObserved(parseReplayConfig(yaml, 'gpu-then-host.yaml'), {});
  assert.equal(run.error, null);
  const view = run.placement_views.find((v) => v.placement.request_id === 'a2')!;
  assert.deepEqual(view.placement.candidates.map((c) => [c.device_blocks, c.host_blocks]), [[3, 1]], 'a2 is credited a GPU run and the host block right after it');
  return { run, view };
}

const routerView = (run: ObservedRun) => checkChanged(run).filter((v) => v.invariant === 'router-view');

test('router view: a GPU run and the host run right after it pass; a GPU count one too high, with the host count right, is a violation', () => {
  const { run, view } = gpuThenHostRun();
  assert.deepEqual(checkRun(run), []);
  view.placement.candidates[0].device_blocks = 4;
  assert.deepEqual(routerView(run), [
    { invariant: 'router-view', message: `placing request a2 at 30 ms after ${view.applied_events} KV event(s): worker 0 dp rank 0 was credited 4 GPU and 1 host block(s); those events give 3 and 1` },
  ]);
});

test('router view: a Cleared event the router had applied before a placement leaves that rank nothing to credit', () => {
  const { run, view } = gpuThenHostRun();
  const lines = run.event_log.trimEnd().split('\n');
  assert.equal(parseWireLog(lines.slice(0, view.applied_events).join('\n')).flatMap((line) => line.batch.events).length, view.applied_events, 'a line per event up to the placement');
  const cleared = '{"worker_id":0,"storage_tier":"device","timestamp_ns":30000000,"event":{"event_id":99,"data":"cleared","dp_rank":0}}';
  run.event_log = `${[...lines.slice(0, view.applied_events), cleared, ...lines.slice(view.applied_events)].join('\n')}\n`;
  view.applied_events += 1;
  assert.deepEqual(routerView(run), [
    { invariant: 'router-view', message: `placing request a2 at 30 ms after ${view.applied_events} KV event(s): worker 0 dp rank 0 was credited 3 GPU and 1 host block(s); those events give 0 and 0` },
  ]);
});

test('router view: at most five violations are told, the first ones', () => {
  const { run, view } = gpuThenHostRun();
  view.applied_events = 0;
  run.placement_views = Array.from({ length: 7 }, () => view);
  assert.equal(routerView(run).length, 5);
});

test('round robin: the ranks are taken in (worker, dp rank) order whatever order the run lists them in; a placement on a rank no routed role has is a violation', () => {
  const twoByTwo = roundRobinRun('replicas: 2\n      dp_size: 2');
  twoByTwo.outcome!.result.ranks.reverse();
  assert.deepEqual(checkChanged(twoByTwo).filter((v) => v.invariant === 'round-robin'), [], 'two workers of two dp ranks each, listed backwards');
  const run = roundRobinRun();
  run.outcome!.result.ranks.reverse();
  assert.deepEqual(checkChanged(run).filter((v) => v.invariant === 'round-robin'), []);
  const a2 = run.outcome!.result.requests.find((r) => r.request_id === 'a2')!.routing_history[0];
  a2.worker_id = 7;
  assert.deepEqual(checkChanged(run).filter((v) => v.invariant === 'round-robin'), [{ invariant: 'round-robin', message: 'a placement at 20 ms went to worker 7 dp rank 0, which no routed role has' }]);
});

test('time running backwards in a request is a violation', () => {
  const run = cleanRun();
  const request = run.outcome!.result.requests[0];
  request.first_token_ns = request.arrival_ns - 1;
  assert.deepEqual(brokenInvariants(run), ['time-order']);
  const other = cleanRun();
  other.outcome!.result.requests[0].first_admission_ns = null;
  assert.deepEqual(brokenInvariants(other), ['time-order']);
});

test('a transfer of a partial block, or one that never finished, is a violation', () => {
  const run = cleanRun();
  run.outcome!.result.transfers[0].bytes -= 1;
  // A byte less would also take less time than the transfer took.
  assert.deepEqual(brokenInvariants(run), ['transfer-bytes', 'transfer-time']);
  const other = cleanRun();
  other.outcome!.result.transfers[0].finished_ns = null;
  assert.deepEqual(brokenInvariants(other), ['run-completed']);
});

test('reuse beyond the prompt is a violation', () => {
  const run = cleanRun();
  const request = run.outcome!.result.requests[0];
  request.g1_reused_tokens = request.input_length + 1;
  assert.ok(brokenInvariants(run).includes('reuse-within-prompt'));
});

test('ENG-4: reuse of the last prompt token of a request with output, or of part of a block, is a violation; a prefill-only request may reuse every complete block', () => {
  const reuse = (input_length: number, output_length: number, g1: number, host = 0) => {
    const run = cleanRun();
    const request = run.outcome!.result.requests[0];
    Object.assign(request, { input_length, output_length, g1_reused_tokens: g1, host_reused_tokens: host });
    return checkRun(run).filter((v) => v.invariant === 'reuse-within-prompt');
  };
  const block = cleanRun().outcome!.result.ranks[0].settings.block_size;
  // A prompt of exactly two blocks with output: only the first block may be reused.
  assert.deepEqual(reuse(2 * block, 3, block), []);
  const lastToken = reuse(2 * block, 3, block, block);
  assert.equal(lastToken.length, 1);
  assert.match(lastToken[0].message, new RegExp(`reused ${2 * block} tokens \\(G1 ${block}, G2 ${block}\\) of a ${2 * block}-token prompt with 3 output token\\(s\\): at most ${block} may be reused \\(ENG-4\\)`));
  assert.deepEqual(reuse(2 * block, 0, block, block), [], 'prefill-only: both blocks');
  assert.equal(reuse(3 * block, 1, block - 1).length, 1, 'part of a block');
  assert.equal(reuse(3 * block, 1, 0, block - 1).length, 1, 'part of a block from G2');
});

test('LAG-1: a KV event batch that reaches the router at another time than its emission + the config\'s lag is a violation', () => {
  const lagged = path.join(ROOT, 'examples', 'configs', 'lagged-events.yaml');
  const config = parseReplayConfig(readFileSync(lagged, 'utf8'), lagged);
  assert.deepEqual(runObserved(config, {}).delivery_violations, [], 'as the config says');
  // A transport that applies a nanosecond more than the config's lag (as a defect between the config and the router would).
  const emit = EventTransport.prototype.emit;
  EventTransport.prototype.emit = function (this: EventTransport, batch) {
    Object.defineProperty(this, 'lag_ns', { value: msToNs(config.router.kv_event_lag_ms) + 1, configurable: true });
    return emit.call(this, batch);
  };
  try {
    const run = runObserved(config, {});
    assert.ok(run.delivery_violations.length > 0 && run.delivery_violations.length <= 5, `${run.delivery_violations.length} kept`);
    assert.deepEqual([...new Set(checkRun(run).map((v) => v.invariant))], ['event-delivery']);
    assert.match(run.delivery_violations[0].message, /^a batch of worker \d+ dp rank \d+ emitted at [\d.]+ ms reached the router at [\d.]+ ms, not [\d.]+ ms \(its lag of [\d.]+ ms later\)$/);
  } finally {
    EventTransport.prototype.emit = emit;
  }
});

test("PD-1: a KV handoff that moves fewer (or more) blocks than its prompt fills is a violation", () => {
  const example = path.join(ROOT, 'examples', 'configs', 'prefill-decode.yaml');
  const run = runObserved(parseReplayConfig(readFileSync(example, 'utf8'), example), {});
  assert.deepEqual(checkRun(run), []);
  const handoff = run.outcome!.result.transfers.find((t) => t.direction === 'p2d')!;
  const blockBytes = handoff.bytes / handoff.blocks;
  Object.assign(handoff, { blocks: handoff.blocks - 1, bytes: handoff.bytes - blockBytes });
  const violations = checkRun(run).filter((v) => v.invariant === 'handoff-blocks');
  assert.equal(violations.length, 1);
  assert.match(violations[0].message, new RegExp(`^p2d transfer ${handoff.transfer_id} of worker \\d+ dp rank 0 moved ${handoff.blocks} block\\(s\\) of request ${handoff.request_id}'s \\d+-token prompt, which fills ${handoff.blocks + 1} of \\d+ tokens$`));  // A handoff for a request the run does not have, or in a cluster that declares no handoff bandwidth.
  const stranger = runObserved(parseReplayConfig(readFileSync(example, 'utf8'), example), {});
  const named = stranger.outcome!.result.transfers.find((t) => t.direction === 'p2d')!;
  named.request_id = 'nobody';
  assert.deepEqual(checkRun(stranger).map((v) => v.message), [`p2d transfer ${named.transfer_id} of worker ${named.worker_id} dp rank 0 names request "nobody", which the run does not have`]);
  const unpriced = runObserved(parseReplayConfig(readFileSync(example, 'utf8'), example), {});
  unpriced.bandwidths = { ...unpriced.bandwidths, kv_transfer: null };
  const handoffs = unpriced.outcome!.result.transfers.filter((t) => t.direction === 'p2d');
  assert.deepEqual(checkRun(unpriced).map((v) => v.message), handoffs.map((t) => `p2d transfer ${t.transfer_id} of worker ${t.worker_id} dp rank 0 (${t.bytes} bytes): a KV handoff in a cluster without kv_transfer_bandwidth_gbps`));
});

test('SCORE-2: prefill tokens the router counts beyond the prompts placed and not yet prefilled, or below zero, are a violation', () => {
  const run = cleanRun();
  const placed = run.outcome!.result.requests.find((r) => r.routing_history.length > 0 && r.routing_history[0].candidates.length > 1)!;
  assert.ok(placed, 'a placement with two candidates');
  assert.deepEqual(checkRun(run).filter((v) => v.invariant === 'router-load'), []);
  const candidate = placed.routing_history[0].candidates[0];
  const counted = candidate.active_prefill_tokens;
  for (const [tokens, what] of [[counted + 1_000_000, 'never drained'], [-1, 'drained twice']] as const) {
    candidate.active_prefill_tokens = tokens;
    const violations = checkRun(run).filter((v) => v.invariant === 'router-load');
    assert.equal(violations.length, 1, what);
    assert.match(violations[0].message, new RegExp(`^placing request ${placed.request_id} at [\\d.]+ ms, the router counted ${tokens} prefill tokens on worker ${candidate.worker_id} dp rank ${candidate.dp_rank}, where the requests placed and not yet prefilled have \\d+$`), what);
  }
  candidate.active_prefill_tokens = counted;
});

test("a summary that does not add up its requests (input tokens, counts by status, reuse, reconciliations) is a violation", () => {
  const clean = cleanRun();
  assert.deepEqual(checkRun(clean).filter((v) => v.invariant === 'report-summary'), []);
  const run = cleanRun();
  // The summary was made when the run ended; the records are made from the requests when read.
  const request = run.outcome!.result.requests[0];
  (request as { input_length: number }).input_length += 4;
  const messages = checkRun(run).filter((v) => v.invariant === 'report-summary').map((v) => v.message);
  assert.ok(messages.some((m) => /^the summary's tokens\.input \(the prompts sent\) is \d+; its \d+ request records give \d+$/.test(m)), messages.join('\n'));
  assert.ok(messages.some((m) => m.startsWith("the summary's prefix_reuse_ratio is")), messages.join('\n'));
  const skipped = cleanRun();
  skipped.outcome!.result.requests[0].state = 'skipped';
  const counts = checkRun(skipped).filter((v) => v.invariant === 'report-summary').map((v) => v.message);
  assert.ok(counts.some((m) => m.startsWith("the summary's requests.skipped is 0;")), counts.join('\n'));
});

test("RPT-2: a second token after the last, or a run percentile that is not its requests' nearest-rank value, is a violation", () => {
  const metricsOf = (run: ObservedRun) => checkRun(run).filter((v) => v.invariant === 'request-metrics').map((v) => v.message);
  assert.deepEqual(metricsOf(cleanRun()), []);
  const late = cleanRun();
  const request = late.outcome!.result.requests.find((r) => r.state === 'finished' && r.second_token_ns !== null)!;
  request.second_token_ns = request.finished_ns! + 1_000_000;
  assert.ok(metricsOf(late).some((m) => new RegExp(`^request ${request.request_id}: TTFT [\\d.]+ ms \\+ TTST [\\d.]+ ms is not within its E2E of [\\d.]+ ms$`).test(m)), metricsOf(late).join('\n'));
  const percentile = cleanRun();
  const stats = percentile.outcome!.report.summary.metrics.request_latency_ms;
  stats.p50 = stats.max! + 1;
  assert.ok(metricsOf(percentile).some((m) => /^the run's request_latency_ms\.p50 is [\d.]+; the nearest-rank value of its \d+ finished requests' is [\d.]+$/.test(m)), metricsOf(percentile).join('\n'));
});

test('AGX-1: a play request that arrives before or after the later of its offset and its dependencies + delays is a violation', () => {
  const example = path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml');
  const config = parseReplayConfig(readFileSync(example, 'utf8'), example);
  const traceFile = path.resolve(path.dirname(example), config.workload.agentic!.trace);
  const inputs = { agentic_trace: parseAgenticTrace(readFileSync(traceFile, 'utf8'), traceFile) };
  const releasesOf = (run: ObservedRun) => checkRun(run).filter((v) => v.invariant === 'play-release').map((v) => v.message);
  const clean = runObserved(config, inputs);
  assert.ok(clean.agentic_trace !== null && clean.outcome!.plays.length > 0);
  assert.deepEqual(releasesOf(clean), []);
  const run = runObserved(config, inputs);
  const dependent = run.outcome!.result.requests.find((r) => r.state !== 'skipped' && r.arrival_ns > 0)!;
  dependent.arrival_ns -= 1;
  const messages = releasesOf(run);
  assert.equal(messages.length, 1, messages.join('\n'));
  assert.match(messages[0], new RegExp(`^request ${dependent.request_id.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} arrived at [\\d.]+ ms, not at [\\d.]+ ms \\(.+\\)$`));
});

test('SCORE-2/3: a candidate whose cost does not add up from its own figures, or a dearer choice without temperature, is a violation', () => {
  const costsOf = (run: ObservedRun) => checkRun(run).filter((v) => v.invariant === 'placement-cost').map((v) => v.message);
  assert.deepEqual(costsOf(cleanRun()), []);
  const run = cleanRun();
  const placement = run.outcome!.result.requests.flatMap((r) => r.routing_history).find((p) => p.policy === 'kv' && p.candidates.length > 1)!;
  const other = placement.candidates.find((c) => c.worker_id !== placement.worker_id || c.dp_rank !== placement.dp_rank)!;
  other.credit += 1;
  assert.ok(costsOf(run).some((m) => new RegExp(`: worker ${other.worker_id} dp rank ${other.dp_rank}'s credit is [\\d.]+; its own figures give [\\d.]+$`).test(m)), costsOf(run).join('\n'));
  const dearer = cleanRun();
  const chosenPlacement = dearer.outcome!.result.requests.flatMap((r) => r.routing_history).find((p) => p.policy === 'kv' && p.candidates.length > 1)!;
  const loser = chosenPlacement.candidates.find((c) => c.worker_id !== chosenPlacement.worker_id || c.dp_rank !== chosenPlacement.dp_rank)!;
  // The loser's decode blocks and cost drop together: its figures still add up, but it is now the cheaper one.
  const cut = loser.cost + 1;
  loser.decode_blocks -= cut;
  loser.cost -= cut;
  assert.ok(costsOf(dearer).some((m) => /\(cost [\d.-]+\) was chosen over worker \d+ dp rank \d+ \(cost [\d.-]+\) without temperature$/.test(m)), costsOf(dearer).join('\n'));
});

test('a reconciliation disagreement without a documented reason is a violation', () => {
  const run = cleanRun();
  // The report's records are made from the requests when read: the request carries the disagreement.
  run.outcome!.result.requests[0].reconciliation = { predicted_tokens: 8, realised_tokens: 4, agree: false, reason: null };
  assert.deepEqual(brokenInvariants(run), ['reconciliation-reason']);
});

test('a run that threw is a violation; a mirror mismatch is named as such', () => {
  const crashed: ObservedRun = { outcome: null, error: new InvariantError('transfer 0 finished with 2000000 bytes left at 5 ms'), passes: [], pass_count: 0, pass_digest: '0', unkept_pass_violations: [], delivery_violations: [], failures: [], placement_views: [], event_log: '', kv_event_lag_ms: 0, bandwidths: { workers: [], kv_transfer: null }, agentic_trace: null, router: { block_size: 4, overlap_score_credit: 1, host_cache_hit_weight: 1, prefill_load_scale: 1, router_temperature: 0 } };
  assert.deepEqual(brokenInvariants(crashed), ['run-completed']);
  const mirror: ObservedRun = { ...crashed, error: new InvariantError('router mirror of worker 0 dp rank 0 (Device) holds 2 blocks but the engine holds 3 after every event was delivered') };
  assert.deepEqual(brokenInvariants(mirror), ['mirror-matches-engines']);
});

test('a request of a failed play that arrives after the failure and still runs is a violation', () => {
  const run = cleanRun();
  const [first, second] = run.outcome!.result.requests;
  for (const request of [first, second]) (request.identity as { play_id: string | null }).play_id = 'agent@lane0.0';
  run.failures.push({ request_id: first.request_id, play_id: 'agent@lane0.0', time_ns: second.arrival_ns - 1 });
  const violations = checkRun(run);
  assert.deepEqual(violations.map((v) => v.invariant), ['failed-play-stops']);
  assert.match(violations[0].message, new RegExp(`request ${second.request_id} arrived at .* and was finished, after its play failed at`));
  run.failures[0].time_ns = second.arrival_ns; // a request arriving at the very instant of the failure was already sent
  assert.deepEqual(checkRun(run), []);
  run.failures[0].time_ns = second.arrival_ns - 1;
  second.state = 'skipped'; // as it should be, with its reason
  second.skip_reason = 'its play failed';
  assert.deepEqual(checkRun(run).filter((v) => v.invariant === 'failed-play-stops'), []);
});

test('two runs of one seed with different digests or event logs break determinism', () => {
  const first = cleanRun();
  const second = cleanRun();
  assert.deepEqual(determinismViolations(first, second), []);
  second.event_log += second.event_log.split('\n')[0];
  assert.deepEqual(determinismViolations(first, second).map((v) => v.invariant), ['determinism']);
  (second.outcome!.report as { digest: string }).digest = 'sha256:other';
  assert.match(determinismViolations(first, second)[0].message, /gave digests sha256:\w+ and sha256:other/);
});

test('a deferred digest is the digest of the report when read; two runs with pending digests are compared by their reports\' contents, and any difference by their digests', () => {
  const config = parseReplayConfig(readFileSync(EXAMPLE, 'utf8'), EXAMPLE);
  const eager = runReplay(config).report;
  const own = (report: RunReport) => digestOf({ summary: report.summary, per_request: report.per_request });
  const deferred = runReplay(structuredClone(config), { defer_digest: true }).report;
  assert.equal(digestPending(deferred), true);
  assert.equal(deferred.digest, eager.digest);
  assert.equal(digestPending(deferred), false, 'read once, it is kept');
  assert.equal(eager.digest, own(eager));
  assert.equal(digestPending(eager), false);
  // Two runs of a case as runCase makes them: the same contents agree without a digest computed.
  const observed = (step_every_pass: boolean) => runObserved(structuredClone(config), { defer_digest: true, step_every_pass });
  const [first, second] = [observed(false), observed(true)];
  assert.deepEqual(determinismViolations(first, second), []);
  assert.ok(digestPending(first.outcome!.report) && digestPending(second.outcome!.report), 'compared by contents');
  // One number of the summary changed: the digests are computed, and differ.
  second.outcome!.report.summary.virtual_duration_ms += 1;
  const violations = determinismViolations(first, second);
  assert.deepEqual(violations.map((v) => v.invariant), ['determinism']);
  assert.equal(violations[0].message, `two runs with the same seed (the second stepping every pass) gave digests ${eager.digest} and ${own(second.outcome!.report)}`);
  assert.notEqual(eager.digest, own(second.outcome!.report));
  // A report with no canonical form fails as it is built, deferred or not, with the writer's error.
  const result = runReplay(structuredClone(config)).result;
  const unwritable = [new Map()] as unknown as PlayRecord[];
  const failure = (defer: boolean) => {
    try {
      buildReport(result, 16, 0.75, unwritable, 'functional', null, defer);
    } catch (error) {
      return (error as Error).message;
    }
    return 'built';
  };
  assert.match(failure(false), /^\$\.summary\.plays\[0\]: convert Map\/Set to a sorted array first$/);
  assert.equal(failure(true), failure(false));
  // A digest set (or read) before the comparison is compared as it is.
  const [third, fourth] = [observed(false), observed(true)];
  (fourth.outcome!.report as { digest: string }).digest = 'sha256:other';
  assert.match(determinismViolations(third, fourth)[0].message, /gave digests sha256:\w+ and sha256:other/);
});

/** The run as if it had observed `passes`, keeping the first `keep` whole. */
function withPasses(run: ObservedRun, passes: ObservedRun['passes'], keep?: number): ObservedRun {
  const ledger = new PassLedger(keep);
  for (const pass of passes) ledger.observe(pass);
  return { ...run, passes: ledger.kept, pass_count: ledger.count, pass_digest: ledger.digest, unkept_pass_violations: ledger.unkept_violations };
}

test('two runs of one seed that planned different passes break determinism, whichever order they were observed in', () => {
  const first = cleanRun();
  const passes = first.passes;
  assert.ok(passes.length >= 4);
  assert.deepEqual(determinismViolations(first, withPasses(first, [...passes].reverse())), [], 'the same passes in another order');
  const later = passes.map((pass, i) => (i === 2 ? { ...pass, duration_ns: pass.duration_ns + 1 } : pass));
  const whole = determinismViolations(first, withPasses(first, later));
  assert.deepEqual(whole.map((v) => v.invariant), ['determinism']);
  assert.match(whole[0].message, /planned different passes: \d+ and \d+; first difference at pass \d+: .* \/ .*/);
  const fewer = determinismViolations(first, withPasses(first, passes.slice(1)));
  assert.match(fewer[0].message, new RegExp(`planned different passes: ${passes.length} and ${passes.length - 1}`));
  const digestsOnly = determinismViolations(withPasses(first, passes, 2), withPasses(first, later, 2));
  assert.deepEqual(digestsOnly.map((v) => v.invariant), ['determinism'], 'a difference beyond the passes kept whole');
  assert.match(digestsOnly[0].message, new RegExp(`planned different passes: ${passes.length} \\(digest [0-9a-f]{16}\\) and ${passes.length} \\(digest [0-9a-f]{16}\\)`));
});

test('the ledger keeps copies of the passes it keeps: an observer may write one record again for every pass', () => {
  const passes = cleanRun().passes.slice(0, 4);
  assert.equal(passes.length, 4);
  const ledger = new PassLedger(3);
  const record = { ...passes[0] };
  for (const pass of passes) ledger.observe(Object.assign(record, pass));
  assert.deepEqual(ledger.kept, passes.slice(0, 3));
  assert.ok(ledger.kept.every((kept) => kept !== record));
  const fresh = withPasses(cleanRun(), passes, 3);
  assert.equal(ledger.digest, fresh.pass_digest);
  assert.equal(ledger.count, 4);
});

test('the pass digest counts every field of a pass that its text names, and not the G2 use a shared pool changes', () => {
  const [pass] = cleanRun().passes;
  const digestOf = (changed: typeof pass) => withPasses(cleanRun(), [changed]).pass_digest;
  const same = digestOf(pass);
  const shapeChanges = { has_prefill: !pass.shape.has_prefill, prefill_tokens: pass.shape.prefill_tokens + 1, decode_sequences: pass.shape.decode_sequences + 1, context_tokens: pass.shape.context_tokens + 1, decode_context_tokens: pass.shape.decode_context_tokens + 1 };
  const changes = { time_ns: pass.time_ns + 2 ** 32, worker_id: pass.worker_id + 1, dp_rank: pass.dp_rank + 1, running_requests: pass.running_requests + 1, scheduled_tokens: pass.scheduled_tokens + 1, g1_occupied_blocks: pass.g1_occupied_blocks + 1, duration_ns: pass.duration_ns + 1 };
  for (const [field, value] of Object.entries(changes)) assert.notEqual(digestOf({ ...pass, [field]: value }), same, field);
  for (const [field, value] of Object.entries(shapeChanges)) assert.notEqual(digestOf({ ...pass, shape: { ...pass.shape, [field]: value } }), same, `shape.${field}`);
  assert.equal(digestOf({ ...pass, host_used_blocks: (pass.host_used_blocks ?? 0) + 1 }), same, 'host_used_blocks');
});

test('a pass beyond those kept whole is still checked, as it is observed', () => {
  const run = cleanRun();
  const broken = run.passes.map((pass, i) => (i === run.passes.length - 1 ? { ...pass, running_requests: pass.max_num_seqs + 1 } : pass));
  const kept = withPasses(run, broken, 1);
  assert.equal(kept.passes.length, 1);
  assert.equal(kept.pass_count, run.passes.length);
  const violations = checkRun(kept);
  assert.deepEqual(violations.map((v) => v.invariant), ['capacity']);
  assert.match(violations[0].message, /running requests \(max_num_seqs\)/);
});

// ── Each check fires for each of its conditions alone (found by mutation testing the checker) ──

test('a stream the router rejected is an event-stream violation, naming its message', () => {
  const run = cleanRun();
  (run.outcome!.result as { failure: unknown }).failure = { message: 'duplicate Stored of block 7' };
  const violations = checkRun(run);
  assert.deepEqual(violations.map((v) => v.invariant), ['event-stream']);
  assert.equal(violations[0].message, 'the router rejected the stream: duplicate Stored of block 7');
});

test("every step of a request's timeline must follow the one before it, the end of the run included", () => {
  const cases: [string, (request: NonNullable<ObservedRun['outcome']>['result']['requests'][number], end_ns: number) => void, RegExp][] = [
    ['dispatch before arrival', (r) => (r.dispatch_ns = r.arrival_ns - 1), /: dispatch at .* comes before its arrival at /],
    ['last token before the first', (r) => (r.last_token_ns = r.first_token_ns! - 1), /: last token at .* comes before its first token at /],
    ['finish before the last token', (r) => (r.finished_ns = r.last_token_ns! - 1), /: finish at .* comes before its last token at /],
    ['finish after the end of the run', (r, end_ns) => (r.finished_ns = end_ns + 1), /: end of the run at .* comes before its finish at /],
  ];
  for (const [what, breakRequest, message] of cases) {
    const run = cleanRun();
    const request = run.outcome!.result.requests.find((r) => r.output_length > 1)!;
    breakRequest(request, run.outcome!.result.end_ns);
    const violations = checkChanged(run);
    assert.deepEqual(violations.map((v) => v.invariant), ['time-order'], what);
    assert.match(violations[0].message, message, what);
  }
  const run = cleanRun();
  const request = run.outcome!.result.requests.find((r) => r.output_length > 0)!;
  request.first_token_ns = null;
  assert.deepEqual(checkChanged(run).map((v) => v.message), [`request ${request.request_id} finished without a first token time`]);
});

test('reuse from G1 and G2 together beyond the prompt is a violation, though each alone is within it', () => {
  const run = cleanRun();
  const request = run.outcome!.result.requests[0];
  request.g1_reused_tokens = request.input_length;
  request.host_reused_tokens = 1;
  assert.deepEqual(brokenInvariants(run), ['reuse-within-prompt']);
});

test('reuse counted below zero, in G1 or in G2, is a violation even within the prompt', () => {
  for (const field of ['g1_reused_tokens', 'host_reused_tokens'] as const) {
    const run = cleanRun();
    const request = run.outcome!.result.requests[0];
    request[field] = -1;
    assert.deepEqual(brokenInvariants(run), ['reuse-within-prompt'], field);
    // A whole block below zero, the other count a block above: in whole blocks, and zero in all.
    const block = run.outcome!.result.ranks[0].settings.block_size;
    Object.assign(request, { g1_reused_tokens: block, host_reused_tokens: block, [field]: -block });
    assert.deepEqual(brokenInvariants(run), ['reuse-within-prompt'], `${field}, a whole block`);
  }
});

test('a transfer on no rank, of no block, or whose times run backwards is a violation', () => {
  const breaks: [string, (transfer: NonNullable<ObservedRun['outcome']>['result']['transfers'][number]) => void, string, RegExp][] = [
    ['no such rank', (t) => (t.worker_id = 99), 'transfer-bytes', /of worker 99 dp rank 0: no such rank$/],
    ['a dp rank its worker does not have', (t) => (t.dp_rank = 7), 'transfer-bytes', /of worker \d+ dp rank 7: no such rank$/],
    ['no block (in no time, as no bytes take)', (t) => ((t.blocks = 0), (t.bytes = 0), (t.finished_ns = t.started_ns)), 'transfer-bytes', /moved 0 bytes for 0 block\(s\)/],
    ['started before submitted', (t) => (t.started_ns = t.submitted_ns - 1), 'time-order', /submitted .*, started .*, finished /],
    ['finished before started', (t) => (t.finished_ns = t.started_ns - 1), 'time-order', /submitted .*, started .*, finished /],
  ];
  for (const [what, breakTransfer, invariant, message] of breaks) {
    const run = cleanRun();
    breakTransfer(run.outcome!.result.transfers[0]);
    const violations = checkRun(run);
    assert.deepEqual(violations.map((v) => v.invariant), [invariant], what);
    assert.match(violations[0].message, message, what);
  }
});

test('TIME-2: a transfer that took a nanosecond more or less than its bytes over its bandwidth is a violation', () => {
  for (const shift of [1, -1]) {
    const run = cleanRun();
    const transfer = run.outcome!.result.transfers[0];
    transfer.finished_ns! += shift;
    const violations = checkRun(run);
    assert.deepEqual(violations.map((v) => v.invariant), ['transfer-time'], `shifted by ${shift} ns`);
    assert.match(violations[0].message, new RegExp(`^${transfer.direction} transfer ${transfer.transfer_id} of worker \\d+ dp rank 0 \\(\\d+ bytes\\) took .* but its lane's [\\d.]+ GB/s give `));
  }
  const withoutHost = cleanRun();
  withoutHost.bandwidths = { ...withoutHost.bandwidths, workers: withoutHost.bandwidths.workers.map(() => null) };
  assert.match(checkRun(withoutHost)[0].message, /a G2 copy on a worker without host memory$/);
});

test('TIME-2 in a shared pool: a transfer alone in its direction is timed at the slower of its caps; one that overlapped another is not checked', () => {
  const record = (transfer_id: number, worker_id: number, started_ns: number, finished_ns: number, bytes = 2_000_000) => ({ transfer_id, direction: 'h2d' as const, worker_id, dp_rank: 0, bytes, blocks: 2, submitted_ns: started_ns, started_ns, finished_ns, request_id: null });
  const links = { shared: true, d2h_gbps: 32, h2d_gbps: 32, shared_d2h_gbps: 1.0000005, shared_h2d_gbps: 1.0000005 };
  const bandwidths = { workers: [links, links], kv_transfer: null };
  const check = (transfers: ReturnType<typeof record>[]) => {
    const run = cleanRun();
    run.outcome!.result.transfers.splice(0, Infinity, ...transfers);
    run.bandwidths = bandwidths;
    return checkRun(run);
  };
  // 2,000,000 B at 1.0000005 GB/s: 1,999,999.0000005 ns, so 2,000,000 by TIME-2.
  assert.deepEqual(check([record(0, 0, 0, 2_000_000)]), []);
  const early = check([record(0, 0, 0, 1_999_999)]);
  assert.deepEqual(early.map((v) => v.invariant), ['transfer-time']);
  assert.match(early[0].message, /took 1\.999999 ms \(from 0 ms\), but 1\.0000005 GB\/s, alone in the shared pool give 2 ms$/);
  // Two at once share the pool: neither is checked against a solo time.
  assert.deepEqual(check([record(0, 0, 0, 3_999_998), record(1, 1, 0, 3_999_998)]), []);
  // One after the other, each alone again.
  assert.deepEqual(check([record(0, 0, 0, 2_000_000), record(1, 1, 2_000_000, 3_999_999)]).map((v) => v.message.replace(/ \(.*/, '')), ['h2d transfer 1 of worker 1 dp rank 0']);
});

test('a reconciliation disagreement with a reason the docs do not list is a violation', () => {
  const run = cleanRun();
  run.outcome!.result.requests[0].reconciliation = { predicted_tokens: 8, realised_tokens: 4, agree: false, reason: 'cosmic rays' as never };
  const violations = checkChanged(run);
  assert.deepEqual(violations.map((v) => v.invariant), ['reconciliation-reason']);
  assert.match(violations[0].message, /reason "cosmic rays" is not one of lag, /);
  run.outcome!.result.requests[0].reconciliation = { predicted_tokens: 8, realised_tokens: 4, agree: false, reason: 'stale entry' };
  assert.deepEqual(checkChanged(run), [], 'a documented reason');
});

test('a disagreement put down to lag in a run without KV event lag is a violation; with a lag it is not', () => {
  const run = cleanRun();
  run.outcome!.result.requests[0].reconciliation = { predicted_tokens: 8, realised_tokens: 4, agree: false, reason: 'lag' };
  run.kv_event_lag_ms = 0;
  const violations = checkChanged(run);
  assert.deepEqual(violations.map((v) => v.invariant), ['reconciliation-reason']);
  assert.match(violations[0].message, /predicted 8 tokens, realised 4, put down to lag in a run without KV event lag/);
  run.kv_event_lag_ms = 0.25;
  assert.deepEqual(checkChanged(run), []);
});

test("an event log whose G1 or G2 count alone differs from the engine's is a mirror violation, naming both counts", () => {
  for (const tier of ['G1', 'G2'] as const) {
    const run = cleanRun();
    const rank = run.outcome!.result.ranks[0];
    if (tier === 'G1') Object.defineProperty(rank.g1, 'cachedBlocks', { value: rank.g1.cachedBlocks + 1 });
    else Object.defineProperty(rank.host!.pool, 'residentBlocks', { value: rank.host!.pool.residentBlocks + 1 });
    const violations = checkRun(run);
    assert.deepEqual(violations.map((v) => v.invariant), ['mirror-matches-engines'], tier);
    assert.match(violations[0].message, /^worker \d dp rank 0: the event log leaves (\d+) G1 and (\d+) G2 blocks, the engine holds (\d+) and (\d+)$/, tier);
  }
});

test('the earliest failure of a play is the one that stops it; a failure outside any play stops nothing', () => {
  const run = cleanRun();
  const [first, second] = run.outcome!.result.requests;
  for (const request of [first, second]) (request.identity as { play_id: string | null }).play_id = 'agent@lane0.0';
  // The later failure is listed first: the earlier one, before the second request arrived, is what counts.
  run.failures.push({ request_id: first.request_id, play_id: 'agent@lane0.0', time_ns: second.arrival_ns + 5 }, { request_id: first.request_id, play_id: 'agent@lane0.0', time_ns: second.arrival_ns - 1 });
  assert.deepEqual(brokenInvariants(run), ['failed-play-stops']);
  run.failures.reverse(); // the earlier failure listed first: a later one does not replace it
  assert.deepEqual(brokenInvariants(run), ['failed-play-stops']);
  const outside = cleanRun();
  outside.failures.push({ request_id: outside.outcome!.result.requests[0].request_id, play_id: null, time_ns: 0 });
  assert.deepEqual(checkRun(outside), []);
});

test('a linear pass rounded up past the next whole ns, and a table decode pass off its grid point, are violations', () => {
  const linear = (base_ps: bigint, duration_ns: number) => {
    const run = cleanRun();
    run.passes[0].pass_time = { model: 'linear', base_ps, prefill_token_ps: 0n, decode_sequence_ps: 0n, context_token_ps: 0n };
    run.passes[0].duration_ns = duration_ns;
    return checkRun(run).map((v) => v.invariant);
  };
  assert.deepEqual(linear(1_500n, 3), ['pass-time'], '1.5 ns is 2 ns, not 3');
  assert.deepEqual(linear(2_000n, 2), [], 'exactly 2 ns');
  assert.deepEqual(linear(2_000n, 3), ['pass-time'], 'exactly 2 ns is not 3');
  assert.deepEqual(linear(1n, 1), [], 'a sliver of a ns is 1 ns');

  const decode = (decode_context_tokens: number, duration_ns: number, sequences = 2) => {
    const run = cleanRun();
    const pass = run.passes[0];
    pass.scheduled_tokens = sequences;
    pass.shape = { has_prefill: false, prefill_tokens: 0, decode_sequences: sequences, context_tokens: decode_context_tokens, decode_context_tokens };
    pass.pass_time = { model: 'table', prefill_tokens: [8], prefill_ns: [1_000], decode_batch_sizes: [1, 2], decode_context_tokens: [100, 200], decode_ns: [[10, 20], [30, 40]] };
    pass.duration_ns = duration_ns;
    return checkRun(run).map((v) => v.message);
  };
  assert.deepEqual(decode(400, 40), [], 'two sequences at 200 context tokens each: the point (2, 200)');
  const [message] = decode(400, 41);
  assert.match(message, /a decode of 2 sequences at 200 context tokens lasts 41 ns; the table's point is 40 ns$/);
  assert.match(decode(200, 31)[0], /at 100 context tokens lasts 31 ns; the table's point is 30 ns$/);
  assert.deepEqual(decode(300, 99), [], 'between grid points: interpolated, not checked against a point');
  assert.match(decode(100, 11, 1)[0], /a decode of 1 sequences at 100 context tokens lasts 11 ns; the table's point is 10 ns$/, 'the first row and column of the grid');
});

test("a pass's violations say where it ran, capacity before timing, each with its own words; a pass that keeps them all has none", () => {
  const pass = cleanRun().passes[0];
  assert.deepEqual(passViolations(pass), []);
  assert.deepEqual(passViolations({ ...pass, host_used_blocks: 7, host_capacity_blocks: null }), [], 'a count of G2 entries with no pool to hold them is not checked against a capacity');
  pass.running_requests = pass.max_num_seqs + 1;
  pass.g1_occupied_blocks = pass.num_gpu_blocks + 2;
  pass.duration_ns = 0;
  const at = `worker ${pass.worker_id} dp rank ${pass.dp_rank}, pass at ${formatNs(pass.time_ns)}`;
  assert.deepEqual(passViolations(pass), [
    { invariant: 'capacity', message: `${at}: ${pass.running_requests} running requests (max_num_seqs) > ${pass.max_num_seqs}` },
    { invariant: 'capacity', message: `${at}: ${pass.g1_occupied_blocks} G1 blocks taken (num_gpu_blocks) > ${pass.num_gpu_blocks}` },
    { invariant: 'pass-time', message: `${at}: lasts 0 ns, not a whole number of at least 1` },
  ]);
});

test("the summary: each of its counts, told wrong alone, is named by the field it is", () => {
  const fields: [string, (summary: RunSummary) => void][] = [
    ['requests.total', (s) => (s.requests.total += 1)],
    ['requests.finished', (s) => (s.requests.finished += 1)],
    ['requests.failed', (s) => (s.requests.failed += 1)],
    ['requests.skipped', (s) => (s.requests.skipped += 1)],
    ['tokens.input (the prompts sent)', (s) => (s.tokens.input += 1)],
    ['tokens.g1_reused', (s) => (s.tokens.g1_reused += 1)],
    ['tokens.host_reused', (s) => (s.tokens.host_reused += 1)],
    ['prefix_reuse_ratio', (s) => (s.prefix_reuse_ratio += 0.5)],
    ['reconciliation.admissions', (s) => (s.reconciliation.admissions += 1)],
    ['reconciliation.agree', (s) => (s.reconciliation.agree += 1)],
    ['reconciliation.disagree_by_reason', (s) => (s.reconciliation.disagree_by_reason = { ...s.reconciliation.disagree_by_reason, lag: 99 })],
  ];
  for (const [field, tell] of fields) {
    const run = cleanRun();
    tell(run.outcome!.report.summary);
    const messages = checkRun(run).map((v) => `${v.invariant}: ${v.message}`);
    assert.equal(messages.length, 1, `${field}:\n${messages.join('\n')}`);
    assert.ok(messages[0].startsWith(`report-summary: the summary's ${field} is `), messages[0]);
  }
});

/** The run with its report's request records as `change` leaves them (the summary and statistics as they were). */
function withRecords(run: ObservedRun, change: (record: RequestRecord) => void): ObservedRun {
  const report = run.outcome!.report;
  const records = [...report.per_request].map((record) => ({ ...record }));
  records.forEach(change);
  return { ...run, outcome: { ...run.outcome!, report: { ...report, per_request: records } } };
}

test('RPT-2: a request whose ITL is not its TPOT, or whose second token comes before its first, is a violation; at most ten are told', () => {
  const metricsOf = (run: ObservedRun) => checkRun(run).filter((v) => v.invariant === 'request-metrics').map((v) => v.message);
  const clean = cleanRun();
  const target = [...clean.outcome!.report.per_request].find((r) => r.status === 'finished' && r.time_per_output_token_ms !== null)!;
  const apart = metricsOf(withRecords(clean, (r) => { if (r.request_id === target.request_id) r.inter_token_latency_ms = r.time_per_output_token_ms! + 1; }));
  assert.equal(apart.length, 1, apart.join('\n'));
  assert.match(apart[0], new RegExp(`^request ${target.request_id}: ITL [\\d.]+ ms, but TPOT [\\d.]+ ms \\(the last token ends the request: they are one gap\\)$`));
  const backwards = metricsOf(withRecords(cleanRun(), (r) => { if (r.request_id === target.request_id) r.time_to_second_token_ms = -0.001; }));
  assert.equal(backwards.length, 1, backwards.join('\n'));
  assert.match(backwards[0], new RegExp(`^request ${target.request_id}: TTFT [\\d.]+ ms \\+ TTST -0\\.001 ms is not within its E2E`));
  // Every statistic of TTFT and E2E told wrong: fourteen violations, of which the first ten are told.
  const many = cleanRun();
  const metrics = many.outcome!.report.summary.metrics;
  for (const stats of [metrics.time_to_first_token_ms, metrics.request_latency_ms]) for (const field of Object.keys(stats)) (stats as unknown as Record<string, number>)[field] = -1;
  const told = metricsOf(many);
  assert.equal(told.length, 10, told.join('\n'));
  assert.match(told[0], /^the run's time_to_first_token_ms\.count is -1;/);
});

function agenticRun(): ObservedRun {
  const example = path.join(ROOT, 'examples', 'agentic', 'two-lanes-shared.yaml');
  const config = parseReplayConfig(readFileSync(example, 'utf8'), example);
  const traceFile = path.resolve(path.dirname(example), config.workload.agentic!.trace);
  return runObserved(config, { agentic_trace: parseAgenticTrace(readFileSync(traceFile, 'utf8'), traceFile) });
}

test('AGX-1: a request whose predecessor was never completed (or, for a dispatch edge, never dispatched) is named once, with no release time made up', () => {
  const releasesOf = (run: ObservedRun) => checkRun(run).filter((v) => v.invariant === 'play-release').map((v) => v.message);
  const unfinished = agenticRun();
  const plan = unfinished.outcome!.result.requests.find((r) => r.request_id.endsWith('/fb-plan'))!;
  const play = plan.request_id.slice(0, -'/fb-plan'.length);
  plan.finished_ns = null;
  // fb-grep and fb-resume wait on fb-plan's completion.
  assert.deepEqual(releasesOf(unfinished), [`${play}/fb-grep`, `${play}/fb-resume`].map((id) => `request ${id} arrived at ${formatNs(unfinished.outcome!.result.requests.find((r) => r.request_id === id)!.arrival_ns)}, but its predecessor fb-plan was never completed`));
  // The same edge fired on dispatch: fb-grep, which came at fb-plan's completion, was due at its play's start, when fb-plan was dispatched.
  const onDispatch = agenticRun();
  const grep = onDispatch.agentic_trace!.plays.flatMap((p) => p.nodes).find((n) => n.request_id === 'fb-grep')!;
  (grep.dependencies[0] as { trigger: string }).trigger = 'dispatch';
  const messages = releasesOf(onDispatch);
  assert.ok(messages.length > 0 && messages.every((m) => /\/fb-grep arrived at [\d.]+ ms, not at [\d.]+ ms \(its play's start [\d.]+ ms \+ 0 ms\)$/.test(m)), messages.join('\n'));
  onDispatch.outcome!.result.requests.filter((r) => r.request_id.endsWith('/fb-plan')).forEach((r) => (r.dispatch_ns = null));
  const undispatched = releasesOf(onDispatch);
  assert.ok(undispatched.length === messages.length && undispatched.every((m) => /\/fb-grep arrived at [\d.]+ ms, but its predecessor fb-plan was never dispatched$/.test(m)), undispatched.join('\n'));
});

test('AGX-1: at most five release violations are told', () => {
  const run = agenticRun();
  const late = run.outcome!.result.requests.filter((r) => r.state !== 'skipped');
  assert.ok(late.length > 5, `${late.length} requests`);
  for (const request of late) request.arrival_ns += 1;
  assert.equal(checkRun(run).filter((v) => v.invariant === 'play-release').length, 5);
});

test('TIME-2 in a shared pool: only a finished transfer of the same direction, on a shared worker, that moved while it did makes a transfer not alone', () => {
  type Direction = 'h2d' | 'd2h';
  const record = (transfer_id: number, worker_id: number, started_ns: number, finished_ns: number | null, direction: Direction = 'h2d') => ({ transfer_id, direction, worker_id, dp_rank: 0, bytes: 2_000_000, blocks: 2, submitted_ns: started_ns, started_ns, finished_ns, request_id: null });
  const shared = { shared: true, d2h_gbps: 32, h2d_gbps: 32, shared_d2h_gbps: 1, shared_h2d_gbps: 1 };
  const privateLinks = { ...shared, shared: false };
  // Transfer 0 on worker 0 takes a nanosecond too long for a transfer alone (2,000,000 B at 1 GB/s: 2 ms).
  const wrong = record(0, 0, 0, 2_000_001);
  const told = (others: ReturnType<typeof record>[], workers = [shared, shared]) => {
    const run = cleanRun();
    run.outcome!.result.transfers.splice(0, Infinity, wrong, ...others);
    run.bandwidths = { workers, kv_transfer: null };
    return checkRun(run).filter((v) => v.invariant === 'transfer-time' && v.message.startsWith('h2d transfer 0 ')).length;
  };
  assert.equal(told([]), 1, 'alone');
  assert.equal(told([record(1, 1, 0, 3_000_000)]), 0, 'beside another h2d transfer it is not checked');
  assert.equal(told([record(1, 1, 0, 3_000_000, 'd2h')]), 1, 'a d2h transfer shares no bandwidth with it');
  assert.equal(told([record(1, 1, 0, null)]), 1, 'a transfer that never finished moved no bytes beside it');
  assert.equal(told([record(1, 1, 1_000_000, 1_000_000)]), 1, 'nor did one of no time');
  assert.equal(told([record(1, 1, 0, 3_000_000)], [shared, privateLinks]), 1, "a private worker's transfer is on its own lane");
  assert.equal(told([record(1, 1, 2_000_001, 4_000_001)]), 1, 'one starting as it finished');
  assert.equal(told([record(1, 1, 2_000_000, 4_000_000)]), 0, 'one starting a nanosecond before it finished');
});

test("SCORE-2: at the run's first placement no rank has prompts in prefill: neither the request being placed nor those placed after it count", () => {
  const run = cleanRun();
  const placements = run.outcome!.result.requests.flatMap((r) => r.routing_history.map((placement) => ({ request: r, placement })));
  const first = placements.reduce((a, b) => (b.placement.time_ns < a.placement.time_ns ? b : a));
  assert.ok(placements.filter((p) => p.placement.time_ns === first.placement.time_ns).length === 1, 'one placement at the first instant');
  assert.ok(first.placement.candidates.length > 1);
  for (const candidate of first.placement.candidates) candidate.active_prefill_tokens = 1;
  const told = checkRun(run).filter((v) => v.invariant === 'router-load').map((v) => v.message);
  assert.deepEqual(told, first.placement.candidates.map((c) => `placing request ${first.request.request_id} at ${formatNs(first.placement.time_ns)}, the router counted 1 prefill tokens on worker ${c.worker_id} dp rank ${c.dp_rank}, where the requests placed and not yet prefilled have 0`));  // Every count below zero: at most five are told.
  for (const { placement } of placements) for (const candidate of placement.candidates) candidate.active_prefill_tokens = -1;
  assert.ok(placements.flatMap((p) => p.placement.candidates).length > 5);
  assert.equal(checkRun(run).filter((v) => v.invariant === 'router-load').length, 5);
});

test("the loaded config's transfer links are the ones the config declares: one per replica, shared where the pool is, the KV handoff where it has a bandwidth", () => {
  const declared = {
    cluster: {
      workers: [
        { role: 'prefill', replicas: 2, engine: { block_size: 4, num_gpu_blocks: 16, kv_cache_bytes_per_token: 250, timing: { fixed: { prefill_ms: 1, decode_ms: 1 } } }, host_offload: { num_host_blocks: 4, d2h_bandwidth_gbps: 8 } },
        { role: 'decode', replicas: 3, engine: { block_size: 4, num_gpu_blocks: 16, kv_cache_bytes_per_token: 250, timing: { fixed: { prefill_ms: 1, decode_ms: 1 } } }, host_offload: { num_host_blocks: 4, scope: 'cluster_shared', shared_h2d_bandwidth_gbps: 0 } },
      ],
      kv_transfer_bandwidth_gbps: 25,
      kv_transfer_latency_ms: 0.5,
    },
    workload: { requests: [{ id: 'a', arrival_ms: 0, prompt: [{ tokens: 4 }], output_length: 1 }] },
  };
  const yaml = YAML.stringify(declared);
  const loaded = transferBandwidthsOf(parseReplayConfig(yaml, 'declared.yaml'));
  assert.deepEqual(loaded, declaredBandwidths(declared));
  assert.deepEqual(loaded.workers.map((links) => links?.shared), [false, false, true, true, true]);
  assert.deepEqual(loaded.kv_transfer, { gbps: 25, latency_ns: 500_000 });
  delete (declared.cluster as { kv_transfer_bandwidth_gbps?: number }).kv_transfer_bandwidth_gbps;
  delete (declared.cluster as { kv_transfer_latency_ms?: number }).kv_transfer_latency_ms;
  for (const role of declared.cluster.workers) role.role = 'aggregated';
  assert.equal(transferBandwidthsOf(parseReplayConfig(YAML.stringify(declared), 'declared.yaml')).kv_transfer, null);
});
