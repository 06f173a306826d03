// The invariants every replay must keep, checked after a run: every request ended (finished, or
// failed / skipped with a reason); the KV event stream, written as wire lines, passes the strict
// checker and leaves the mirror equal to every rank's G1 and G2; no pass exceeded G1, G2,
// max_num_seqs or the token budget, nor do the events ever show more than G1 or G2 holds; each
// request's timestamps run forward; transfers move whole blocks, each in the time its bandwidth
// gives (TIME-2, where it moved alone); reuse is whole blocks within what ENG-4 allows; every
// reconciliation gives a documented reason (lag only in a run with lag); the router's prefill
// load is bounded by what was placed and not yet prefilled; the summary and the request metrics
// add up the requests' records; a play's requests arrive when AGX-1 says; each placement's costs
// add up and the cheapest wins without temperature; round robin cycles over the candidates in
// order; each placement's recorded overlaps are what the events the router had applied give.
// Pure: an observed run in, a list of violations (with the request, rank or line they concern) out.
import type { ReplayOutcome } from '../replay';
import type { SimRequest } from '../engine/request';
import type { PassTimeModel } from '../engine/passTime';
import type { PassObservation, RankEngine } from '../engine/rank';
import { checkEventLog, type RankSummary } from '../events/checkLog';
import type { KvEvent } from '../events/model';
import { parseWireLog, WireFormatError, type LogLine } from '../events/wire';
import { formatNs, msToNs, type Nanos } from '../time';
import type { Statistics } from '../report/requestMetrics';
import type { AgenticTrace } from '../agentic/trace';
import type { PlayRecord } from '../agentic/driver';
import { transferNs, type TransferRecord } from '../engine/transfers';
import type { ReplayConfig } from '../config/schema';
import type { Placement, RouterSettings } from '../router/router';
import type { BlockHash } from '../hash';
import { canonicalJson } from '../report/canonical';
import type { RequestRecord } from '../report/report';

export const INVARIANTS = [
  'run-completed',
  'request-ended',
  'event-stream',
  'event-delivery',
  'mirror-matches-engines',
  'capacity',
  'reported-capacity',
  'time-order',
  'pass-time',
  'transfer-bytes',
  'handoff-blocks',
  'transfer-time',
  'reuse-within-prompt',
  'reconciliation-reason',
  'router-load',
  'router-view',
  'placement-cost',
  'round-robin',
  'report-summary',
  'request-metrics',
  'play-release',
  'failed-play-stops',
  'determinism',
] as const;
export type InvariantName = (typeof INVARIANTS)[number];

/** What each invariant promises, in the words of the generated scenarios and reports. */
export const INVARIANT_CLAIMS: Record<InvariantName, string> = {
  'run-completed': 'the run completes without an internal error',
  'request-ended': 'every request finishes, fails with a reason or is skipped with a reason',
  'event-stream': 'the KV event stream passes the strict check',
  'event-delivery': 'every KV event batch reaches the router exactly its lag after it was emitted',
  'mirror-matches-engines': "after the last delivery the router's view equals every rank's G1 and G2",
  capacity: 'no rank ever exceeds its G1 blocks, host blocks, running requests or tokens per pass',
  'reported-capacity': "the KV events never show a rank holding more blocks than its G1 or its G2 has, counted from the events alone",
  'time-order': "every request's timestamps run forward",
  'pass-time': 'every pass lasts a whole number of nanoseconds, at least 1, as its timing model gives for its shape',
  'transfer-bytes': 'every transfer moves whole blocks',
  'handoff-blocks': "every KV handoff moves all of its prompt's blocks, the partial last one too",
  'transfer-time': 'every transfer alone on its link takes its bytes over the bandwidth, rounded up to a whole nanosecond',
  'reuse-within-prompt': 'no request reuses more tokens than its prompt',
  // Documented as docs/model.md gives them: `lag` says the router's view differed from what the rank
  // had reported, so a run without lag never gives it.
  'reconciliation-reason': 'every reconciliation disagreement gives a documented reason',
  'router-load': "the router never counts more prefill tokens on a worker than the prompts placed there and not yet prefilled",
  'placement-cost': "every candidate's cost is its load and decode blocks as SCORE-2 adds them from its own figures, and without temperature the cheapest candidate is chosen",
  'router-view': "at every placement, each recorded candidate's GPU and host overlap is what the KV events the router had applied by then give",
  'round-robin': 'with the round-robin policy, the placements cycle over the candidates in (worker, dp rank) order, one each in turn from the first',
  'report-summary': "the report's summary adds up its requests: counts, tokens sent and reused, reuse ratio, reconciliations",
  'request-metrics': "each finished request's metrics fit its token times, and the run's percentiles are the nearest-rank values of its requests'",
  'play-release': 'every request of a play arrives at the later of its authored offset and each dependency it waits for, plus that edge\'s delay',
  'failed-play-stops': 'a failed play sends nothing after its failure',
  determinism: 'the same seed gives the same run twice (digest, KV events and passes), the second time stepping every decode pass',
};

/** SCORE-5's reasons, as docs/model.md lists them. */
export const DOCUMENTED_RECONCILIATION_REASONS: readonly string[] = ['lag', 'last-token rule', 'stale entry', 'queued request', 'host weight'];

export interface Violation {
  invariant: InvariantName;
  message: string;
}

/** One pass as a rank planned it, with the rank's limits. */
export interface PassRecord extends PassObservation {
  worker_id: number;
  dp_rank: number;
  max_num_seqs: number;
  max_num_batched_tokens: number;
  num_gpu_blocks: number;
  /** The G2 pool's capacity; null without G2. */
  host_capacity_blocks: number | null;
  /** The rank's pass-time model. */
  pass_time: PassTimeModel;
}

/** A request that failed, and when the cluster reported it (the instant its play fails, AGX-2). */
export interface FailureRecord {
  request_id: string;
  play_id: string | null;
  time_ns: Nanos;
}

/** A run as the fuzzer saw it: the outcome (null when the run threw), its passes, failures, and the event log. */
export interface ObservedRun {
  outcome: ReplayOutcome | null;
  error: Error | null;
  /** The first passes observed, whole (all of them unless pass_count is larger). */
  passes: PassRecord[];
  /** Every pass observed. */
  pass_count: number;
  /** An order-independent digest of every pass observed (see passKey). */
  pass_digest: string;
  /** The violations of the passes not kept whole, found as each was observed. */
  unkept_pass_violations: Violation[];
  /** KV event batches that reached the router at another time than their emission + the config's lag (LAG-1), found as each was delivered. */
  delivery_violations: Violation[];
  failures: FailureRecord[];
  /** Every KV-aware router placement, in the order made, with what it scored (see PlacementView). */
  placement_views: PlacementView[];
  /** The batches the router received, in the `--events-out` wire form. */
  event_log: string;
  /** The router's KV event lag (LAG-1): with none, no disagreement is the lag's. */
  kv_event_lag_ms: number;
  /** The bandwidths the config gives each transfer (TIME-2), read from the config, not the engine. */
  bandwidths: TransferBandwidths;
  /** The agentic trace the run replayed (AGX-1's release times are checked against it), or null. */
  agentic_trace: AgenticTrace | null;
  /** The router's weights and block size from the config (SCORE-2's costs are recomputed with them). */
  router: RouterWeights;
}

