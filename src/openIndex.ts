// An open-addressing hash index: finds a small non-negative integer (a block id, a slot) by the
// key it stands for, with every entry one cell of an Int32Array (linear probing, backward-shift
// deletion, so no tombstones). No object per entry and nothing for the garbage collector to
// trace, where a Map of a few hundred thousand entries costs tens of megabytes. A subclass says
// how keys and stored values hash and whether a stored value stands for a key.

const EMPTY = -1;
const INITIAL_CELLS = 16;

export abstract class OpenIndex<K> {
  private cells = new Int32Array(INITIAL_CELLS).fill(EMPTY);
  private mask = INITIAL_CELLS - 1;
  private count = 0;

  /** A 32-bit hash of a key; called first in every lookup, before `matches` for that key. */
  protected abstract hashKey(key: K): number;
  /** Whether a stored value stands for the key last given to hashKey. */
  protected abstract matches(value: number, key: K): boolean;
  /** The hash of the key a stored value stands for (equal to hashKey of that key). */
  protected abstract hashValue(value: number): number;

  get size(): number {
    return this.count;
  }

  /** The value stored for `key`, or -1. */
  find(key: K): number {
    for (let cell = this.hashKey(key) & this.mask; ; cell = (cell + 1) & this.mask) {
      const value = this.cells[cell];
      if (value === EMPTY || this.matches(value, key)) return value;
    }
  }

  /** Stores a value (≥ 0) whose key is not in the index yet. */
  insert(value: number): void {
    if (2 * (this.count + 1) > this.cells.length) this.resize(2 * this.cells.length);
    this.place(value);
    this.count++;
  }

  /** Removes the value stored for `key` and returns it, or -1 when there is none. */
  remove(key: K): number {
    let hole = this.hashKey(key) & this.mask;
    while (this.cells[hole] !== EMPTY && !this.matches(this.cells[hole], key)) hole = (hole + 1) & this.mask;
    const removed = this.cells[hole];
    if (removed === EMPTY) return EMPTY;
    // Backward shift: pull later entries of the probe run into the hole when their home allows it.
    for (let cell = (hole + 1) & this.mask; this.cells[cell] !== EMPTY; cell = (cell + 1) & this.mask) {
      const home = this.hashValue(this.cells[cell]) & this.mask;
      if (((cell - home) & this.mask) >= ((cell - hole) & this.mask)) {
        this.cells[hole] = this.cells[cell];
        hole = cell;
      }
    }
    this.cells[hole] = EMPTY;
    this.count--;
    return removed;
  }

  private place(value: number): void {
    let cell = this.hashValue(value) & this.mask;
    while (this.cells[cell] !== EMPTY) cell = (cell + 1) & this.mask;
    this.cells[cell] = value;
  }

  private resize(cellCount: number): void {
    const old = this.cells;
    this.cells = new Int32Array(cellCount).fill(EMPTY);
    this.mask = cellCount - 1;
    for (const value of old) if (value !== EMPTY) this.place(value);
  }
}

/** Fibonacci hashing of a small integer, spread over 32 bits. */
export function hashInteger(value: number): number {
  const mixed = Math.imul(value, 0x9e3779b1);
  return mixed ^ (mixed >>> 16);
}
