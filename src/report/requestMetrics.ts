// Per-request latency metrics and their aggregates, defined as AIPerf defines them (RPT-2 extended):
// each request gets its own TTFT, TTST, ITL (the mean of its own inter-token gaps), TPOT, E2E,
// queue time and per-user output rate; the run's statistics are taken over those per-request values
// (never over pooled gaps), with throughputs over the virtual benchmark duration and goodput
// against optional SLOs. Statistics use the nearest-rank rule of metrics.ts.
import type { SimRequest } from '../engine/request';
import type { Nanos } from '../time';

/** Statistics of one metric over requests, in the metric's unit; with no values (count 0) each is null: not measured, not zero. */
export interface Statistics {
  count: number;
  mean: number | null;
  min: number | null;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
  max: number | null;
}

/** One request's metrics in nanoseconds (null where the request has no such value). */
export interface RequestMetricsNs {
  time_to_first_token_ns: Nanos | null;
  time_to_second_token_ns: Nanos | null;
  /** Mean gap between consecutive output tokens: (last − first token) / (output tokens − 1); needs 2 tokens. */
  inter_token_latency_ns: number | null;
  /** (E2E − TTFT) / (output tokens − 1); in kvqual the last token ends the request, so it equals the ITL. */
  time_per_output_token_ns: number | null;
  request_latency_ns: Nanos | null;
  /** From arrival to the first admission into a pass. */
  queue_ns: Nanos | null;
  /** Output tokens per second one user sees after the first token: 1 / ITL. */
  output_token_throughput_per_user: number | null;
}

/** Service-level objectives: a finished request meets them when every one given holds (≤). */
export interface Slo {
  ttft_ms?: number;
  tpot_ms?: number;
  e2e_ms?: number;
}

export interface RunMetrics {
  /** Finished requests: the ones latency statistics count. */
  request_count: number;
  /** Virtual time from the first arrival to the last finished request's end. */
  benchmark_duration_ms: number;
  request_throughput_per_s: number;
  output_token_throughput_per_s: number;
  total_token_throughput_per_s: number;
  prefix_reuse: { input_tokens: number; g1_tokens: number; g2_tokens: number; g1_ratio: number; g2_ratio: number };
  time_to_first_token_ms: Statistics;
  time_to_second_token_ms: Statistics;
  inter_token_latency_ms: Statistics;
  time_per_output_token_ms: Statistics;
  request_latency_ms: Statistics;
  queue_time_ms: Statistics;
  h2d_wait_ms: Statistics;
  output_token_throughput_per_user: Statistics;
  /**
   * Per session (a conversation; a request without one is its own session): output tokens of its
   * finished requests ÷ (its last finish − its first arrival), in tokens/s, over sessions.
   */
  output_token_throughput_per_session: Statistics;
  input_sequence_length: Statistics;
  output_sequence_length: Statistics;
  /** Present when the config sets `slo`. */
  goodput?: { slo: Slo; requests_meeting_slo: number; share: number; goodput_per_s: number };
}

function nearestRank(p: number, count: number): number {
  return Math.min(Math.max(1, Math.ceil((p / 100) * count)), count);
}

/** Statistics of `values` (any order), each divided by `divisor` (1,000,000: ns to ms); all null when there are none. */
export function statistics(values: ArrayLike<number>, divisor = 1): Statistics {
  const sorted = Float64Array.from(values).sort();
  const count = sorted.length;
  if (count === 0) return { count: 0, mean: null, min: null, p50: null, p90: null, p95: null, p99: null, max: null };
  let total = 0;
  for (const value of sorted) total += value;
  // Divided, not multiplied by 1 / divisor: 1,800,000 ns is 1.8 ms, where × 1e-6 gives 1.7999999999999998.
  const at = (p: number) => sorted[nearestRank(p, count) - 1] / divisor;
  return { count, mean: total / count / divisor, min: sorted[0] / divisor, p50: at(50), p90: at(90), p95: at(95), p99: at(99), max: sorted[count - 1] / divisor };
}

export function requestMetricsNs(request: SimRequest): RequestMetricsNs {
  const first = request.first_token_ns;
  const ttft = first === null ? null : first - request.arrival_ns;
  const e2e = request.finished_ns === null || request.state !== 'finished' ? null : request.finished_ns - request.arrival_ns;
  const tokens = request.output_tokens;
  const itl = first !== null && tokens >= 2 && request.last_token_ns !== null ? (request.last_token_ns - first) / (tokens - 1) : null;
  const tpot = e2e !== null && ttft !== null && tokens >= 2 ? (e2e - ttft) / (tokens - 1) : null;
  return {
    time_to_first_token_ns: ttft,
    time_to_second_token_ns: first === null || request.second_token_ns === null ? null : request.second_token_ns - first,
    inter_token_latency_ns: itl,
    time_per_output_token_ns: tpot,
    request_latency_ns: e2e,
    queue_ns: request.first_admission_ns === null ? null : request.first_admission_ns - request.arrival_ns,
    output_token_throughput_per_user: itl === null || itl === 0 ? null : 1e9 / itl,
  };
}

/** Whether a finished request's metrics meet every SLO given (an objective on a metric the request does not have holds: TPOT of a 1-token output, TTFT of a request that asked for no output). */
export function meetsSlo(metrics: RequestMetricsNs, slo: Slo): boolean {
  const within = (valueNs: number | null, limitMs: number | undefined) => limitMs === undefined || valueNs === null || valueNs <= limitMs * 1_000_000;
  if (metrics.request_latency_ns === null) return false;
  return within(metrics.time_to_first_token_ns, slo.ttft_ms) && within(metrics.time_per_output_token_ns, slo.tpot_ms) && within(metrics.request_latency_ns, slo.e2e_ms);
}