/** A placement as the router made it: the prompt blocks it scored (their hashes) and how many KV events the router had applied then. */
export interface PlacementView {
  placement: Placement;
  applied_events: number;
  block_hashes: BlockHash[];
}

/** The router's settings a placement's costs depend on. */
export type RouterWeights = Omit<RouterSettings, 'policy' | 'kept_scores'>;

/** The router's weights of a config. */
export function routerWeightsOf(config: ReplayConfig): RouterWeights {
  const router = config.router;
  return {
    block_size: config.cluster.workers[0].engine.block_size,
    overlap_score_credit: router.overlap_score_credit,
    host_cache_hit_weight: router.host_cache_hit_weight,
    prefill_load_scale: router.prefill_load_scale,
    router_temperature: router.router_temperature,
  };
}

/**
 * The defaults the spec gives settings a config may leave out, as semantics.md states them: the
 * fuzzer's checks read a generated config's own settings and, where it left one out, these
 * (declaredRouterWeights, declaredBandwidths), so a loader that filled in another default fails them.
 */
export const SPEC_DEFAULTS = {
  /** SCORE-2. */
  router: { overlap_score_credit: 1, host_cache_hit_weight: 0.75, prefill_load_scale: 1, router_temperature: 0 },
  /** LAG-1. */
  kv_event_lag_ms: 0,
  /** G2-1: per rank, and the shared pool's caps. */
  host_offload: { scope: 'dp_rank_local', d2h_bandwidth_gbps: 32, h2d_bandwidth_gbps: 32, shared_d2h_bandwidth_gbps: 80, shared_h2d_bandwidth_gbps: 80 },
  /** TOPO-1: a role's workers. */
  replicas: 1,
  /** PD-1's fixed latency. */
  kv_transfer_latency_ms: 0,
} as const;

/** A setting of a config as written (a plain object read from YAML), or the spec's default when it is left out. */
function setting<T>(section: unknown, key: string, fallback: T): T {
  const value = typeof section === 'object' && section !== null ? (section as Record<string, unknown>)[key] : undefined;
  return value === undefined ? fallback : (value as T);
}

/** The router's weights a config declares, with the spec's defaults for those it leaves out (see SPEC_DEFAULTS). */
export function declaredRouterWeights(config: Record<string, unknown>, block_size: number): RouterWeights {
  const router = config.router;
  const defaults = SPEC_DEFAULTS.router;
  return {
    block_size,
    overlap_score_credit: setting(router, 'overlap_score_credit', defaults.overlap_score_credit),
    host_cache_hit_weight: setting(router, 'host_cache_hit_weight', defaults.host_cache_hit_weight),
    prefill_load_scale: setting(router, 'prefill_load_scale', defaults.prefill_load_scale),
    router_temperature: setting(router, 'router_temperature', defaults.router_temperature),
  };
}

/** The KV event lag a config declares (LAG-1's default when left out). */
export function declaredLagMs(config: Record<string, unknown>): number {
  return setting(config.router, 'kv_event_lag_ms', SPEC_DEFAULTS.kv_event_lag_ms);
}

/** The transfer links a config declares, with the spec's defaults for those it leaves out; numbered as transferBandwidthsOf numbers them. */
export function declaredBandwidths(config: Record<string, unknown>): TransferBandwidths {
  const workers: (HostLinks | null)[] = [];
  const cluster = config.cluster as Record<string, unknown>;
  const defaults = SPEC_DEFAULTS.host_offload;
  for (const role of cluster.workers as Record<string, unknown>[]) {
    const offload = role.host_offload;
    const links: HostLinks | null =
      offload === undefined
        ? null
        : {
            shared: setting<string>(offload, 'scope', defaults.scope) === 'cluster_shared',
            d2h_gbps: setting(offload, 'd2h_bandwidth_gbps', defaults.d2h_bandwidth_gbps),
            h2d_gbps: setting(offload, 'h2d_bandwidth_gbps', defaults.h2d_bandwidth_gbps),
            shared_d2h_gbps: setting(offload, 'shared_d2h_bandwidth_gbps', defaults.shared_d2h_bandwidth_gbps),
            shared_h2d_gbps: setting(offload, 'shared_h2d_bandwidth_gbps', defaults.shared_h2d_bandwidth_gbps),
          };
    for (let replica = 0; replica < setting(role, 'replicas', SPEC_DEFAULTS.replicas); replica++) workers.push(links);
  }
  const gbps = setting<number | undefined>(cluster, 'kv_transfer_bandwidth_gbps', undefined);
  return { workers, kv_transfer: gbps === undefined ? null : { gbps, latency_ns: msToNs(setting(cluster, 'kv_transfer_latency_ms', SPEC_DEFAULTS.kv_transfer_latency_ms)) } };
}

/** A worker role's G2 links (GB/s; 0 is unlimited). */
export interface HostLinks {
  shared: boolean;
  d2h_gbps: number;
  h2d_gbps: number;
  shared_d2h_gbps: number;
  shared_h2d_gbps: number;
}

/** The links of a run, as its config gives them: by worker id (null: no G2), and the KV handoff's. */
export interface TransferBandwidths {
  workers: (HostLinks | null)[];
  kv_transfer: { gbps: number; latency_ns: Nanos } | null;
}

/** The transfer links of a config, worker ids numbered as the cluster numbers them (roles in order, then replicas). */
export function transferBandwidthsOf(config: ReplayConfig): TransferBandwidths {
  const workers: (HostLinks | null)[] = [];
  for (const role of config.cluster.workers) {
    const offload = role.host_offload;
    const links: HostLinks | null =
      offload === undefined
        ? null
        : {
            shared: offload.scope === 'cluster_shared',
            d2h_gbps: offload.d2h_bandwidth_gbps,
            h2d_gbps: offload.h2d_bandwidth_gbps,
            shared_d2h_gbps: offload.shared_d2h_bandwidth_gbps,
            shared_h2d_gbps: offload.shared_h2d_bandwidth_gbps,
          };
    for (let replica = 0; replica < role.replicas; replica++) workers.push(links);
  }
  const gbps = config.cluster.kv_transfer_bandwidth_gbps;
  return { workers, kv_transfer: gbps === undefined ? null : { gbps, latency_ns: msToNs(config.cluster.kv_transfer_latency_ms) } };
}

