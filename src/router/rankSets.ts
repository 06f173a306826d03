// Sets of rank indexes per block id, stored as bits: one 32-bit word per 32 ranks for each id,
// in one typed array. Most blocks are held by one or two ranks, so a word per id replaces what
// would otherwise be a Set object per block.
import type { BlockId } from '../collections/blockIds';
import { grownInt32 } from '../collections/typedArrays';

export class RankSetsByBlock {
  private wordsPerBlock = 1;
  private bits = new Int32Array(0);

  has(id: BlockId, rank: number): boolean {
    const word = rank >>> 5;
    if (word >= this.wordsPerBlock) return false;
    const index = id * this.wordsPerBlock + word;
    return index < this.bits.length && (this.bits[index] & (1 << (rank & 31))) !== 0;
  }

  /** True when no rank is in the set of `id`. */
  isEmpty(id: BlockId): boolean {
    const first = id * this.wordsPerBlock;
    if (first >= this.bits.length) return true;
    for (let word = 0; word < this.wordsPerBlock; word++) if (this.bits[first + word] !== 0) return false;
    return true;
  }

  add(id: BlockId, rank: number): void {
    this.makeRoom(id, rank);
    this.bits[id * this.wordsPerBlock + (rank >>> 5)] |= 1 << (rank & 31);
  }

  delete(id: BlockId, rank: number): void {
    if (!this.has(id, rank)) return;
    this.bits[id * this.wordsPerBlock + (rank >>> 5)] &= ~(1 << (rank & 31));
  }

  /** The ranks in the set of `id`, ascending. */
  ranks(id: BlockId): number[] {
    const ranks: number[] = [];
    this.forEachRank(id, (rank) => ranks.push(rank));
    return ranks;
  }

  /** Calls `each` with every rank in the set of `id`, ascending. */
  forEachRank(id: BlockId, each: (rank: number) => void): void {
    const first = id * this.wordsPerBlock;
    if (first >= this.bits.length) return;
    for (let word = 0; word < this.wordsPerBlock; word++) {
      let bits = this.bits[first + word];
      while (bits !== 0) {
        const lowest = bits & -bits;
        each(word * 32 + 31 - Math.clz32(lowest));
        bits ^= lowest;
      }
    }
  }

  private makeRoom(id: BlockId, rank: number): void {
    const words = (rank >>> 5) + 1;
    if (words > this.wordsPerBlock) this.widen(words);
    const needed = (id + 1) * this.wordsPerBlock;
    if (needed > this.bits.length) this.bits = grownInt32(this.bits, needed);
  }

  /** More words per id (a rank index past the last word): every id's words move. */
  private widen(words: number): void {
    const blocks = Math.ceil(this.bits.length / this.wordsPerBlock);
    const widened = new Int32Array(blocks * words);
    for (let id = 0; id < blocks; id++) {
      for (let word = 0; word < this.wordsPerBlock; word++) widened[id * words + word] = this.bits[id * this.wordsPerBlock + word];
    }
    this.bits = widened;
    this.wordsPerBlock = words;
  }
}
