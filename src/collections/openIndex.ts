// An open-addressing hash table from keys of one or two 32-bit words to small non-negative
// integers (a block id, a slot): every entry is one cell of an Int32Array holding its key words
// and its value, so a lookup reads one place in memory. Linear probing with backward-shift
// deletion (no tombstones), at most three quarters full. No object per entry and nothing for the garbage collector to trace,
// where a Map of a few hundred thousand entries costs tens of megabytes and re-hashes bigint keys.

const EMPTY = -1;
const INITIAL_CELLS = 16;

export class OpenIndex {
  /** Cell c holds its key words at c × stride (+1) and its value at c × stride + keyWords. */
  private cells: Int32Array;
  private readonly stride: number;
  private mask = INITIAL_CELLS - 1;
  private count = 0;

  constructor(readonly keyWords: 1 | 2) {
    this.stride = keyWords + 1;
    this.cells = emptyCells(INITIAL_CELLS, this.stride);
  }

  get size(): number {
    return this.count;
  }

  /** The value stored for the key, or -1. */
  find(key0: number, key1 = 0): number {
    return this.cells[this.cellOf(key0 | 0, key1 | 0) * this.stride + this.keyWords];
  }

  /** Stores a value (≥ 0) for a key that is not in the table yet. */
  insert(value: number, key0: number, key1 = 0): void {
    this.insertAbsent(value, key0, key1);
  }

  /**
   * Stores a value (≥ 0) for a key unless the key is there already: returns -1 when it stored it,
   * or the value already stored (and changes nothing). One probe instead of find then insert.
   */
  insertAbsent(value: number, key0: number, key1 = 0): number {
    if (4 * (this.count + 1) > 3 * (this.mask + 1)) this.resize(2 * (this.mask + 1));
    key0 |= 0;
    key1 |= 0;
    const at = this.cellOf(key0, key1) * this.stride;
    const stored = this.cells[at + this.keyWords];
    if (stored !== EMPTY) return stored;
    this.write(at, value, key0, key1);
    this.count++;
    return EMPTY;
  }

  /** Removes the key and returns its value, or -1 when it is not there. */
  remove(key0: number, key1 = 0): number {
    let hole = this.cellOf(key0 | 0, key1 | 0);
    const removed = this.cells[hole * this.stride + this.keyWords];
    if (removed === EMPTY) return EMPTY;
    // Backward shift: pull later entries of the probe run into the hole when their home allows it.
    for (let cell = (hole + 1) & this.mask; this.cells[cell * this.stride + this.keyWords] !== EMPTY; cell = (cell + 1) & this.mask) {
      const at = cell * this.stride;
      const home = this.home(this.cells[at], this.keyWords === 1 ? 0 : this.cells[at + 1]);
      if (((cell - home) & this.mask) >= ((cell - hole) & this.mask)) {
        this.cells.copyWithin(hole * this.stride, at, at + this.stride);
        hole = cell;
      }
    }
    this.cells[hole * this.stride + this.keyWords] = EMPTY;
    this.count--;
    return removed;
  }

  /**
   * Reads the key's home cell and returns what is there (meaningless to the caller). A caller about
   * to look up many keys touches them all first: the reads do not depend on each other, so their
   * cache misses overlap instead of coming one after another as the probes' do.
   */
  touch(key0: number, key1 = 0): number {
    return this.cells[this.home(key0 | 0, key1 | 0) * this.stride + this.keyWords];
  }

  private home(key0: number, key1: number): number {
    return (this.keyWords === 1 ? hashInteger(key0) : hashInteger(key0 ^ hashInteger(key1))) & this.mask;
  }

  /** The cell holding the key, or the empty cell where its probe run ends (linear probing from its home). */
  private cellOf(key0: number, key1: number): number {
    for (let cell = this.home(key0, key1); ; cell = (cell + 1) & this.mask) {
      const at = cell * this.stride;
      if (this.cells[at + this.keyWords] === EMPTY || (this.cells[at] === key0 && (this.keyWords === 1 || this.cells[at + 1] === key1))) return cell;
    }
  }

  private write(at: number, value: number, key0: number, key1: number): void {
    this.cells[at] = key0;
    if (this.keyWords === 2) this.cells[at + 1] = key1;
    this.cells[at + this.keyWords] = value;
  }

  private resize(cellCount: number): void {
    const old = this.cells;
    this.cells = emptyCells(cellCount, this.stride);
    this.mask = cellCount - 1;
    for (let at = 0; at < old.length; at += this.stride) {
      const value = old[at + this.keyWords];
      if (value === EMPTY) continue;
      const key1 = this.keyWords === 1 ? 0 : old[at + 1];
      this.write(this.cellOf(old[at], key1) * this.stride, value, old[at], key1);
    }
  }
}

function emptyCells(cellCount: number, stride: number): Int32Array {
  return new Int32Array(cellCount * stride).fill(EMPTY);
}

/** Fibonacci hashing of a 32-bit integer, spread over 32 bits. */
export function hashInteger(value: number): number {
  const mixed = Math.imul(value, 0x9e3779b1);
  return mixed ^ (mixed >>> 16);
}