/** Every violation of one observed run (determinism needs two runs: see runCase). */
export function checkRun(run: ObservedRun): Violation[] {
  const violations: Violation[] = [];
  if (run.error !== null) {
    const mirror = /^router mirror of worker/.test(run.error.message);
    violations.push({
      invariant: mirror ? 'mirror-matches-engines' : 'run-completed',
      message: mirror ? run.error.message : `the run stopped with ${run.error.constructor.name}: ${run.error.message}`,
    });
  }
  for (const pass of run.passes) violations.push(...passViolations(pass));
  violations.push(...run.unkept_pass_violations, ...run.delivery_violations);
  const outcome = run.outcome;
  if (outcome === null) return violations;
  const requests = outcome.result.requests;
  const end_ns = outcome.result.end_ns;
  for (const request of requests) {
    violations.push(...endViolations(request, outcome.result.ranks), ...timeViolations(request, end_ns), ...reuseViolations(request, outcome.result.ranks[0]?.settings.block_size ?? 1));
  }
  violations.push(...transferViolations(outcome), ...transferTimeViolations(outcome.result.transfers, run.bandwidths));
  // The report's records, made once for the checks that read them (each read of per_request makes them anew).
  const records = [...outcome.report.per_request];
  violations.push(...reconciliationViolations(records, run.kv_event_lag_ms), ...routerLoadViolations(requests), ...placementCostViolations(requests, run.router), ...roundRobinViolations(requests, outcome.result.ranks), ...summaryViolations(outcome, records), ...metricViolations(outcome, records));
  violations.push(...failedPlayViolations(requests, run.failures), ...playReleaseViolations(requests, outcome.plays, run.agentic_trace));
  if (outcome.result.failure !== null) violations.push({ invariant: 'event-stream', message: `the router rejected the stream: ${outcome.result.failure.message}` });
  // One parse of the written log for both of its checks (each only reads the lines).
  const log = parsedEventLog(run.event_log);
  violations.push(...eventLogViolations(log, outcome.result.ranks), ...routerViewViolations(run.placement_views, log));
  return violations;
}

// ── Every request ended ─────────────────────────────────────────────────────────────────────

/** The reason a failed or skipped request carries. */
export function reasonOf(request: SimRequest): string | null {
  return request.state === 'skipped' ? request.skip_reason : request.failure_reason;
}

function endViolations(request: SimRequest, ranks: readonly RankEngine[]): Violation[] {
  const id = request.request_id;
  switch (request.state) {
    case 'finished':
      if (request.output_tokens !== request.output_length) {
        return [{ invariant: 'request-ended', message: `request ${id} finished with ${request.output_tokens} of its ${request.output_length} output tokens` }];
      }
      return [];
    case 'failed':
    case 'skipped':
      if (!reasonOf(request)) return [{ invariant: 'request-ended', message: `request ${id} was ${request.state} without a reason` }];
      return [];
    default:
      return [{ invariant: 'request-ended', message: `request ${id} never ended: ${whereItWaits(request, ranks)}` }];
  }
}

function whereItWaits(request: SimRequest, ranks: readonly RankEngine[]): string {
  const rank = request.rank_index >= 0 ? ranks[request.rank_index] : undefined;
  const where = request.stage === 'decode' && request.decode_worker_id !== null
    ? `on decode worker ${request.decode_worker_id} dp rank ${request.decode_dp_rank}`
    : rank ? `on worker ${rank.rank.worker_id} dp rank ${rank.rank.dp_rank}` : 'before reaching any rank';
  const attempt = request.admission_history.at(-1);
  const since = request.stage === 'decode' ? (request.admission_history.filter((a) => a.worker_id === request.decode_worker_id).at(0)?.time_ns ?? request.dispatch_ns ?? request.arrival_ns) : attempt ? attempt.time_ns : (request.dispatch_ns ?? request.arrival_ns);
  const last = attempt ? `; last admission attempt on worker ${attempt.worker_id} dp rank ${attempt.dp_rank} at ${formatNs(attempt.time_ns)}: ${attempt.outcome}${attempt.reason ? ` (${attempt.reason})` : ''}` : '';
  return `${request.state} ${where} since ${formatNs(since)} (arrived ${formatNs(request.arrival_ns)}, ${request.output_tokens}/${request.output_length} output tokens${last})`;
}

// ── Time runs forward ───────────────────────────────────────────────────────────────────────

function timeViolations(request: SimRequest, end_ns: Nanos): Violation[] {
  const steps: [string, Nanos | null][] = [
    ['arrival', request.arrival_ns],
    ['dispatch', request.dispatch_ns],
    ['first admission', request.first_admission_ns],
    ['first token', request.first_token_ns],
    ['last token', request.last_token_ns],
    ['finish', request.finished_ns],
    ['end of the run', end_ns],
  ];
  const violations: Violation[] = [];
  let previous: [string, Nanos] | null = null;
  for (const [name, time] of steps) {
    if (time === null) continue;
    if (previous !== null && time < previous[1]) {
      violations.push({ invariant: 'time-order', message: `request ${request.request_id}: ${name} at ${formatNs(time)} comes before its ${previous[0]} at ${formatNs(previous[1])}` });
    }
    previous = [name, time];
  }
  if (request.state === 'finished') {
    const missing = (['dispatch_ns', 'first_admission_ns', 'finished_ns'] as const).filter((field) => request[field] === null);
    if (request.output_length > 0 && request.first_token_ns === null) missing.push('first_token_ns' as never);
    for (const field of missing) violations.push({ invariant: 'time-order', message: `request ${request.request_id} finished without a ${field.replace(/_ns$/, '').replace(/_/g, ' ')} time` });
  }
  return violations;
}

// ── Reuse ───────────────────────────────────────────────────────────────────────────────────

/**
 * Reuse is whole blocks of the prompt, within what ENG-4 allows: with output to produce, the last
 * prompt token is always computed again, so at most floor((input − 1) / block) blocks; a
 * prefill-only request may reuse every complete block. (All roles share one block size.)
 */
function reuseViolations(request: SimRequest, block_size: number): Violation[] {
  const reused = request.g1_reused_tokens + request.host_reused_tokens;
  const reusable_tokens = Math.floor((request.output_length > 0 ? request.input_length - 1 : request.input_length) / block_size) * block_size;
  const whole = request.g1_reused_tokens % block_size === 0 && request.host_reused_tokens % block_size === 0;
  if (reused <= reusable_tokens && whole && request.g1_reused_tokens >= 0 && request.host_reused_tokens >= 0) return [];
  return [
    {
      invariant: 'reuse-within-prompt',
      message:
        `request ${request.request_id} reused ${reused} tokens (G1 ${request.g1_reused_tokens}, G2 ${request.host_reused_tokens}) of a ${request.input_length}-token prompt` +
        ` with ${request.output_length} output token(s): at most ${reusable_tokens} may be reused (ENG-4), in whole blocks of ${block_size}`,
    },
  ];
}

// ── Transfers ───────────────────────────────────────────────────────────────────────────────

