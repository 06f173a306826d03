// Sets of rank indexes per block id. Most blocks are held by one rank, so each id has one 32-bit
// cell: the rank itself when one rank holds it, or a row of a bit matrix (one bit per rank) when
// several do; rows are made when a second rank joins and given back when one rank is left. Memory
// grows with the ids plus the shared blocks × ranks / 8 bytes, not with ids × ranks (a 256-rank
// cluster would otherwise spend 32 bytes per block id and per index).
import type { BlockId } from '../collections/blockIds';
import { grownIdArray, grownInt32 } from '../collections/typedArrays';

/** The cell of an id no rank holds: zero, so that cells never written need no filling (see grownIdArray). */
const NOBODY = 0;

export class RankSetsByBlock {
  /** Per id: NOBODY, rank + 1 (≥ 1) for the one rank holding it, or −(row + 1) for the row of bits that holds its ranks. */
  private cells = new Int32Array(0);
  private wordsPerRow = 1;
  private rows = new Int32Array(0);
  private rowsIssued = 0;
  private readonly freeRows: number[] = [];

  has(id: BlockId, rank: number): boolean {
    if (id >= this.cells.length) return false;
    const cell = this.cells[id];
    if (cell > 0) return cell === rank + 1;
    if (cell === NOBODY) return false;
    const word = rank >>> 5;
    return word < this.wordsPerRow && (this.rows[(-cell - 1) * this.wordsPerRow + word] & (1 << (rank & 31))) !== 0;
  }

  /** True when no rank is in the set of `id`. */
  isEmpty(id: BlockId): boolean {
    return id >= this.cells.length || this.cells[id] === NOBODY;
  }

  add(id: BlockId, rank: number): void {
    if (id >= this.cells.length) this.growCells(id + 1);
    if ((rank >>> 5) >= this.wordsPerRow) this.widen((rank >>> 5) + 1);
    const cell = this.cells[id];
    if (cell === NOBODY) {
      this.cells[id] = rank + 1;
      return;
    }
    if (cell === rank + 1) return;
    if (cell > 0) {
      const row = this.takeRow();
      this.setBit(row, cell - 1);
      this.setBit(row, rank);
      this.cells[id] = -row - 1;
      return;
    }
    this.setBit(-cell - 1, rank);
  }

  delete(id: BlockId, rank: number): void {
    if (!this.has(id, rank)) return;
    const cell = this.cells[id];
    if (cell > 0) {
      this.cells[id] = NOBODY;
      return;
    }
    const row = -cell - 1;
    const at = row * this.wordsPerRow;
    this.rows[at + (rank >>> 5)] &= ~(1 << (rank & 31));
    // One rank left: it goes back into the cell and the row is given back.
    let remaining = -1;
    let count = 0;
    for (let word = 0; word < this.wordsPerRow && count < 2; word++) {
      const bits = this.rows[at + word];
      if (bits === 0) continue;
      count += (bits & (bits - 1)) === 0 ? 1 : 2;
      remaining = word * 32 + 31 - Math.clz32(bits & -bits);
    }
    if (count === 1) {
      this.cells[id] = remaining + 1;
      this.freeRows.push(row);
    }
  }

  /** The ranks in the set of `id`, ascending. */
  ranks(id: BlockId): number[] {
    const ranks: number[] = [];
    this.forEachRank(id, (rank) => ranks.push(rank));
    return ranks;
  }

  /** Calls `each` with every rank in the set of `id`, ascending. */
  forEachRank(id: BlockId, each: (rank: number) => void): void {
    if (id >= this.cells.length) return;
    const cell = this.cells[id];
    if (cell > 0) {
      each(cell - 1);
      return;
    }
    if (cell === NOBODY) return;
    const at = (-cell - 1) * this.wordsPerRow;
    for (let word = 0; word < this.wordsPerRow; word++) {
      let bits = this.rows[at + word];
      while (bits !== 0) {
        const lowest = bits & -bits;
        each(word * 32 + 31 - Math.clz32(lowest));
        bits ^= lowest;
      }
    }
  }

  private setBit(row: number, rank: number): void {
    this.rows[row * this.wordsPerRow + (rank >>> 5)] |= 1 << (rank & 31);
  }

  /** A row with no bit set. */
  private takeRow(): number {
    const reused = this.freeRows.pop();
    if (reused !== undefined) {
      this.rows.fill(0, reused * this.wordsPerRow, (reused + 1) * this.wordsPerRow);
      return reused;
    }
    const row = this.rowsIssued++;
    if ((row + 1) * this.wordsPerRow > this.rows.length) this.rows = grownInt32(this.rows, (row + 1) * this.wordsPerRow);
    return row;
  }

  private growCells(minLength: number): void {
    this.cells = grownIdArray(this.cells, minLength);
  }

  /** More words per row (a rank index past the last word): every row's words move. */
  private widen(words: number): void {
    const widened = new Int32Array(Math.max(this.rowsIssued, 1) * words);
    for (let row = 0; row < this.rowsIssued; row++) {
      for (let word = 0; word < this.wordsPerRow; word++) widened[row * words + word] = this.rows[row * this.wordsPerRow + word];
    }
    this.rows = widened;
    this.wordsPerRow = words;
  }
}
