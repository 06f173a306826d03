// A run of block ids held in the run's table as one: a request's prompt blocks. The request holds
// it, and every event naming a stretch of it (a Device or HostPinned Stored) holds the whole run
// with one count instead of a count per id; the last to let go releases every id and hands the
// buffer they sit in back to its pool.
import type { BlockIds } from './blockIds';
import type { Int32Pool } from './typedArrays';

export class IdRun {
  private holds = 1;

  /** `buffer` (from `pool`) holds `ids`; it goes back to the pool when the run is let go, unless kept (keepBuffer). */
  constructor(
    readonly table: BlockIds,
    readonly ids: Int32Array,
    private buffer: Int32Array | null = null,
    private readonly pool: Int32Pool | null = null,
  ) {}

  /** One more holder (an event naming some of the ids). */
  hold(): void {
    if (this.holds <= 0) throw new Error('a run of block ids held again after it was let go');
    this.holds++;
  }

  /** A holder lets go; the last releases every id. */
  letGo(): void {
    if (this.holds <= 0) throw new Error('a run of block ids let go more often than held');
    if (--this.holds > 0) return;
    this.table.releaseAll(this.ids);
    if (this.buffer !== null && this.pool !== null) this.pool.give(this.buffer);
    this.buffer = null;
  }

  /** Something else still uses the buffer: it is not handed back to the pool. */
  keepBuffer(): void {
    this.buffer = null;
  }
}