function transferViolations(outcome: ReplayOutcome): Violation[] {
  const violations: Violation[] = [];
  const ranks = outcome.result.ranks;
  const requestsById = new Map(outcome.result.requests.map((request) => [request.request_id, request]));
  for (const transfer of outcome.result.transfers) {
    const what = `${transfer.direction} transfer ${transfer.transfer_id} of worker ${transfer.worker_id} dp rank ${transfer.dp_rank}`;
    const rank = ranks.find((r) => r.rank.worker_id === transfer.worker_id && r.rank.dp_rank === transfer.dp_rank);
    if (!rank) {
      violations.push({ invariant: 'transfer-bytes', message: `${what}: no such rank` });
      continue;
    }
    if (transfer.blocks <= 0 || transfer.bytes !== transfer.blocks * rank.block_bytes) {
      violations.push({ invariant: 'transfer-bytes', message: `${what} moved ${transfer.bytes} bytes for ${transfer.blocks} block(s) of ${rank.block_bytes} bytes` });
    }
    if (transfer.direction === 'p2d') violations.push(...handoffBlockViolations(transfer, what, rank.settings.block_size, requestsById.get(transfer.request_id ?? '')));
    if (transfer.finished_ns === null) {
      violations.push({ invariant: 'run-completed', message: `${what} (submitted at ${formatNs(transfer.submitted_ns)}) never finished` });
    } else if (transfer.started_ns < transfer.submitted_ns || transfer.finished_ns < transfer.started_ns) {
      violations.push({
        invariant: 'time-order',
        message: `${what}: submitted ${formatNs(transfer.submitted_ns)}, started ${formatNs(transfer.started_ns)}, finished ${formatNs(transfer.finished_ns)}`,
      });
    }
  }
  return violations;
}

/** PD-1: a prefill worker hands its decode worker the KV of the whole prompt, ceil(input / block) blocks. */
function handoffBlockViolations(transfer: TransferRecord, what: string, block_size: number, request: SimRequest | undefined): Violation[] {
  if (request === undefined) return [{ invariant: 'handoff-blocks', message: `${what} names request ${JSON.stringify(transfer.request_id)}, which the run does not have` }];
  const prompt_blocks = Math.ceil(request.input_length / block_size);
  if (transfer.blocks === prompt_blocks) return [];
  return [{ invariant: 'handoff-blocks', message: `${what} moved ${transfer.blocks} block(s) of request ${request.request_id}'s ${request.input_length}-token prompt, which fills ${prompt_blocks} of ${block_size} tokens` }];
}

/** The slower of two links, 0 being unlimited (so 0 only when both are). */
function slowerLink(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return Math.min(a, b);
}

/**
 * TIME-2: B bytes at R GB/s take B / R ns, rounded up. A private lane's transfer moves at its
 * lane's bandwidth from its start (G2-8); a KV handoff takes its latency and then its bytes at the
 * handoff bandwidth (PD-1); a shared pool's transfer that moved alone in its direction, all its
 * time, moves at the slower of its rank's cap and the pool's (G2-9). Shared transfers that
 * overlapped others are not checked here: their shares are re-divided as the others come and go.
 */
function transferTimeViolations(transfers: readonly TransferRecord[], bandwidths: TransferBandwidths): Violation[] {
  const violations: Violation[] = [];
  const sharedMoving = (direction: string) => transfers.filter((t) => t.direction === direction && t.finished_ns !== null && t.finished_ns > t.started_ns && bandwidths.workers[t.worker_id]?.shared === true);
  const moving = { d2h: sharedMoving('d2h'), h2d: sharedMoving('h2d') };
  for (const transfer of transfers) {
    // Never finished, or its times out of order: the run-completed and time-order checks say so.
    if (transfer.finished_ns === null || transfer.started_ns < transfer.submitted_ns || transfer.finished_ns < transfer.started_ns) continue;
    const what = `${transfer.direction} transfer ${transfer.transfer_id} of worker ${transfer.worker_id} dp rank ${transfer.dp_rank} (${transfer.bytes} bytes)`;
    const took = transfer.finished_ns - transfer.started_ns;
    let expected: Nanos | null = null;
    let over = '';
    if (transfer.direction === 'p2d') {
      const handoff = bandwidths.kv_transfer;
      if (handoff === null) {
        violations.push({ invariant: 'transfer-time', message: `${what}: a KV handoff in a cluster without kv_transfer_bandwidth_gbps` });
        continue;
      }
      expected = handoff.latency_ns + transferNs(transfer.bytes, handoff.gbps);
      over = `${formatNs(handoff.latency_ns)} of latency and ${handoff.gbps} GB/s`;
    } else {
      const links = bandwidths.workers[transfer.worker_id];
      // A worker the config does not have is the transfer-bytes check's "no such rank".
      if (links === undefined) continue;
      if (links === null) {
        violations.push({ invariant: 'transfer-time', message: `${what}: a G2 copy on a worker without host memory` });
        continue;
      }
      const lane = transfer.direction === 'd2h' ? links.d2h_gbps : links.h2d_gbps;
      if (!links.shared) {
        expected = transferNs(transfer.bytes, lane);
        over = `its lane's ${lane} GB/s`;
      } else {
        const finished = transfer.finished_ns;
        const alone = moving[transfer.direction].every((other) => other === transfer || other.started_ns >= finished || other.finished_ns! <= transfer.started_ns);
        if (alone) {
          const gbps = slowerLink(lane, transfer.direction === 'd2h' ? links.shared_d2h_gbps : links.shared_h2d_gbps);
          expected = transferNs(transfer.bytes, gbps);
          over = `${gbps === 0 ? 'unlimited' : `${gbps} GB/s`}, alone in the shared pool`;
        }
      }
    }
    if (expected !== null && took !== expected) {
      violations.push({ invariant: 'transfer-time', message: `${what} took ${formatNs(took)} (from ${formatNs(transfer.started_ns)}), but ${over} give ${formatNs(expected)}` });
    }
  }
  return violations;
}

// ── Reconciliation ──────────────────────────────────────────────────────────────────────────

function reconciliationViolations(records: readonly RequestRecord[], kv_event_lag_ms: number): Violation[] {
  const violations: Violation[] = [];
  for (const record of records) {
    const reconciliation = record.reconciliation;
    if (reconciliation === null || reconciliation.agree) continue;
    const what = `request ${record.request_id}: predicted ${reconciliation.predicted_tokens} tokens, realised ${reconciliation.realised_tokens}`;
    if (reconciliation.reason === null || !DOCUMENTED_RECONCILIATION_REASONS.includes(reconciliation.reason)) {
      violations.push({
        invariant: 'reconciliation-reason',
        message: `${what}, reason ${JSON.stringify(reconciliation.reason)} is not one of ${DOCUMENTED_RECONCILIATION_REASONS.join(', ')}`,
      });
    } else if (reconciliation.reason === 'lag' && kv_event_lag_ms === 0) {
      violations.push({ invariant: 'reconciliation-reason', message: `${what}, put down to lag in a run without KV event lag (LAG-2: the router sees each event as it is emitted)` });
    }
  }
  return violations;
}

