// The canonical run report (RPT-1, SCORE-5): summary statistics, per-request records with
// routing and admission history, per-admission reconciliation of router prediction against
// realised reuse, and the digest that identifies the run.
import type { ClusterResult, SharedDomainReport } from '../sim/cluster';
import type { SimRequest, Reconciliation, RequestIdentity } from '../engine/request';
import type { Placement } from '../router/router';
import { distributionMs, Distribution } from './metrics';
import { digestOf, hasCanonicalForm } from './canonical';
import { onDemandArray } from './onDemand';
import { requestMetricsNs, runMetrics, RunMetrics, Slo } from './requestMetrics';
import type { PlayRecord } from '../agentic/driver';
import { prefixHitRates, requestedBlocks, type PrefixHitRates, type RequestReuse } from './prefixHitRates';

export const REPORT_VERSION = 8;

export interface RunReport {
  report_version: number;
  digest: string;
  summary: RunSummary;
  /** One record per request, made when read (see onDemandArray): equal each time, never the same object; made once when the digest is deferred (see buildReport). */
  per_request: readonly RequestRecord[];
}

export interface RunSummary {
  /** How far the pass times can be trusted: "functional" (fixed timing), "calibrated: <source>", or an uncalibrated model. */
  fidelity: string;
  /** AIPerf-style metrics: per-request values, then statistics over requests (docs/model.md, Reports). */
  metrics: RunMetrics;
  requests: { total: number; finished: number; failed: number; skipped: number; unfinished: number };
  tokens: { input: number; output: number; g1_reused: number; host_reused: number };
  virtual_duration_ms: number;
  ttft_ms: Distribution;
  itl_ms: Distribution;
  e2e_ms: Distribution;
  /** Token-weighted prefix reuse (prefix_hit_rates.measured.token_weighted, kept under its older name). */
  prefix_reuse_ratio: number;
  /** Prefix reuse in the three published definitions, with the infinite-cache ceiling in each (docs/glossary.md). */
  prefix_hit_rates: PrefixHitRates;
  g2_restored_tokens: number;
  transfers: { d2h: number; h2d: number; d2h_bytes: number; h2d_bytes: number };
  kv_events: { emitted: number; withheld_from_router: number; batches_delivered: number };
  reconciliation: { admissions: number; agree: number; disagree_by_reason: Record<string, number> };
  event_stream_failure: string | null;
  /** Requests that never ended although the run ran out of work (present only when there are any: a simulator defect). */
  stuck_requests?: StuckRequestRecord[];
  g2_domains?: SharedDomainReport[];
  /** Agentic runs: the play instances (AGX-3..5). */
  plays?: PlayRecord[];
}

export interface StuckRequestRecord {
  request_id: string;
  status: string;
  worker_id: number | null;
  dp_rank: number | null;
  where: string;
  last_progress_ms: number;
}

export interface RequestRecord extends RequestIdentity {
  status: string;
  worker_id: number | null;
  dp_rank: number | null;
  /** False for requests sent straight to a worker (no routing decision). */
  routed: boolean;
  input_length: number;
  output_length: number;
  arrival_ms: number;
  dispatch_ms: number | null;
  first_admission_ms: number | null;
  first_token_ms: number | null;
  last_token_ms: number | null;
  ttft_ms: number | null;
  e2e_ms: number | null;
  /** Second token − first token. */
  time_to_second_token_ms: number | null;
  /** The mean of this request's own inter-token gaps (needs 2 output tokens). */
  inter_token_latency_ms: number | null;
  time_per_output_token_ms: number | null;
  /** Arrival → first admission into a pass. */
  queue_ms: number | null;
  /** Output tokens per second after the first token (1 / ITL). */
  output_token_throughput_per_user: number | null;
  g1_reused_tokens: number;
  host_reused_tokens: number;
  /** Leading prompt blocks an earlier request had: this request's hit with an infinite cache (null: it never arrived). */
  ceiling_hit_blocks: number | null;
  h2d_wait_ms: number;
  /** cache_ids of the plays whose G2 entries this request restored (AGX-4: only its own). */
  host_restore_sources: readonly string[];
  preemptions: number;
  failure_reason: string | null;
  /** Why a skipped request was never sent. */
  skip_reason: string | null;
  /** Disaggregated requests: the decode worker, the KV handoff time and the load-only decode placement. */
  decode_worker_id: number | null;
  kv_transfer_ms: number | null;
  decode_routing: RoutingRecord | null;
  routing_history: RoutingRecord[];
  admission_history: SimRequest['admission_history'];
  /** Attempts left out of admission_history between its first ones and its last (absent when none was). */
  admission_attempts_omitted?: number;
  reconciliation: Reconciliation | null;
}

