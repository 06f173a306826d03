// Distribution statistics for reports (RPT-2): mean and nearest-rank percentiles over exact
// sorted values. Rank rule: the p-th percentile of n sorted values is the value at 1-based rank
// ceil(p/100 × n) (p50 of [1,2,3,4] is 2; p99 of 10 values is the 10th). Values may be kept as
// counts per distinct value (ValueCounts) when there are millions of them but few distinct ones.
import { ValueCounts } from '../collections/valueCounts';

/** With no values (count 0) each statistic is null: not measured, not zero. */
export interface Distribution {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

/** The 1-based nearest rank of the p-th percentile among `count` values (0 when there are none). */
function nearestRank(p: number, count: number): number {
  if (count === 0) return 0;
  return Math.min(Math.max(1, Math.ceil((p / 100) * count)), count);
}

/** Statistics of integer-nanosecond values, reported in milliseconds. */
export function distributionMs(valuesNs: readonly number[] | ValueCounts): Distribution {
  const counts = valuesNs instanceof ValueCounts ? valuesNs : ValueCounts.of(valuesNs);
  const ascending = counts.ascending();
  // Summed one value at a time in ascending order, exactly as over the sorted list of values.
  let total = 0;
  for (const [value, times] of ascending) for (let i = 0; i < times; i++) total += value;
  const valueAtRank = (rank: number): number => {
    let seen = 0;
    for (const [value, times] of ascending) {
      seen += times;
      if (seen >= rank) return value;
    }
    return 0;
  };
  const ms = (ns: number) => ns / 1_000_000;
  const count = counts.count;
  if (count === 0) return { count: 0, mean: null, p50: null, p90: null, p99: null, max: null };
  return {
    count,
    mean: ms(total / count),
    p50: ms(valueAtRank(nearestRank(50, count))),
    p90: ms(valueAtRank(nearestRank(90, count))),
    p99: ms(valueAtRank(nearestRank(99, count))),
    max: ms(ascending[ascending.length - 1][0]),
  };
}
