// Integer values (nanosecond durations) counted per distinct value: a run's inter-token gaps are
// millions of values taking few distinct values, so their distribution is kept as counts.
/**
 * Integer values counted per distinct value: the same distribution as the list of values, in
 * memory proportional to the distinct values only (a run's inter-token gaps number in the
 * millions but take few distinct values).
 */
export class ValueCounts {
  private readonly timesByValue = new Map<number, number>();
  private valueCount = 0;

  static of(values: readonly number[]): ValueCounts {
    const counts = new ValueCounts();
    counts.addAll(values);
    return counts;
  }

  /** How many values were added (with repeats). */
  get count(): number {
    return this.valueCount;
  }

  add(value: number): void {
    this.timesByValue.set(value, (this.timesByValue.get(value) ?? 0) + 1);
    this.valueCount++;
  }

  addAll(values: readonly number[]): void {
    for (const value of values) this.add(value);
  }

  /** Adds every value counted in `other`. */
  addCounts(other: ValueCounts): void {
    for (const [value, times] of other.timesByValue) {
      this.timesByValue.set(value, (this.timesByValue.get(value) ?? 0) + times);
      this.valueCount += times;
    }
  }

  /** [value, times] pairs in ascending value order. */
  ascending(): [number, number][] {
    return [...this.timesByValue.entries()].sort((a, b) => a[0] - b[0]);
  }
}