export type RoutingRecord = Omit<Placement, 'request_id' | 'ordinal'>;

const ms = (ns: number | null) => (ns === null ? null : ns / 1_000_000);

/** SCORE-5: does the router's reported overlap match realised reuse, and if not, why. */
export function reconcile(request: SimRequest, block_size: number, host_weight: number): Reconciliation | null {
  const placement = request.routing_history[request.routing_history.length - 1];
  if (!placement || request.first_admission_ns === null) return null;
  const predicted_tokens = placement.reported_overlap_tokens;
  const realised_tokens = request.g1_reused_tokens + request.host_reused_tokens;
  if (predicted_tokens === realised_tokens) return { predicted_tokens, realised_tokens, agree: true, reason: null };
  return { predicted_tokens, realised_tokens, agree: false, reason: disagreementReason(request, placement, block_size, host_weight) };
}

function disagreementReason(request: SimRequest, placement: Placement, block_size: number, host_weight: number): Reconciliation['reason'] {
  const truth = request.truth_at_placement!;
  const routerSaw = placement.device_blocks + placement.host_blocks;
  if (truth.device_blocks !== placement.device_blocks || truth.host_blocks !== placement.host_blocks) return 'lag';
  const realisedBlocks = (request.g1_reused_tokens + request.host_reused_tokens) / block_size;
  const reusable = request.output_length > 0 ? Math.floor((request.input_length - 1) / block_size) : Math.floor(request.input_length / block_size);
  if (realisedBlocks === Math.min(routerSaw, reusable) && reusable < routerSaw) return 'last-token rule';
  if (realisedBlocks < routerSaw) return 'stale entry';
  if (realisedBlocks > routerSaw) return 'queued request';
  return host_weight !== 1 ? 'host weight' : null;
}

/** The placement without its request identity: same fields, same order, one fast-shaped object. */
function routingRecord(placement: Placement): RoutingRecord {
  return {
    time_ns: placement.time_ns,
    policy: placement.policy,
    worker_id: placement.worker_id,
    dp_rank: placement.dp_rank,
    candidates: placement.candidates,
    device_blocks: placement.device_blocks,
    host_blocks: placement.host_blocks,
    selected_overlap_blocks: placement.selected_overlap_blocks,
    best_available_overlap_blocks: placement.best_available_overlap_blocks,
    reported_overlap_tokens: placement.reported_overlap_tokens,
    tied_candidates: placement.tied_candidates,
  };
}

function routingRecords(history: readonly Placement[]): RoutingRecord[] {
  const records: RoutingRecord[] = new Array(history.length);
  for (let i = 0; i < history.length; i++) records[i] = routingRecord(history[i]);
  return records;
}

