// What an SLO scenario measures on a run report (features/slo/): a latency statistic of the
// finished requests (the mean or a nearest-rank percentile, as the report's statistics), goodput
// against a TTFT and an ITL objective, the ratio of one run's statistic to another's, and the
// share of the infinite-cache ceiling a run realised. Pure functions of the report.
import type { RequestRecord, RunReport } from '../report/report';

/** The latency metrics a scenario may name, in its words, and the per-request field each reads. */
export const LATENCY_METRICS: Record<string, keyof RequestRecord> = {
  'time to first token': 'ttft_ms',
  'time to second token': 'time_to_second_token_ms',
  'inter-token latency': 'inter_token_latency_ms',
  'time per output token': 'time_per_output_token_ms',
  'request latency': 'e2e_ms',
  'queue time': 'queue_ms',
};

/** A statistic over requests: the mean, or the p-th percentile (1 ≤ p ≤ 100). */
export type Statistic = { kind: 'mean' } | { kind: 'percentile'; p: number };

/** "mean" or "p99" (with the metric after it: "p99 time to first token"), or the problem with it. */
export function parseStatistic(text: string): { statistic: Statistic; metric: string } | { problem: string } {
  const match = /^(mean|p(\d+)) (.+)$/.exec(text.trim());
  if (!match) return { problem: `"${text}" names no statistic: write "mean <metric>" or "p<percentile> <metric>", e.g. "p99 time to first token"` };
  const metric = match[3];
  if (!Object.hasOwn(LATENCY_METRICS, metric)) return { problem: `"${metric}" is not a latency metric a scenario can name; the metrics are ${Object.keys(LATENCY_METRICS).join(', ')}` };
  if (match[2] === undefined) return { statistic: { kind: 'mean' }, metric };
  const p = Number(match[2]);
  if (p < 1 || p > 100) return { problem: `p${match[2]}: a percentile is from p1 to p100` };
  return { statistic: { kind: 'percentile', p }, metric };
}

/** "p99 time to first token", "mean inter-token latency". */
export function statisticLabel(statistic: Statistic, metric: string): string {
  return `${statistic.kind === 'mean' ? 'mean' : `p${statistic.p}`} ${metric}`;
}

/** The metric's values over the finished requests that have one, in ms. */
export function metricValues(report: RunReport, metric: string): number[] {
  const field = LATENCY_METRICS[metric];
  if (field === undefined) throw new RangeError(`no latency metric "${metric}"`);
  const values: number[] = [];
  for (const record of report.per_request) {
    const value = record[field];
    if (record.status === 'finished' && typeof value === 'number') values.push(value);
  }
  return values;
}

/**
 * The statistic of the values, as the report computes its statistics: the mean of the values, or
 * the value at nearest rank ⌈p/100 × n⌉ of the sorted values; null when there are none.
 */
export function statisticOf(values: readonly number[], statistic: Statistic): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  if (statistic.kind === 'mean') {
    let total = 0;
    for (const value of sorted) total += value;
    return total / sorted.length;
  }
  const rank = Math.min(Math.max(1, Math.ceil((statistic.p / 100) * sorted.length)), sorted.length);
  return sorted[rank - 1];
}

export interface Goodput {
  /** Requests that finished with TTFT and ITL within the objectives (an objective on a metric a request does not have holds, as for the config's slo: one output token has no ITL). */
  meeting: number;
  /** Every request the run sent: a failed or unfinished one does not meet the objectives. */
  requests: number;
  share: number;
}

/** Goodput against a TTFT and an ITL objective (both "at most", in ms), over every request sent (skipped ones never were). */
export function goodput(report: RunReport, ttft_limit_ms: number, itl_limit_ms: number): Goodput {
  let meeting = 0;
  let requests = 0;
  for (const record of report.per_request) {
    if (record.status === 'skipped') continue;
    requests++;
    if (record.status !== 'finished' || (record.ttft_ms !== null && record.ttft_ms > ttft_limit_ms)) continue;
    if (record.inter_token_latency_ms !== null && record.inter_token_latency_ms > itl_limit_ms) continue;
    meeting++;
  }
  return { meeting, requests, share: requests === 0 ? 0 : meeting / requests };
}
