// G2 write-through of one rank (G2-2..4): after each pass, the complete prompt blocks a request
// computed that its G2 pool lacks form one store cohort; room is reserved (evicting, with a
// HostPinned Removed to every rank that sees the pool), the D2H copy is submitted, and when it
// completes the cohort becomes resident and its HostPinned Stored events go out, one
// parent-linked event per contiguous run.
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_SLOT as IMPORTED_NO_SLOT } from '../collections/blockSlots';
import { RemovedIds, StoredIds } from '../events/model';
import type { RankRef } from '../events/model';
import type { SimRequest } from './request';
import type { HostDomain } from './rankInterfaces';
import type { RankOutbox } from './rankOutbox';
// Read per block: copied into this module once (every read of an imported binding is a getter call, esbuild's live bindings).
const NO_SLOT = IMPORTED_NO_SLOT;

/** What the write-through needs of its rank. */
export interface HostWriterRank {
  readonly rank_index: number;
  readonly rank: RankRef;
  readonly block_size: number;
  readonly block_bytes: number;
  readonly outbox: RankOutbox;
  /** A Stored of prompt blocks [from, to) of a request (see storedData in rankBlocks.ts). */
  storedData(request: SimRequest, from: number, to: number): StoredIds;
  /** A D2H copy of the request's blocks starts, and ends (its held blocks may go with the last). */
  copyStarted(request: SimRequest): void;
  copyDone(request: SimRequest): void;
}

export class HostWriter {
  /** Pool slots of a prompt's blocks while a write-through reads them (reused). */
  private slots = new Int32Array(64);
  /**
   * Scratch of one write-through, by the prompt's complete blocks: the indexes of the cohort's
   * blocks, the pool slots of the store's blocks the pool holds already, the indexes of the prompt's
   * blocks the pool holds. Reused: lists made anew for every prefill chunk's write-through (each
   * as long as the prompt so far) were about a quarter of a replay's allocations.
   */
  private cohortIndexes = new Int32Array(64);
  private namedSlots = new Int32Array(64);
  private heldIndexes = new Int32Array(64);

  constructor(
    private readonly rank: HostWriterRank,
    private readonly host: HostDomain,
    private readonly blockIds: BlockIds,
  ) {}

