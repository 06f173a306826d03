// Integer values (nanosecond durations) counted per distinct value: a run's inter-token gaps are
// millions of values taking few distinct values, so their distribution is kept as counts.
/**
 * Integer values counted per distinct value: the same distribution as the list of values, in
 * memory proportional to the distinct values only (a run's inter-token gaps number in the
 * millions but take few distinct values).
 */
export class ValueCounts {
  /** Times per value, made when a second distinct value comes (a request's gaps are often one value). */
  private timesByValue: Map<number, number> | null = null;
  private valueCount = 0;
  /** The latest run of one value, not yet in timesByValue (consecutive gaps are mostly equal). */
  private runValue = 0;
  private runTimes = 0;

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
    this.valueCount++;
    if (this.runTimes > 0 && value === this.runValue) {
      this.runTimes++;
      return;
    }
    this.endRun();
    this.runValue = value;
    this.runTimes = 1;
  }

  /** add(value), `times` times over. */
  addRepeated(value: number, times: number): void {
    if (times <= 0) return;
    this.valueCount += times;
    if (this.runTimes > 0 && value === this.runValue) {
      this.runTimes += times;
      return;
    }
    this.endRun();
    this.runValue = value;
    this.runTimes = times;
  }

  addAll(values: readonly number[]): void {
    for (const value of values) this.add(value);
  }

  /** Adds every value counted in `other`. */
  addCounts(other: ValueCounts): void {
    if (other.timesByValue !== null) for (const [value, times] of other.timesByValue) this.addTimes(value, times);
    if (other.runTimes > 0) this.addTimes(other.runValue, other.runTimes);
    this.valueCount += other.valueCount;
  }

  /** [value, times] pairs in ascending value order. */
  ascending(): [number, number][] {
    this.endRun();
    return this.timesByValue === null ? [] : [...this.timesByValue.entries()].sort((a, b) => a[0] - b[0]);
  }

  private endRun(): void {
    if (this.runTimes === 0) return;
    this.addTimes(this.runValue, this.runTimes);
    this.runTimes = 0;
  }

  /** Counts a value `times` more in the map (the caller counts them in valueCount). */
  private addTimes(value: number, times: number): void {
    const timesByValue = (this.timesByValue ??= new Map());
    timesByValue.set(value, (timesByValue.get(value) ?? 0) + times);
  }
}
