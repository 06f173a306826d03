// The router's residency index: for each tier, which ranks hold each block hash, and which
// blocks each rank holds. One global map per tier, so an overlap walk looks each request block
// up once for all ranks instead of walking one tree per rank (MIR-1).
import type { BlockHash } from '../hash';

const EMPTY: ReadonlySet<number> = new Set();

export class TierIndex {
  private readonly holders = new Map<BlockHash, Set<number>>();
  private readonly perRank: Set<BlockHash>[] = [];

  /** Ranks (by index) that hold the block. */
  holdersOf(hash: BlockHash): ReadonlySet<number> {
    return this.holders.get(hash) ?? EMPTY;
  }
  has(rank: number, hash: BlockHash): boolean {
    return this.perRank[rank]?.has(hash) ?? false;
  }
  count(rank: number): number {
    return this.perRank[rank]?.size ?? 0;
  }
  /** The rank's blocks in insertion order (deterministic: events arrive in a fixed order). */
  blocksOf(rank: number): BlockHash[] {
    return [...(this.perRank[rank] ?? [])];
  }
  add(rank: number, hash: BlockHash): void {
    let mine = this.perRank[rank];
    if (!mine) {
      mine = new Set();
      this.perRank[rank] = mine;
    }
    mine.add(hash);
    let who = this.holders.get(hash);
    if (!who) {
      who = new Set();
      this.holders.set(hash, who);
    }
    who.add(rank);
  }
  remove(rank: number, hash: BlockHash): void {
    this.perRank[rank]?.delete(hash);
    const who = this.holders.get(hash);
    if (!who) return;
    who.delete(rank);
    if (who.size === 0) this.holders.delete(hash);
  }
  clearRank(rank: number): void {
    const mine = this.perRank[rank];
    if (!mine) return;
    for (const hash of mine) {
      const who = this.holders.get(hash);
      if (!who) continue;
      who.delete(rank);
      if (who.size === 0) this.holders.delete(hash);
    }
    mine.clear();
  }
}