  /**
   * G2-2..4: the complete prompt blocks computed so far that G2 lacks form one store cohort. The
   * cohort reaches back over evicted blocks just before the new ones, so that every contiguous run
   * of it has its parent in G2; its HostPinned Stored goes out as one parent-linked event per run.
   * The store names the blocks from where the request's stores stopped (or from where the cohort
   * reaches back) to the last complete one; none of those G2 holds already is evicted to make room.
   */
  writeThrough(request: SimRequest): void {
    const complete = Math.min(Math.floor(request.computed_tokens / this.rank.block_size), request.blockCount);
    if (complete <= request.write_through_blocks) return;
    const pool = this.host.pool;
    const ids = request.block_ids;
    // Each block is looked up in the pool once (its slot, or NO_SLOT); what follows reads the slots.
    const slots = this.slotsFor(complete);
    let firstIndex = request.write_through_blocks;
    pool.slotsOf(ids, firstIndex, complete, slots);
    while (firstIndex > 0) {
      pool.slotsOf(ids, firstIndex - 1, firstIndex, slots);
      if (slots[firstIndex - 1] !== NO_SLOT) break;
      firstIndex--;
    }
    this.fitScratch(complete);
    const cohortIndexes = this.cohortIndexes;
    // The blocks of the store the pool holds already.
    const namedSlots = this.namedSlots;
    let cohortSize = 0;
    let namedCount = 0;
    for (let i = firstIndex; i < complete; i++) {
      if (slots[i] !== NO_SLOT) namedSlots[namedCount++] = slots[i];
      else cohortIndexes[cohortSize++] = i;
    }
    if (cohortSize === 0) {
      request.write_through_blocks = complete;
      return;
    }
    // The blocks of the prompt the pool holds: those before the store, and those of it the pool holds already.
    pool.slotsOf(ids, 0, firstIndex, slots);
    const heldIndexes = this.heldIndexes;
    let heldCount = 0;
    for (let i = 0; i < complete; i++) if (slots[i] !== NO_SLOT) heldIndexes[heldCount++] = i;
    const cohort = new Int32Array(cohortSize);
    for (let n = 0; n < cohortSize; n++) cohort[n] = ids[cohortIndexes[n]];
    // The parent of each run is in the pool now; anchored, it stays there until the run's Stored is out.
    const parents: BlockId[] = [];
    for (let n = 0; n < cohortSize; n++) {
      const index = cohortIndexes[n];
      if (index > 0 && (n === 0 || cohortIndexes[n - 1] !== index - 1)) parents.push(ids[index - 1]);
    }
    for (const parent of parents) pool.anchor(parent);
    // Every block the store names that G2 holds already is spared while room is made.
    const reservation = pool.reserveSparing(cohort, request.identity.cache_id ?? request.request_id, namedSlots, namedCount);
    if (!reservation) {
      for (const parent of parents) pool.unanchor(parent);
      return;
    }
    request.write_through_blocks = complete;
    // As vLLM's offloading connector (and AISimulate) do once a store is prepared, the request's
    // resident keys so far are touched, last to first, so its first block is the most recent (the
    // cohort's blocks are pending, not resident: only the others are looked up).
    pool.touchIndexesAt(ids, slots, heldIndexes, heldCount);
    if (reservation.victims.length > 0) this.announceEvictions(Int32Array.from(reservation.victims));
    // The Stored events are described now (holding their blocks): the request may have finished when the copy completes.
    const runs = this.hostRuns(request, cohortIndexes, cohortSize);
    const host = this.host;
    const completeCohort = (): void => {
      // A parent still pending (a shared pool may finish copies out of order) goes out first.
      const pendingParent = parents.find((parent) => pool.isPending(parent));
      if (pendingParent !== undefined) {
        pool.whenComplete(pendingParent, completeCohort);
        return;
      }
      pool.complete(cohort, reservation.slots);
      for (const parent of parents) pool.unanchor(parent);
      for (const subscriber of host.subscribers) {
        subscriber.emitNow(runs.map((run) => subscriber.events.numbered('HostPinned', run.copy())));
        subscriber.kick();
      }
      for (const run of runs) run.release();
      pool.releaseWaiters(cohort);
    };
    const rank = this.rank;
    rank.copyStarted(request);
    host.transfers.submit({
      direction: 'd2h',
      rank_index: rank.rank_index,
      worker_id: rank.rank.worker_id,
      dp_rank: rank.rank.dp_rank,
      bytes: cohort.length * rank.block_bytes,
      blocks: cohort.length,
      request_id: request.request_id,
      onComplete: () => {
        completeCohort();
        rank.copyDone(request);
      },
    });
  }

  /** The scratch of a write-through (cohortIndexes, namedSlots, heldIndexes), with room for `count` blocks each. */
  private fitScratch(count: number): void {
    if (count <= this.cohortIndexes.length) return;
    const length = Math.max(count, 2 * this.cohortIndexes.length);
    this.cohortIndexes = new Int32Array(length);
    this.namedSlots = new Int32Array(length);
    this.heldIndexes = new Int32Array(length);
  }

  /** The slots scratch, with room for `count` blocks. */
  private slotsFor(count: number): Int32Array {
    if (count > this.slots.length) this.slots = new Int32Array(Math.max(count, 2 * this.slots.length));
    return this.slots;
  }

  /**
   * A HostPinned Removed of the victims to every rank that sees the pool. The reservation holds
   * each victim once: the first subscriber's event takes those holds, and every event holds the
   * victims before any is emitted (an event emitted at once may be delivered, and let go of its
   * holds, before the next subscriber's is made).
   */
  private announceEvictions(victims: Int32Array): void {
    const subscribers = this.host.subscribers;
    const removals = subscribers.map((_, n) => (n === 0 ? RemovedIds.takingHolds(this.blockIds, victims) : new RemovedIds(this.blockIds, victims)));
    subscribers.forEach((subscriber, n) => {
      const data = removals[n];
      if (subscriber.rank_index === this.rank.rank_index) this.rank.outbox.add('HostPinned', data);
      else subscriber.emitNow([subscriber.events.numbered('HostPinned', data)]);
    });
    if (subscribers.length === 0) this.blockIds.releaseAll(victims);
  }

  /** The contiguous runs of a cohort (the first `count` of `indexes`: prompt block indexes in order), each a Stored with its parent and start position. */
  private hostRuns(request: SimRequest, indexes: ArrayLike<number>, count: number): StoredIds[] {
    const runs: StoredIds[] = [];
    for (let n = 0; n < count; ) {
      let end = n + 1;
      while (end < count && indexes[end] === indexes[end - 1] + 1) end++;
      runs.push(this.rank.storedData(request, indexes[n], indexes[end - 1] + 1));
      n = end;
    }
    return runs;
  }
}