function record(request: SimRequest): RequestRecord {
  const identity = request.identity;
  const ttft = request.first_token_ns === null ? null : request.first_token_ns - request.arrival_ns;
  const e2e = request.finished_ns === null ? null : request.finished_ns - request.arrival_ns;
  const metrics = requestMetricsNs(request);
  return {
    request_id: identity.request_id,
    ordinal: identity.ordinal,
    session_id: identity.session_id,
    play_id: identity.play_id,
    cache_id: identity.cache_id,
    lane: identity.lane,
    status: request.state,
    worker_id: request.worker_id,
    dp_rank: request.dp_rank,
    routed: request.routing_history.length > 0,
    input_length: request.input_length,
    output_length: request.output_length,
    arrival_ms: ms(request.arrival_ns)!,
    dispatch_ms: ms(request.dispatch_ns),
    first_admission_ms: ms(request.first_admission_ns),
    first_token_ms: ms(request.first_token_ns),
    last_token_ms: ms(request.last_token_ns),
    ttft_ms: ms(ttft),
    e2e_ms: ms(e2e),
    time_to_second_token_ms: ms(metrics.time_to_second_token_ns),
    inter_token_latency_ms: ms(metrics.inter_token_latency_ns),
    time_per_output_token_ms: ms(metrics.time_per_output_token_ns),
    queue_ms: ms(metrics.queue_ns),
    output_token_throughput_per_user: metrics.output_token_throughput_per_user,
    g1_reused_tokens: request.g1_reused_tokens,
    host_reused_tokens: request.host_reused_tokens,
    ceiling_hit_blocks: request.ceiling_hit_blocks,
    h2d_wait_ms: ms(request.h2d_wait_ns)!,
    host_restore_sources: request.host_restore_sources,
    preemptions: request.preemptions,
    failure_reason: request.failure_reason,
    skip_reason: request.skip_reason,
    decode_worker_id: request.decode_worker_id,
    kv_transfer_ms: request.kv_transfer_ns === null ? null : ms(request.kv_transfer_ns),
    decode_routing: request.decode_routing ? routingRecord(request.decode_routing) : null,
    routing_history: routingRecords(request.routing_history),
    admission_history: request.admission_history,
    admission_attempts_omitted: request.admission_attempts_omitted > 0 ? request.admission_attempts_omitted : undefined,
    reconciliation: request.reconciliation,
  };
}

/**
 * The report of a run. With `deferDigest`, its digest is computed when first read (and kept), not
 * now: for a caller that reads it only sometimes (the fuzzer compares two runs' reports, see
 * digestPending). Such a report holds its records made once, now, instead of on demand, so the
 * digest is of the report as built, whenever it is computed. A report that has no canonical form
 * fails either way, as the digest's writer fails.
 */
export function buildReport(result: ClusterResult, block_size: number, host_weight: number, plays: PlayRecord[] = [], fidelity = 'functional', slo: Slo | null = null, deferDigest = false): RunReport {
  for (const request of result.requests) request.reconciliation = reconcile(request, block_size, host_weight);
  const summary = summarize(result, fidelity, slo, block_size);
  if (plays.length > 0) summary.plays = plays;
  const requests = result.requests;
  if (!deferDigest) {
    const per_request = onDemandArray(requests.length, (i) => record(requests[i]));
    return { report_version: REPORT_VERSION, digest: digestOf({ summary, per_request }), summary, per_request };
  }
  const per_request: RequestRecord[] = new Array(requests.length);
  for (let i = 0; i < requests.length; i++) per_request[i] = record(requests[i]);
  // Deferred or not, a report with no canonical form fails here, with the writer's own error.
  if (!hasCanonicalForm({ summary, per_request })) digestOf({ summary, per_request });
  let digest: string | null = null;
  const report: RunReport = {
    report_version: REPORT_VERSION,
    get digest(): string {
      PENDING_DIGESTS.delete(report);
      return (digest ??= digestOf({ summary, per_request }));
    },
    set digest(value: string) {
      PENDING_DIGESTS.delete(report);
      digest = value;
    },
    summary,
    per_request,
  };
  PENDING_DIGESTS.add(report);
  return report;
}

/** Reports built with a deferred digest that nobody has read or set yet. */
const PENDING_DIGESTS = new WeakSet<RunReport>();

/**
 * True while a report's digest is deferred and not yet read or set: it is then the digest of its
 * summary and records as they are, so two such reports whose summaries and records are the same
 * value (sameCanonicalValue) have the same digest without either being computed.
 */
