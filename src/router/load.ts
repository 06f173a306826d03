// The router's own view of load per rank (SCORE-2): uncomputed prefill tokens and active blocks
// of the requests it placed, updated by placement, prefill-complete feedback and completion.
// Blocks are a prompt's complete blocks, counted by block id (see BlockIds). Each active request
// holds its blocks' ids while it is active: the request's held run of ids with one count when it
// comes with one (a cluster's requests), else each id; its active blocks keep no holds of their own.
import type { BlockHash } from '../hash';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { grownInt32, Int32Pool } from '../collections/typedArrays';
import { BlockSlots, NO_SLOT as IMPORTED_NO_SLOT } from '../collections/blockSlots';
import { RankSetsByBlock } from './rankSets';
import type { IdRun } from '../collections/idRun';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
const NO_SLOT = IMPORTED_NO_SLOT;

interface ActiveRequest {
  rank: number;
  prefill_tokens: number;
  /** Where each of its blocks is counted in its rank's active blocks. */
  slots: Int32Array;
  /** The held run of its ids the tracker holds once, or null when it holds each id (see LoadTracker.add). */
  run: IdRun | null;
}

export class LoadTracker {
  private readonly prefillTokens: number[] = [];
  /** Ranks on which at least one active request uses each block. */
  private readonly activeRanks = new RankSetsByBlock();
  /** Per rank: its active blocks, and how many active requests on that rank use each (by slot). */
  private readonly activeByRank: { blocks: BlockSlots; users: Int32Array }[] = [];
  private readonly requests = new Map<string, ActiveRequest>();
  /** Slot arrays of freed requests, reused by later ones of the same length. */
  private readonly slotArrays = new Int32Pool();

  constructor(private readonly blockIds: BlockIds) {}

  activePrefillTokens(rank: number): number {
    return this.prefillTokens[rank] ?? 0;
  }
  activeBlocks(rank: number): number {
    return this.activeByRank[rank]?.blocks.size ?? 0;
  }
  isActive(request_id: string): boolean {
    return this.requests.has(request_id);
  }
  rankOf(request_id: string): number | undefined {
    return this.requests.get(request_id)?.rank;
  }

  /** Adds to `hits` (by rank index, zeroed by the caller) how many of these blocks are already active on each rank (NO_BLOCK_ID: nowhere). */
  activeHits(ids: ArrayLike<BlockId>, hits: Int32Array): Int32Array {
    const rankCount = hits.length;
    const tally = (rank: number) => {
      if (rank < rankCount) hits[rank]++;
    };
    for (let i = 0; i < ids.length; i++) if (ids[i] !== NO_BLOCK_ID) this.activeRanks.forEachRank(ids[i], tally);
    return hits;
  }

  /** `ids[i]` is the id of the request's block i, or NO_BLOCK_ID when the table does not have it yet (its hash is then read). */
  add(request_id: string, rank: number, prefill_tokens: number, request: { readonly block_hashes: readonly BlockHash[]; readonly held_ids?: IdRun }, ids: ArrayLike<BlockId>): void {
    if (this.requests.has(request_id)) throw new Error(`request ${request_id} is already active on the router`);
    const active = (this.activeByRank[rank] ??= { blocks: new BlockSlots(this.blockIds, this.blockIds.slotFamily('active'), false), users: new Int32Array(0) });
    const slots = this.slotArrays.take(ids.length);
    // The request's blocks are held while it is active: its run with one count, or each id (acquired if new).
    const run = request.held_ids ?? null;
    if (run !== null) run.hold();
    for (let i = 0; i < ids.length; i++) {
      const known = ids[i] !== NO_BLOCK_ID;
      const id = known ? ids[i] : this.blockIds.acquire(request.block_hashes[i]);
      if (known && run === null) this.blockIds.retain(id);
      let slot = this.activeRanks.has(id, rank) ? active.blocks.slotOf(id) : NO_SLOT;
      if (slot === NO_SLOT) {
        slot = active.blocks.insert(id);
        if (slot >= active.users.length) active.users = grownInt32(active.users, slot + 1);
        this.activeRanks.add(id, rank);
      }
      active.users[slot]++;
      slots[i] = slot;
    }
    this.requests.set(request_id, { rank, prefill_tokens, slots, run });
    this.prefillTokens[rank] = this.activePrefillTokens(rank) + prefill_tokens;
  }

  prefillComplete(request_id: string): void {
    const request = this.requests.get(request_id);
    if (!request) return;
    this.prefillTokens[request.rank] -= request.prefill_tokens;
    request.prefill_tokens = 0;
  }

  free(request_id: string): void {
    const request = this.requests.get(request_id);
    if (!request) return;
    this.prefillComplete(request_id);
    const active = this.activeByRank[request.rank];
    const slots = request.slots;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      const last = --active.users[slot] === 0;
      if (!last && request.run !== null) continue;
      const id = active.blocks.idAt(slot);
      if (last) {
        this.activeRanks.delete(id, request.rank);
        active.blocks.removeAt(slot);
      }
      if (request.run === null) this.blockIds.release(id);
    }
    request.run?.letGo();
    this.requests.delete(request_id);
    this.slotArrays.give(slots);
  }

  /** Forgets every request on a rank (its worker was removed). */
  dropRank(rank: number): void {
    const gone = [...this.requests.entries()].filter(([, request]) => request.rank === rank).map(([id]) => id);
    for (const id of gone) this.free(id);
  }
}
