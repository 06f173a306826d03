// What each SLO claim leaves for its sign-off card (src/report/sloChart.ts draws it): the claim in
// one line with the measured value and the limit, and the CDFs that show it — a latency statistic
// against its limit, goodput against its two objectives (one panel each), the ratio between two
// runs (both runs' CDFs, the line where KV-aware routing's statistic would just meet the ratio),
// and the share of the infinite-cache ceiling (a line only: an aggregate over blocks has no
// per-request distribution to draw). Pure functions of the measured values.
import { cdfPoints, durationWords, type SloChart } from '../report/sloChart';
import { statisticLabel, type Statistic } from './claims';

/** The share of the values at most `limit`. */
export function shareAtMost(values: readonly number[], limit: number): number {
  if (values.length === 0) return 0;
  let within = 0;
  for (const value of values) if (value <= limit) within++;
  return within / values.length;
}

/** Where a statistic's marker sits on the CDF: a percentile at p %, the mean at the share of values at most it. */
function markerShare(values: readonly number[], statistic: Statistic, measured: number): number {
  return statistic.kind === 'percentile' ? statistic.p / 100 : shareAtMost(values, measured);
}

const percentWords = (share: number) => `${Number((share * 100).toFixed(2))} %`;

/** A latency statistic of one run against an "at most" limit (ms). */
export function latencyChart(claim: { run: string; values: readonly number[]; statistic: Statistic; metric: string; measured_ms: number; limit_ms: number }): SloChart {
  const label = statisticLabel(claim.statistic, claim.metric);
  const met = claim.measured_ms <= claim.limit_ms;
  return {
    sentence: `${label} ${durationWords(claim.measured_ms)} ${met ? '≤' : '>'} SLO ${durationWords(claim.limit_ms)}`,
    met,
    panels: [
      {
        axis: `${claim.metric} (ms)`,
        runs: [{ label: claim.run, count: claim.values.length, points: cdfPoints(claim.values) }],
        limit: { value: claim.limit_ms, label: `SLO: at most ${durationWords(claim.limit_ms)}` },
        markers: [{ run: claim.run, value: claim.measured_ms, share: markerShare(claim.values, claim.statistic, claim.measured_ms), label: `measured ${label} ${durationWords(claim.measured_ms)}` }],
      },
    ],
  };
}

/** Goodput against a TTFT and an ITL objective (ms): a panel per objective, marked where the limit cuts the CDF. */
export function goodputChart(claim: {
  run: string;
  ttft_values: readonly number[];
  itl_values: readonly number[];
  ttft_limit_ms: number;
  itl_limit_ms: number;
  /** Measured and required, in % of the requests sent. */
  percent: number;
  required_percent: number;
}): SloChart {
  const met = claim.percent >= claim.required_percent;
  const objective = (metric: string, values: readonly number[], limit: number) => {
    const share = shareAtMost(values, limit);
    return {
      axis: `${metric} (ms)`,
      runs: [{ label: claim.run, count: values.length, points: cdfPoints(values) }],
      limit: { value: limit, label: `objective: at most ${durationWords(limit)}` },
      markers: [{ run: claim.run, value: limit, share, label: `${percentWords(share)} of finished requests within ${durationWords(limit)}` }],
    };
  };
  return {
    sentence: `goodput ${Number(claim.percent.toFixed(2))} % ${met ? '≥' : '<'} SLO ${claim.required_percent} %`,
    detail: `the share of the requests sent with time to first token at most ${durationWords(claim.ttft_limit_ms)} and inter-token latency at most ${durationWords(claim.itl_limit_ms)}`,
    met,
    panels: [objective('time to first token', claim.ttft_values, claim.ttft_limit_ms), objective('inter-token latency', claim.itl_values, claim.itl_limit_ms)],
  };
}

interface RatioRun {
  run: string;
  values: readonly number[];
  measured_ms: number;
}

/**
 * The ratio of the baseline's statistic to the candidate's against an "at least" ratio: both runs'
 * CDFs, each marked at its statistic, and the SLO line where the candidate's statistic would just
 * meet the ratio (the baseline's divided by it).
 */
export function ratioChart(claim: { statistic: Statistic; metric: string; candidate: RatioRun; baseline: RatioRun; ratio: number; required: number }): SloChart {
  const label = statisticLabel(claim.statistic, claim.metric);
  const met = claim.ratio >= claim.required;
  const bound = claim.baseline.measured_ms / claim.required;
  const run = (r: RatioRun) => ({ label: r.run, count: r.values.length, points: cdfPoints(r.values) });
  const marker = (r: RatioRun) => ({ run: r.run, value: r.measured_ms, share: markerShare(r.values, claim.statistic, r.measured_ms), label: `${r.run}: ${label} ${durationWords(r.measured_ms)}` });
  return {
    sentence: `${label}: ${claim.baseline.run} ${durationWords(claim.baseline.measured_ms)} ÷ ${claim.candidate.run} ${durationWords(claim.candidate.measured_ms)} = ${claim.ratio}× ${met ? '≥' : '<'} SLO ${claim.required}×`,
    met,
    panels: [
      {
        axis: `${claim.metric} (ms)`,
        runs: [run(claim.candidate), run(claim.baseline)],
        limit: { value: bound, label: `SLO: ${claim.candidate.run} at most ${durationWords(bound)} (${claim.baseline.run} ÷ ${claim.required})` },
        markers: [marker(claim.candidate), marker(claim.baseline)],
      },
    ],
  };
}

/** The share of the infinite-cache ceiling realised (%), against an "at least" share: a line, no chart. */
export function ceilingLine(claim: { percent: number; required_percent: number }): SloChart {
  const met = claim.percent >= claim.required_percent;
  return {
    sentence: `prefix reuse ${Number(claim.percent.toFixed(2))} % of the infinite-cache ceiling (block-weighted) ${met ? '≥' : '<'} SLO ${claim.required_percent} %`,
    met,
    panels: [],
  };
}