// ── The report's summary ────────────────────────────────────────────────────────────────────

/**
 * The summary's figures recomputed from the report's own per-request records: request counts by
 * status; input tokens of the requests that were sent (a skipped request's prompt never reached a
 * worker); G1 and G2 reuse; the reuse ratio over the input sent; reconciliations and their reasons.
 */
function summaryViolations(outcome: ReplayOutcome, records: readonly RequestRecord[]): Violation[] {
  const summary = outcome.report.summary;
  const sum = (pick: (r: (typeof records)[number]) => number) => records.reduce((total, r) => total + pick(r), 0);
  const byStatus = (status: string) => records.filter((r) => r.status === status).length;
  const input = sum((r) => (r.status === 'skipped' ? 0 : r.input_length));
  const g1 = sum((r) => r.g1_reused_tokens);
  const host = sum((r) => r.host_reused_tokens);
  const reconciled = records.map((r) => r.reconciliation).filter((r) => r !== null);
  const reasons: Record<string, number> = {};
  for (const r of reconciled) if (!r.agree) reasons[r.reason ?? 'unexplained'] = (reasons[r.reason ?? 'unexplained'] ?? 0) + 1;
  const expected: [string, unknown, unknown][] = [
    ['requests.total', summary.requests.total, records.length],
    ['requests.finished', summary.requests.finished, byStatus('finished')],
    ['requests.failed', summary.requests.failed, byStatus('failed')],
    ['requests.skipped', summary.requests.skipped, byStatus('skipped')],
    ['tokens.input (the prompts sent)', summary.tokens.input, input],
    ['tokens.g1_reused', summary.tokens.g1_reused, g1],
    ['tokens.host_reused', summary.tokens.host_reused, host],
    ['prefix_reuse_ratio', summary.prefix_reuse_ratio, input === 0 ? 0 : (g1 + host) / input],
    ['reconciliation.admissions', summary.reconciliation.admissions, reconciled.length],
    ['reconciliation.agree', summary.reconciliation.agree, reconciled.filter((r) => r.agree).length],
    ['reconciliation.disagree_by_reason', canonicalJson(summary.reconciliation.disagree_by_reason), canonicalJson(reasons)],
  ];
  return expected
    .filter(([, actual, recomputed]) => actual !== recomputed)
    .map(([field, actual, recomputed]) => ({ invariant: 'report-summary' as const, message: `the summary's ${field} is ${actual}; its ${records.length} request records give ${recomputed}` }));
}

// ── Request metrics (RPT-2) ─────────────────────────────────────────────────────────────────

/** The nearest-rank percentile (1-based rank ceil(p/100 × n)) of sorted values. */
function nearestRankOf(sorted: readonly number[], p: number): number {
  return sorted[Math.min(Math.max(1, Math.ceil((p / 100) * sorted.length)), sorted.length) - 1];
}

/**
 * Per finished request: the second token comes after the first and no later than the last (TTFT +
 * TTST within E2E), and its ITL (the mean gap between its tokens) equals its TPOT, as the last token
 * ends a request in kvqual. Over the run: TTFT's and E2E's statistics are the nearest-rank values
 * of the finished requests' own, recomputed here from the records.
 */
function metricViolations(outcome: ReplayOutcome, records: readonly RequestRecord[]): Violation[] {
  const violations: Violation[] = [];
  const finished = records.filter((r) => r.status === 'finished');
  for (const r of finished) {
    const what = `request ${r.request_id}`;
    if (r.ttft_ms !== null && r.time_to_second_token_ms !== null && r.e2e_ms !== null && (r.time_to_second_token_ms < 0 || r.ttft_ms + r.time_to_second_token_ms > r.e2e_ms + 1e-9)) {
      violations.push({ invariant: 'request-metrics', message: `${what}: TTFT ${r.ttft_ms} ms + TTST ${r.time_to_second_token_ms} ms is not within its E2E of ${r.e2e_ms} ms` });
    }
    if (r.inter_token_latency_ms !== r.time_per_output_token_ms) {
      violations.push({ invariant: 'request-metrics', message: `${what}: ITL ${r.inter_token_latency_ms} ms, but TPOT ${r.time_per_output_token_ms} ms (the last token ends the request: they are one gap)` });
    }
  }
  const metrics = outcome.report.summary.metrics;
  const checks: [string, (r: (typeof finished)[number]) => number | null, Statistics][] = [
    ['time_to_first_token_ms', (r) => r.ttft_ms, metrics.time_to_first_token_ms],
    ['request_latency_ms', (r) => r.e2e_ms, metrics.request_latency_ms],
  ];
  for (const [name, pick, stats] of checks) {
    const values = finished.map(pick).filter((v): v is number => v !== null).sort((a, b) => a - b);
    const expected = values.length === 0 ? { count: 0, min: null, p50: null, p90: null, p95: null, p99: null, max: null } : { count: values.length, min: values[0], p50: nearestRankOf(values, 50), p90: nearestRankOf(values, 90), p95: nearestRankOf(values, 95), p99: nearestRankOf(values, 99), max: values[values.length - 1] };
    for (const [field, value] of Object.entries(expected)) {
      const actual = stats[field as keyof Statistics];
      if (actual !== value) violations.push({ invariant: 'request-metrics', message: `the run's ${name}.${field} is ${actual}; the nearest-rank value of its ${values.length} finished requests' is ${value}` });
    }
  }
  return violations.slice(0, 10);
}

// ── Placement costs (SCORE-2, SCORE-3) ──────────────────────────────────────────────────────

