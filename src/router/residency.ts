// The router's residency index: for each tier, which ranks hold each block, and which blocks
// each rank holds. One index per tier over all ranks, so an overlap walk looks each request block
// up once for all ranks instead of walking one tree per rank (MIR-1). Keyed by block id (see
// BlockIds); the methods taking a BlockHash are for callers that only have hashes.
import type { BlockHash } from '../hash';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { IdWords, RankSetsByBlock } from './rankSets';
import { InvariantError } from '../kernel';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;

export class TierIndex {
  private readonly holders: RankSetsByBlock;
  /** How many blocks each rank holds. */
  private readonly heldCount: number[] = [];
  /** Told of a block no rank holds in this tier any more (before the index lets go of its id). */
  onUnheld: ((id: BlockId) => void) | null = null;

  /** `words`, `offset`: where each block's cell of holders sits, in words by id shared with other structures (its own otherwise; see RankSetsByBlock). */
  constructor(
    private readonly blockIds: BlockIds,
    words: IdWords = new IdWords(1),
    offset = 0,
  ) {
    this.holders = new RankSetsByBlock(words, offset);
  }

  /** Ranks (by index, ascending) that hold the block. */
  holdersOf(hash: BlockHash): ReadonlySet<number> {
    const id = this.blockIds.idOf(hash);
    return new Set(id === NO_BLOCK_ID ? [] : this.holders.ranks(id));
  }
  has(rank: number, hash: BlockHash): boolean {
    const id = this.blockIds.idOf(hash);
    return id !== NO_BLOCK_ID && this.holders.has(id, rank);
  }
  /** Whether the rank holds the block (NO_BLOCK_ID: a block no one holds). */
  holdsId(rank: number, id: BlockId): boolean {
    return id !== NO_BLOCK_ID && this.holders.has(id, rank);
  }
  /** Whether no rank holds the block. */
  unheldId(id: BlockId): boolean {
    return id === NO_BLOCK_ID || this.holders.isEmpty(id);
  }
  count(rank: number): number {
    return this.heldCount[rank] ?? 0;
  }
  /** The rank's blocks in ascending hash order (for inspection; it walks every block id). */
  blocksOf(rank: number): BlockHash[] {
    return this.idsOf(rank)
      .map((id) => this.blockIds.hashOf(id))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
  add(rank: number, hash: BlockHash): void {
    const id = this.blockIds.acquire(hash);
    this.addId(rank, id);
    this.blockIds.release(id);
  }
  remove(rank: number, hash: BlockHash): void {
    const id = this.blockIds.idOf(hash);
    if (id !== NO_BLOCK_ID) this.removeId(rank, id);
  }
  /** The rank now holds a block (the id must be held by the caller; the index retains its own). */
  addId(rank: number, id: BlockId): void {
    if (this.holders.has(id, rank)) return;
    this.heldCount[rank] = this.count(rank) + 1;
    this.holders.add(id, rank);
    this.blockIds.retain(id);
  }
  removeId(rank: number, id: BlockId): void {
    if (!this.holders.has(id, rank)) return;
    this.heldCount[rank]--;
    this.holders.delete(id, rank);
    if (this.onUnheld !== null && this.holders.isEmpty(id)) this.onUnheld(id);
    this.blockIds.release(id);
  }
  /**
   * Checks each rank's count against the blocks the index holds for it, in one walk over the block
   * ids (ranks from `rankCount` on are not checked); an InvariantError names the first that differs.
   */
  checkCounts(rankCount: number): void {
    const held = new Int32Array(rankCount);
    const note = (rank: number) => {
      if (rank < rankCount) held[rank]++;
    };
    for (let id = 0; id < this.blockIds.capacity; id++) this.holders.forEachRank(id, note);
    for (let rank = 0; rank < rankCount; rank++) {
      if (held[rank] !== this.count(rank)) throw new InvariantError(`the residency index counts ${this.count(rank)} blocks on rank ${rank} but holds ${held[rank]}`);
    }
  }
  /** Forgets every block of a rank (it walks every block id: ranks are cleared rarely). */
  clearRank(rank: number): void {
    for (const id of this.idsOf(rank)) this.removeId(rank, id);
  }

  private idsOf(rank: number): BlockId[] {
    const ids: BlockId[] = [];
    const held = this.count(rank);
    // The walk stops at the rank's last block: a Cleared of a rank holding a few low ids need not read the whole table.
    for (let id = 0; id < this.blockIds.capacity && ids.length < held; id++) if (this.holders.has(id, rank)) ids.push(id);
    return ids;
  }
}
