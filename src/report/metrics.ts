// Distribution statistics for reports (RPT-2): mean and nearest-rank percentiles over exact
// sorted values. Rank rule: the p-th percentile of n sorted values is the value at 1-based rank
// ceil(p/100 × n) (p50 of [1,2,3,4] is 2; p99 of 10 values is the 10th).
export interface Distribution {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** Statistics of integer-nanosecond values, reported in milliseconds. */
export function distributionMs(valuesNs: readonly number[]): Distribution {
  const sorted = [...valuesNs].sort((a, b) => a - b);
  let total = 0;
  for (const value of sorted) total += value;
  const ms = (ns: number) => ns / 1_000_000;
  return {
    count: sorted.length,
    mean: sorted.length === 0 ? 0 : ms(total / sorted.length),
    p50: ms(percentile(sorted, 50)),
    p90: ms(percentile(sorted, 90)),
    p99: ms(percentile(sorted, 99)),
    max: ms(sorted.length === 0 ? 0 : sorted[sorted.length - 1]),
  };
}