/** Equal up to floating-point dust (the router adds the same terms; a real difference is far larger). */
function sameCost(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Each KV-aware placement's candidates, recomputed from their own recorded figures and the config's
 * weights: credit = overlap credit × GPU blocks + host weight × host blocks; prefill blocks = (active
 * prefill tokens + the prompt) ÷ block size; load = prefill scale × max(prefill blocks − credit, 0);
 * cost = load + decode blocks. Without temperature the chosen candidate costs no more than any other.
 */
function placementCostViolations(requests: readonly SimRequest[], weights: RouterWeights): Violation[] {
  const violations: Violation[] = [];
  for (const request of requests) {
    for (const placement of request.routing_history) {
      if (placement.policy !== 'kv') continue;
      const where = `placing request ${request.request_id} at ${formatNs(placement.time_ns)}`;
      for (const c of placement.candidates) {
        const credit = weights.overlap_score_credit * c.device_blocks + weights.host_cache_hit_weight * c.host_blocks;
        const prefill_blocks = (c.active_prefill_tokens + request.input_length) / weights.block_size;
        const load = weights.prefill_load_scale * Math.max(prefill_blocks - credit, 0);
        const figures: [string, number, number][] = [['credit', c.credit, credit], ['prefill blocks', c.prefill_blocks, prefill_blocks], ['load', c.load, load], ['cost', c.cost, load + c.decode_blocks]];
        for (const [name, recorded, recomputed] of figures) {
          if (!sameCost(recorded, recomputed)) violations.push({ invariant: 'placement-cost', message: `${where}: worker ${c.worker_id} dp rank ${c.dp_rank}'s ${name} is ${recorded}; its own figures give ${recomputed}` });
        }
      }
      const chosen = placement.candidates.find((c) => c.worker_id === placement.worker_id && c.dp_rank === placement.dp_rank);
      const cheaper = chosen === undefined ? undefined : placement.candidates.find((c) => c.cost < chosen.cost && !sameCost(c.cost, chosen.cost));
      if (weights.router_temperature === 0 && chosen !== undefined && cheaper !== undefined) {
        violations.push({ invariant: 'placement-cost', message: `${where}: worker ${chosen.worker_id} dp rank ${chosen.dp_rank} (cost ${chosen.cost}) was chosen over worker ${cheaper.worker_id} dp rank ${cheaper.dp_rank} (cost ${cheaper.cost}) without temperature` });
      }
      if (violations.length >= 5) return violations;
    }
  }
  return violations;
}

// ── The router's view (MIR-1, SCORE-1) ──────────────────────────────────────────────────────

/** One rank's residency, per tier, as an independent reading of the events builds it. */
interface ViewedRank {
  Device: Set<BlockHash>;
  HostPinned: Set<BlockHash>;
}

/**
 * SCORE-1 from the events alone: the wire log's events, applied in order to plain sets of hashes per
 * rank and tier up to the count the router had applied at each placement, give each recorded
 * candidate's overlap: GPU blocks = the prompt's leading blocks in the rank's Device set; host
 * blocks = the blocks right after those in its HostPinned set, consecutive. A log that does not
 * parse is the event-stream check's.
 */
function routerViewViolations(views: readonly PlacementView[], log: ParsedEventLog): Violation[] {
  if (views.length === 0 || log instanceof WireFormatError) return [];
  const events = log.flatMap((line) => line.batch.events);
  const ranks = new Map<string, ViewedRank>();
  const rankOf = (worker_id: number, dp_rank: number): ViewedRank => {
    const key = `${worker_id}/${dp_rank}`;
    let rank = ranks.get(key);
    if (rank === undefined) ranks.set(key, (rank = { Device: new Set(), HostPinned: new Set() }));
    return rank;
  };
  const violations: Violation[] = [];
  let applied = 0;
  for (const view of [...views].sort((a, b) => a.applied_events - b.applied_events)) {
    for (; applied < view.applied_events && applied < events.length; applied++) applyToView(rankOf, events[applied]);
    const { placement, block_hashes } = view;
    for (const candidate of placement.candidates) {
      const rank = rankOf(candidate.worker_id, candidate.dp_rank);
      let device = 0;
      while (device < block_hashes.length && rank.Device.has(block_hashes[device])) device++;
      let host = 0;
      while (device + host < block_hashes.length && rank.HostPinned.has(block_hashes[device + host])) host++;
      if (candidate.device_blocks === device && candidate.host_blocks === host) continue;
      violations.push({
        invariant: 'router-view',
        message:
          `placing request ${placement.request_id} at ${formatNs(placement.time_ns)} after ${view.applied_events} KV event(s): worker ${candidate.worker_id} dp rank ${candidate.dp_rank} ` +
          `was credited ${candidate.device_blocks} GPU and ${candidate.host_blocks} host block(s); those events give ${device} and ${host}`,
      });
      if (violations.length >= 5) return violations;
    }
  }
  return violations;
}

function applyToView(rankOf: (worker_id: number, dp_rank: number) => ViewedRank, event: KvEvent): void {
  const rank = rankOf(event.worker_id, event.dp_rank);
  const data = event.data;
  if (data.type === 'Stored') for (const block of data.blocks) rank[event.tier].add(block.block_hash);
  else if (data.type === 'Removed') for (const hash of data.block_hashes) rank[event.tier].delete(hash);
  else {
    rank.Device.clear();
    rank.HostPinned.clear();
  }
}

// ── Round robin (SCORE-6) ───────────────────────────────────────────────────────────────────

/**
 * SCORE-6: the round-robin policy gives the k-th placement (counting from 0) to candidate k mod n of
 * the n ranks it routes to (aggregated and prefill workers' ranks) in (worker, dp rank) order,
 * whatever the caches hold. Placements of one instant may have been made in any order among
 * themselves, so the counts are compared after each instant: after k placements, the first k mod n
 * candidates have one more than the others. (A placement record keeps the chosen candidate's score
 * and the runner-up's only, so the candidates are the run's ranks.)
 */
function roundRobinViolations(requests: readonly SimRequest[], ranks: readonly RankEngine[]): Violation[] {
  const placements: { time_ns: Nanos; rank: string }[] = [];
  for (const request of requests) {
    for (const placement of request.routing_history) {
      if (placement.policy === 'round_robin') placements.push({ time_ns: placement.time_ns, rank: `worker ${placement.worker_id} dp rank ${placement.dp_rank}` });
    }
  }
  if (placements.length === 0) return [];
  const candidates = ranks
    .filter((rank) => rank.role !== 'decode')
    .map((rank) => rank.rank)
    .sort((a, b) => a.worker_id - b.worker_id || a.dp_rank - b.dp_rank)
    .map((rank) => `worker ${rank.worker_id} dp rank ${rank.dp_rank}`);
  placements.sort((a, b) => a.time_ns - b.time_ns);
  const counts = new Map<string, number>(candidates.map((rank) => [rank, 0]));
  const n = candidates.length;
  for (let k = 0; k < placements.length; ) {
    const at = placements[k].time_ns;
    for (; k < placements.length && placements[k].time_ns === at; k++) {
      const rank = placements[k].rank;
      if (!counts.has(rank)) return [{ invariant: 'round-robin', message: `a placement at ${formatNs(at)} went to ${rank}, which no routed role has` }];
      counts.set(rank, counts.get(rank)! + 1);
    }
    const wrong = candidates.find((rank, i) => counts.get(rank) !== Math.floor(k / n) + (i < k % n ? 1 : 0));
    if (wrong !== undefined) {
      const held = candidates.map((rank) => `${rank}: ${counts.get(rank)}`).join(', ');
      return [{ invariant: 'round-robin', message: `after the ${k} placement(s) made by ${formatNs(at)}, ${wrong} had ${counts.get(wrong)}; cycling from the first of ${n} candidates gives ${Math.floor(k / n)} each and one more to the first ${k % n} (${held})` }];
    }
  }
  return [];
}

// ── The router's load (SCORE-2) ─────────────────────────────────────────────────────────────

/**
 * At each placement, the prefill tokens the router counts on a candidate (its active requests'
 * uncomputed prompt tokens) are at most the prompts of the other requests placed on that rank by
 * then whose prefill had not completed (no first token yet): the router adds a request's tokens
 * when it places it and drains them when its prefill completes, at the pass end that makes its
 * first token (before arrivals of the same instant, TIME-3). A count that is never drained, or is
 * drained twice (below zero), breaks it. Recomputed from the requests' own records, not the router.
 */
function routerLoadViolations(requests: readonly SimRequest[]): Violation[] {
  const violations: Violation[] = [];
  const placedOn = new Map<string, { time_ns: Nanos; request: SimRequest }[]>();
  const place = (worker_id: number, dp_rank: number, time_ns: Nanos, request: SimRequest) => {
    const key = `${worker_id}:${dp_rank}`;
    let list = placedOn.get(key);
    if (list === undefined) placedOn.set(key, (list = []));
    list.push({ time_ns, request });
  };
  for (const request of requests) {
    for (const placement of request.routing_history) place(placement.worker_id, placement.dp_rank, placement.time_ns, request);
    // A request sent to a worker directly (target_worker) is counted without a routing decision, when it is dispatched.
    if (request.routing_history.length === 0 && request.dispatch_ns !== null && request.worker_id !== null) place(request.worker_id, request.dp_rank ?? 0, request.dispatch_ns, request);
  }
  for (const request of requests) {
    for (const placement of request.routing_history) {
      for (const candidate of placement.candidates) {
        const at = placement.time_ns;
        let bound = 0;
        for (const other of placedOn.get(`${candidate.worker_id}:${candidate.dp_rank}`) ?? []) {
          if (other.request === request || other.time_ns > at) continue;
          if (other.request.first_token_ns === null || other.request.first_token_ns > at) bound += other.request.input_length;
        }
        if (candidate.active_prefill_tokens >= 0 && candidate.active_prefill_tokens <= bound) continue;
        violations.push({
          invariant: 'router-load',
          message: `placing request ${request.request_id} at ${formatNs(at)}, the router counted ${candidate.active_prefill_tokens} prefill tokens on worker ${candidate.worker_id} dp rank ${candidate.dp_rank}, where the requests placed and not yet prefilled have ${bound}`,
        });
        if (violations.length >= 5) return violations;
      }
    }
  }
  return violations;
}

// ── Play release times (AGX-1) ──────────────────────────────────────────────────────────────

/**
 * AGX-1, from the trace: a play's request arrives at the later of its play's start + its authored
 * not-before offset and, for each dependency, the moment its predecessor was dispatched or
 * completed (the edge's trigger) + the edge's delay. Requests that were skipped are not checked.
 */
function playReleaseViolations(requests: readonly SimRequest[], plays: readonly PlayRecord[], trace: AgenticTrace | null): Violation[] {
  if (trace === null) return [];
  const violations: Violation[] = [];
  const sources = new Map(trace.plays.map((play) => [play.play_id, play]));
  const byId = new Map(requests.map((request) => [request.request_id, request]));
  for (const play of plays) {
    for (const node of sources.get(play.source_play_id)?.nodes ?? []) {
      const request = byId.get(`${play.play_id}/${node.request_id}`);
      if (request === undefined || request.state === 'skipped') continue;
      let expected = play.start_ns + node.not_before_ns;
      let why = `its play's start ${formatNs(play.start_ns)} + ${formatNs(node.not_before_ns)}`;
      for (const dependency of node.dependencies) {
        const predecessor = byId.get(`${play.play_id}/${dependency.predecessor}`);
        const fired = predecessor === undefined ? null : dependency.trigger === 'dispatch' ? predecessor.dispatch_ns : predecessor.finished_ns;
        if (fired === null) {
          violations.push({ invariant: 'play-release', message: `request ${request.request_id} arrived at ${formatNs(request.arrival_ns)}, but its predecessor ${dependency.predecessor} was never ${dependency.trigger === 'dispatch' ? 'dispatched' : 'completed'}` });
          expected = -1;
          break;
        }
        if (fired + dependency.delay_ns > expected) {
          expected = fired + dependency.delay_ns;
          why = `${dependency.predecessor}'s ${dependency.trigger} at ${formatNs(fired)} + ${formatNs(dependency.delay_ns)}`;
        }
      }
      if (expected >= 0 && request.arrival_ns !== expected) {
        violations.push({ invariant: 'play-release', message: `request ${request.request_id} arrived at ${formatNs(request.arrival_ns)}, not at ${formatNs(expected)} (${why})` });
      }
      if (violations.length >= 5) return violations;
    }
  }
  return violations;
}

// ── A failed play stops (AGX-2) ─────────────────────────────────────────────────────────────

/** Every request of a failed play that arrives after the play's first failure must be skipped, not sent. */
function failedPlayViolations(requests: readonly SimRequest[], failures: readonly FailureRecord[]): Violation[] {
  const failedAt = new Map<string, FailureRecord>();
  for (const failure of failures) {
    if (failure.play_id === null) continue;
    const known = failedAt.get(failure.play_id);
    if (!known || failure.time_ns < known.time_ns) failedAt.set(failure.play_id, failure);
  }
  const violations: Violation[] = [];
  for (const request of requests) {
    const failure = request.identity.play_id === null ? undefined : failedAt.get(request.identity.play_id);
    if (!failure || request.state === 'skipped' || request.arrival_ns <= failure.time_ns) continue;
    violations.push({
      invariant: 'failed-play-stops',
      message: `request ${request.request_id} arrived at ${formatNs(request.arrival_ns)} and was ${request.state}, after its play failed at ${formatNs(failure.time_ns)} (request ${failure.request_id})`,
    });
  }
  return violations;
}

// ── Capacity ────────────────────────────────────────────────────────────────────────────────

/** The capacity and pass-time violations of one pass. */
export function passViolations(pass: PassRecord): Violation[] {
  // Nearly every pass keeps them all: where it ran is written only for one that does not.
  const capacity = capacityProblems(pass);
  const time = passTimeProblems(pass);
  if (capacity === null && time === null) return [];
  const at = `worker ${pass.worker_id} dp rank ${pass.dp_rank}, pass at ${formatNs(pass.time_ns)}`;
  const located = (invariant: InvariantName, problems: string[] | null) => (problems ?? []).map((problem) => ({ invariant, message: `${at}: ${problem}` }));
  return [...located('capacity', capacity), ...located('pass-time', time)];
}

/** `problems` with one more (made on the first); a function of the module, not a closure per pass. */
function noted(problems: string[] | null, problem: string): string[] {
  if (problems === null) return [problem];
  problems.push(problem);
  return problems;
}

/** What a pass exceeded of its rank's limits, or null when nothing. */
function capacityProblems(pass: PassRecord): string[] | null {
  let problems: string[] | null = null;
  if (pass.running_requests > pass.max_num_seqs) problems = noted(problems, `${pass.running_requests} running requests (max_num_seqs) > ${pass.max_num_seqs}`);
  if (pass.scheduled_tokens > pass.max_num_batched_tokens) problems = noted(problems, `${pass.scheduled_tokens} scheduled tokens (max_num_batched_tokens) > ${pass.max_num_batched_tokens}`);
  if (pass.g1_occupied_blocks > pass.num_gpu_blocks) problems = noted(problems, `${pass.g1_occupied_blocks} G1 blocks taken (num_gpu_blocks) > ${pass.num_gpu_blocks}`);
  if (pass.host_used_blocks !== null && pass.host_capacity_blocks !== null && pass.host_used_blocks > pass.host_capacity_blocks) {
    problems = noted(problems, `${pass.host_used_blocks} G2 entries (num_host_blocks) > ${pass.host_capacity_blocks}`);
  }
  return problems;
}

// ── Pass time ───────────────────────────────────────────────────────────────────────────────

/**
 * Each pass's shape agrees with its plan and its duration is what its model promises: fixed
 * exactly; linear the formula rounded up (the smallest whole ns at or above it, at least 1);
 * table exactly a measured point when the pass sits on one. Checked as properties, not by
 * recomputing the engine's arithmetic. Null when the pass keeps them all.
 */
function passTimeProblems(pass: PassRecord): string[] | null {
  let problems: string[] | null = null;
  const { shape, duration_ns: duration, pass_time: model } = pass;
  if (shape.prefill_tokens + shape.decode_sequences !== pass.scheduled_tokens) {
    problems = noted(problems, `its shape counts ${shape.prefill_tokens} prefill tokens + ${shape.decode_sequences} decode steps, but it schedules ${pass.scheduled_tokens} tokens`);
  }
  if (!Number.isSafeInteger(duration) || duration < 1) return noted(problems, `lasts ${duration} ns, not a whole number of at least 1`);
  if (model.model === 'fixed') {
    const expected = (shape.has_prefill ? model.prefill_ns : 0) + (shape.decode_sequences > 0 ? model.decode_ns : 0);
    if (duration !== expected) problems = noted(problems, `lasts ${duration} ns; fixed timing gives ${expected} ns`);
  } else if (model.model === 'linear') {
    const ps = model.base_ps + model.prefill_token_ps * BigInt(shape.prefill_tokens) + model.decode_sequence_ps * BigInt(shape.decode_sequences) + model.context_token_ps * BigInt(shape.context_tokens);
    const d = BigInt(duration);
    const roundedUp = d * 1000n >= ps && (d === 1n || (d - 1n) * 1000n < ps);
    if (!roundedUp) problems = noted(problems, `lasts ${duration} ns; the linear model gives ${ps} ps, which rounds up to another whole ns`);
  } else {
    const onlyPrefill = shape.has_prefill && shape.decode_sequences === 0;
    const prefillPoint = model.prefill_tokens.indexOf(shape.prefill_tokens);
    if (onlyPrefill && prefillPoint >= 0 && duration !== model.prefill_ns[prefillPoint]) {
      problems = noted(problems, `a prefill of ${shape.prefill_tokens} tokens lasts ${duration} ns; the table's point is ${model.prefill_ns[prefillPoint]} ns`);
    }
    const batch = model.decode_batch_sizes.indexOf(shape.decode_sequences);
    const context = model.decode_context_tokens.findIndex((c) => c * shape.decode_sequences === shape.decode_context_tokens);
    if (!shape.has_prefill && batch >= 0 && context >= 0 && duration !== model.decode_ns[batch][context]) {
      problems = noted(problems, `a decode of ${shape.decode_sequences} sequences at ${model.decode_context_tokens[context]} context tokens lasts ${duration} ns; the table's point is ${model.decode_ns[batch][context]} ns`);
    }
  }
  return problems;
}

// ── The event stream ────────────────────────────────────────────────────────────────────────

/** A written event log's lines, or why it does not parse. */
type ParsedEventLog = LogLine[] | WireFormatError;

function parsedEventLog(event_log: string): ParsedEventLog {
  try {
    return parseWireLog(event_log);
  } catch (error) {
    if (!(error instanceof WireFormatError)) throw error;
    return error;
  }
}

/** The log through the strict checker; then what it leaves per rank against the engines' G1 and G2. */
function eventLogViolations(lines: ParsedEventLog, ranks: readonly RankEngine[]): Violation[] {
  if (lines instanceof WireFormatError) return [{ invariant: 'event-stream', message: `the event log does not parse: ${lines.message}` }];
  const report = checkEventLog(lines);
  if (report.status === 'violation') {
    return [{ invariant: 'event-stream', message: `line ${report.violation.line_number}: ${report.violation.message}` }];
  }
  const violations: Violation[] = [];
  for (const rank of ranks) {
    const seen = report.ranks.find((r) => r.worker_id === rank.rank.worker_id && r.dp_rank === rank.rank.dp_rank);
    if (seen !== undefined) violations.push(...reportedCapacityViolations(seen, rank));
    if (rank.role === 'decode') continue;
    const device = seen?.resident_blocks.Device ?? 0;
    const host = seen?.resident_blocks.HostPinned ?? 0;
    const engineHost = rank.host?.pool.residentBlocks ?? 0;
    if (device !== rank.g1.cachedBlocks || host !== engineHost) {
      violations.push({
        invariant: 'mirror-matches-engines',
        message: `worker ${rank.rank.worker_id} dp rank ${rank.rank.dp_rank}: the event log leaves ${device} G1 and ${host} G2 blocks, the engine holds ${rank.g1.cachedBlocks} and ${engineHost}`,
      });
    }
  }
  return violations;
}

/**
 * The most blocks the events ever showed on a rank (after any one event, as the strict checker
 * counts them) against its G1's num_gpu_blocks and its G2's capacity (a shared pool's, whose events
 * every rank of the pool carries): a count apart from the engine's own, which the capacity
 * invariant reads.
 */
function reportedCapacityViolations(seen: RankSummary, rank: RankEngine): Violation[] {
  const violations: Violation[] = [];
  const where = `worker ${rank.rank.worker_id} dp rank ${rank.rank.dp_rank}`;
  const device = seen.peak_resident_blocks.Device;
  if (device > rank.g1.capacity_blocks) {
    violations.push({ invariant: 'reported-capacity', message: `${where}: the KV events show ${device} G1 blocks at once, num_gpu_blocks is ${rank.g1.capacity_blocks}` });
  }
  const host = seen.peak_resident_blocks.HostPinned;
  const hostCapacity = rank.host === null ? 0 : rank.host.pool.capacity_blocks;
  if (host > hostCapacity) {
    violations.push({ invariant: 'reported-capacity', message: `${where}: the KV events show ${host} G2 blocks at once, its G2 holds ${hostCapacity}` });
  }
  return violations;
}
