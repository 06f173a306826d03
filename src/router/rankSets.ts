// Sets of rank indexes per block id. Most blocks are held by one rank, so each id has one 32-bit
// cell: the rank itself when one rank holds it, or a row of a bit matrix (one bit per rank) when
// several do; rows are made when a second rank joins and given back when one rank is left. Memory
// grows with the ids plus the shared blocks × ranks / 8 bytes, not with ids × ranks (a 256-rank
// cluster would otherwise spend 32 bytes per block id and per index).
//
// The cells may sit in words by block id that other structures share (IdWords): `stride` words per
// id, the cell at `offset`, so that what is read together for one block (the mirror's two tiers,
// the block's position and parent) is one cache line.
import type { BlockId } from '../collections/blockIds';
import { grownIdArray, grownInt32 } from '../collections/typedArrays';

/** Words by block id, `stride` per id, shared by the structures that each keep some of them (zero: nothing there; see grownIdArray). */
export class IdWords {
  words: Int32Array = new Int32Array(0);
  constructor(readonly stride: number) {}

  /** Makes room for the words of `id`. */
  fit(id: BlockId): void {
    if ((id + 1) * this.stride > this.words.length) this.words = grownIdArray(this.words, (id + 1) * this.stride);
  }
}

/** The cell of an id no rank holds: zero, so that cells never written need no filling (see grownIdArray). */
const NOBODY = 0;

export class RankSetsByBlock {
  private readonly stride: number;
  /**
   * `cells`: per id, at stride × id + offset, NOBODY, rank + 1 (≥ 1) for the one rank holding it, or
   * −(row + 1) for the row of bits that holds its ranks (words of its own unless given).
   */
  constructor(
    private readonly cells: IdWords = new IdWords(1),
    private readonly offset = 0,
  ) {
    this.stride = cells.stride;
  }
  private wordsPerRow = 1;
  private rows = new Int32Array(0);
  private rowsIssued = 0;
  private readonly freeRows: number[] = [];

  has(id: BlockId, rank: number): boolean {
    const at = id * this.stride + this.offset;
    const words = this.cells.words;
    if (at >= words.length) return false;
    const cell = words[at];
    if (cell > 0) return cell === rank + 1;
    if (cell === NOBODY) return false;
    const word = rank >>> 5;
    return word < this.wordsPerRow && (this.rows[(-cell - 1) * this.wordsPerRow + word] & (1 << (rank & 31))) !== 0;
  }

  /** True when no rank is in the set of `id`. */
  isEmpty(id: BlockId): boolean {
    const at = id * this.stride + this.offset;
    return at >= this.cells.words.length || this.cells.words[at] === NOBODY;
  }

  add(id: BlockId, rank: number): void {
    const at = id * this.stride + this.offset;
    if (at >= this.cells.words.length) this.cells.fit(id);
    if ((rank >>> 5) >= this.wordsPerRow) this.widen((rank >>> 5) + 1);
    const words = this.cells.words;
    const cell = words[at];
    if (cell === NOBODY) {
      words[at] = rank + 1;
      return;
    }
    if (cell === rank + 1) return;
    if (cell > 0) {
      const row = this.takeRow();
      this.setBit(row, cell - 1);
      this.setBit(row, rank);
      words[at] = -row - 1;
      return;
    }
    this.setBit(-cell - 1, rank);
  }

  delete(id: BlockId, rank: number): void {
    if (!this.has(id, rank)) return;
    const words = this.cells.words;
    const at = id * this.stride + this.offset;
    const cell = words[at];
    if (cell > 0) {
      words[at] = NOBODY;
      return;
    }
    const row = -cell - 1;
    const rowAt = row * this.wordsPerRow;
    this.rows[rowAt + (rank >>> 5)] &= ~(1 << (rank & 31));
    // One rank left: it goes back into the cell and the row is given back.
    let remaining = -1;
    let count = 0;
    for (let word = 0; word < this.wordsPerRow && count < 2; word++) {
      const bits = this.rows[rowAt + word];
      if (bits === 0) continue;
      count += (bits & (bits - 1)) === 0 ? 1 : 2;
      remaining = word * 32 + 31 - Math.clz32(bits & -bits);
    }
    if (count === 1) {
      words[at] = remaining + 1;
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
    const at = id * this.stride + this.offset;
    if (at >= this.cells.words.length) return;
    const cell = this.cells.words[at];
    if (cell > 0) {
      each(cell - 1);
      return;
    }
    if (cell === NOBODY) return;
    const rowAt = (-cell - 1) * this.wordsPerRow;
    for (let word = 0; word < this.wordsPerRow; word++) {
      let bits = this.rows[rowAt + word];
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