/** Per-request metrics of the run, in nanoseconds, one column per metric (NaN where a request has none). */
const METRIC_COLUMNS = ['time_to_first_token_ns', 'time_to_second_token_ns', 'inter_token_latency_ns', 'time_per_output_token_ns', 'request_latency_ns', 'queue_ns', 'output_token_throughput_per_user'] as const;
type MetricColumns = Record<(typeof METRIC_COLUMNS)[number], Float64Array>;

/** The values of a column that requests have (NaN marks none). */
function present(column: Float64Array): Float64Array {
  let count = 0;
  for (const value of column) if (!Number.isNaN(value)) count++;
  const values = new Float64Array(count);
  let at = 0;
  for (const value of column) if (!Number.isNaN(value)) values[at++] = value;
  return values;
}

/**
 * The metrics of every finished request, written into columns as each is computed (no object per
 * request is kept), and how many meet the SLO.
 */
function metricColumns(finished: readonly SimRequest[], slo: Slo | null): { columns: MetricColumns; meetingSlo: number } {
  const columns = Object.fromEntries(METRIC_COLUMNS.map((name) => [name, new Float64Array(finished.length)])) as MetricColumns;
  let meetingSlo = 0;
  for (let i = 0; i < finished.length; i++) {
    const metrics = requestMetricsNs(finished[i]);
    for (const name of METRIC_COLUMNS) columns[name][i] = metrics[name] ?? NaN;
    if (slo !== null && meetsSlo(metrics, slo)) meetingSlo++;
  }
  return { columns, meetingSlo };
}

/** The run's metrics over its finished requests. */
export function runMetrics(requests: readonly SimRequest[], slo: Slo | null): RunMetrics {
  const finished = requests.filter((r) => r.state === 'finished');
  const { columns, meetingSlo } = metricColumns(finished, slo);
  /** Nanoseconds in a millisecond: metrics in ms are ns divided by it. */
  const ms = 1_000_000;
  let start = Infinity;
  let end = -Infinity;
  for (const request of finished) {
    start = Math.min(start, request.arrival_ns);
    end = Math.max(end, request.finished_ns!);
  }
  const durationNs = finished.length === 0 ? 0 : end - start;
  const perSecond = (amount: number) => (durationNs === 0 ? 0 : amount / (durationNs / 1e9));
  let input = 0;
  let output = 0;
  let g1 = 0;
  let g2 = 0;
  for (const request of finished) {
    input += request.input_length;
    output += request.output_tokens;
    g1 += request.g1_reused_tokens;
    g2 += request.host_reused_tokens;
  }
  const result: RunMetrics = {
    request_count: finished.length,
    benchmark_duration_ms: durationNs / ms,
    request_throughput_per_s: perSecond(finished.length),
    output_token_throughput_per_s: perSecond(output),
    total_token_throughput_per_s: perSecond(input + output),
    prefix_reuse: { input_tokens: input, g1_tokens: g1, g2_tokens: g2, g1_ratio: input === 0 ? 0 : g1 / input, g2_ratio: input === 0 ? 0 : g2 / input },
    time_to_first_token_ms: statistics(present(columns.time_to_first_token_ns), ms),
    time_to_second_token_ms: statistics(present(columns.time_to_second_token_ns), ms),
    inter_token_latency_ms: statistics(present(columns.inter_token_latency_ns), ms),
    time_per_output_token_ms: statistics(present(columns.time_per_output_token_ns), ms),
    request_latency_ms: statistics(present(columns.request_latency_ns), ms),
    queue_time_ms: statistics(present(columns.queue_ns), ms),
    h2d_wait_ms: statistics(finished.map((r) => r.h2d_wait_ns), ms),
    output_token_throughput_per_user: statistics(present(columns.output_token_throughput_per_user)),
    output_token_throughput_per_session: statistics(sessionThroughputs(finished)),
    input_sequence_length: statistics(finished.map((r) => r.input_length)),
    output_sequence_length: statistics(finished.map((r) => r.output_tokens)),
  };
  if (slo !== null) {
    result.goodput = { slo, requests_meeting_slo: meetingSlo, share: finished.length === 0 ? 0 : meetingSlo / finished.length, goodput_per_s: perSecond(meetingSlo) };
  }
  return result;
}

/** Output tokens per second of each session's span (first arrival to last finish); order does not matter (statistics sort). */
function sessionThroughputs(finished: readonly SimRequest[]): number[] {
  const sessions = new Map<string, { tokens: number; start: number; end: number }>();
  const rates: number[] = [];
  for (const request of finished) {
    const key = request.identity.session_id;
    if (key === null) {
      // Its own session: its rate now, with no entry kept for it.
      if (request.finished_ns! > request.arrival_ns) rates.push(tokensPerSecond(request.output_tokens, request.arrival_ns, request.finished_ns!));
      continue;
    }
    const session = sessions.get(key) ?? { tokens: 0, start: Infinity, end: -Infinity };
    session.tokens += request.output_tokens;
    session.start = Math.min(session.start, request.arrival_ns);
    session.end = Math.max(session.end, request.finished_ns!);
    sessions.set(key, session);
  }
  for (const session of sessions.values()) if (session.end > session.start) rates.push(tokensPerSecond(session.tokens, session.start, session.end));
  return rates;
}

function tokensPerSecond(tokens: number, start_ns: number, end_ns: number): number {
  return tokens / ((end_ns - start_ns) / 1e9);
}