export function digestPending(report: RunReport): boolean {
  return PENDING_DIGESTS.has(report);
}

/** Each request that arrived, as the hit rates count it (a skipped request never did, so it has no ceiling). */
function* reuseOf(requests: readonly SimRequest[], block_size: number): Generator<RequestReuse> {
  for (const request of requests) {
    if (request.ceiling_hit_blocks === null) continue;
    const hit_tokens = request.g1_reused_tokens + request.host_reused_tokens;
    yield {
      input_tokens: request.input_length,
      requested_blocks: requestedBlocks(request.input_length, block_size),
      hit_blocks: hit_tokens / block_size,
      hit_tokens,
      ceiling_hit_blocks: request.ceiling_hit_blocks,
      ceiling_hit_tokens: request.ceiling_hit_blocks * block_size,
    };
  }
}

function summarize(result: ClusterResult, fidelity: string, slo: Slo | null, block_size: number): RunSummary {
  const requests = result.requests;
  const count = (state: string) => requests.filter((r) => r.state === state).length;
  const sum = (pick: (r: SimRequest) => number) => requests.reduce((total, r) => total + pick(r), 0);
  // Tokens of the requests that were sent: a skipped request's prompt never reached a worker.
  const input = sum((r) => (r.state === 'skipped' ? 0 : r.input_length));
  const g1 = sum((r) => r.g1_reused_tokens);
  const host = sum((r) => r.host_reused_tokens);
  const finished = requests.filter((r) => r.state === 'finished');
  const reconciled = requests.map((r) => r.reconciliation).filter((r): r is Reconciliation => r !== null);
  const byReason: Record<string, number> = {};
  for (const item of reconciled) if (!item.agree) byReason[item.reason ?? 'unexplained'] = (byReason[item.reason ?? 'unexplained'] ?? 0) + 1;
  const transfersOf = (direction: string) => result.transfers.filter((t) => t.direction === direction);
  const summary: RunSummary = {
    fidelity,
    metrics: runMetrics(requests, slo),
    requests: {
      total: requests.length,
      finished: finished.length,
      failed: count('failed'),
      skipped: count('skipped'),
      unfinished: requests.length - finished.length - count('failed') - count('skipped'),
    },
    tokens: { input, output: sum((r) => r.output_tokens), g1_reused: g1, host_reused: host },
    virtual_duration_ms: result.end_ns / 1_000_000,
    ttft_ms: distributionMs(finished.filter((r) => r.first_token_ns !== null).map((r) => r.first_token_ns! - r.arrival_ns)),
    itl_ms: distributionMs(result.itl_ns),
    e2e_ms: distributionMs(finished.map((r) => r.finished_ns! - r.arrival_ns)),
    prefix_reuse_ratio: input === 0 ? 0 : (g1 + host) / input,
    prefix_hit_rates: prefixHitRates(reuseOf(requests, block_size), block_size),
    g2_restored_tokens: host,
    transfers: {
      d2h: transfersOf('d2h').length,
      h2d: transfersOf('h2d').length,
      d2h_bytes: transfersOf('d2h').reduce((t, x) => t + x.bytes, 0),
      h2d_bytes: transfersOf('h2d').reduce((t, x) => t + x.bytes, 0),
    },
    kv_events: { emitted: result.events_emitted, withheld_from_router: result.events_withheld, batches_delivered: result.batches_delivered },
    reconciliation: { admissions: reconciled.length, agree: reconciled.filter((r) => r.agree).length, disagree_by_reason: byReason },
    event_stream_failure: result.failure ? result.failure.message : null,
  };
  if (result.g2_domains.length > 0) summary.g2_domains = result.g2_domains;
  if (result.stuck.length > 0) {
    summary.stuck_requests = result.stuck.map(({ last_progress_ns, ...rest }) => ({ ...rest, last_progress_ms: last_progress_ns / 1_000_000 }));
  }
  return summary;
}
