// A G2 (host memory) pool (G2-1..7, G2-10): capacity in blocks keyed by block id (see BlockIds); entries
// are pending while their D2H copy runs, then resident; LRU with touches; pinned while loaded
// back to G1. A private pool serves one rank; a shared pool serves every participating rank.
import { InvariantError } from '../kernel';
import type { BlockHash } from '../hash';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { grownNarrow, grownUint8, type NarrowInts, widenedInt32 } from '../collections/typedArrays';
import { BlockSlots, NO_SLOT as IMPORTED_NO_SLOT, SlotList } from '../collections/blockSlots';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_SLOT = IMPORTED_NO_SLOT;

/** soleLoader of an entry no load reads. */
const NO_LOADER = -1;
/** soleLoader of an entry that ranks of a shared pool load at once. */
const SEVERAL_LOADERS = -2;
/** The largest values of the 16-bit fields (pins and origins, rank indexes in soleLoader) before they widen. */
const UINT16_MAX = 0xffff;
const INT16_MAX = 0x7fff;
/** The blocks a reservation names when its caller names none. */
const NOTHING_NAMED: readonly BlockId[] = [];

export interface CohortReservation {
  /** Resident entries evicted to make room (HostPinned Removed is due for them). */
  /** Ids of the entries evicted to make room, each held once for the caller (who releases it). */
  victims: BlockId[];
  /** The slot each cohort block took (complete takes them back, with no lookup). */
  slots: Int32Array;
}

export type HostLookup =
  | { outcome: 'hit'; blocks: number }
  | { outcome: 'deferred'; blocks: number; reason: 'pending' | 'loading' };

export class HostPool {
  /** Entries by block id (see BlockIds); their fields below are indexed by slot. */
  private readonly entries: BlockSlots;
  /** 1 while the entry's D2H copy runs. */
  private pending = new Uint8Array(0);
  /** 1 while a reservation spares the entry because the store names it (see reserve); 0 otherwise. */
  private spared = new Uint8Array(0);
  /** Loads in flight from the entry (a pinned entry is never a victim); 16 bits until one needs more. */
  private pins: NarrowInts = new Uint16Array(0);
  /**
   * Which rank the entry's loads in flight (pins) are for: the rank index when they are all for one
   * rank (always, in a private pool), NO_LOADER when there is none, SEVERAL_LOADERS when ranks of a
   * shared pool load it at once (their counts are then in `loaders`). 16 bits until a rank index needs more.
   */
  private soleLoader: NarrowInts = new Int16Array(0);
  /** Loads in flight per rank index, for the slots that several ranks load at once. */
  private readonly loaders = new Map<number, Map<number, number>>();
  /**
   * Anchors by slot (holds without a load: the parent of a pending cohort, see anchor): counted in
   * `pins`, so the entry is no victim, but never as a rank's load. Counted as one, a rank that had
   * loaded the entry saw its later lookups deferred as "being loaded" while nothing loaded it (G2-6;
   * found by mutation testing).
   */
  private readonly anchors = new Map<number, number>();
  /**
   * Who stored each entry, as an index into `originNames`: the cache_id of the storing request's
   * play, or its request id. A number per slot, not a string reference: nothing for the collector
   * to trace; 16 bits until there are more names than that.
   */
  private origins: NarrowInts = new Uint16Array(0);
  /** Each distinct origin once, in the order first stored, and its index. */
  private readonly originNames: string[] = [];
  private readonly originIndex = new Map<string, number>();
  private lastOrigin: string | null = null;
  private lastOriginAt = 0;
  /** Resident entries, least recently used first. */
  private readonly lru = new SlotList();
  private pendingCount = 0;
  /** The run of entries a touch under way has met and not moved yet (see touchId). */
  private touchRunFirst = NO_SLOT;
  private touchRunLast = NO_SLOT;
  /** Cohort completions waiting for a pending parent entry, by the parent's slot. */
  private readonly waiters = new Map<number, (() => void)[]>();

  constructor(
    readonly domain_id: string,
    readonly capacity_blocks: number,
    blockIds: BlockIds,
  ) {
    if (!Number.isInteger(capacity_blocks) || capacity_blocks <= 0) throw new RangeError(`num_host_blocks ${capacity_blocks} must be a positive integer`);
    this.entries = new BlockSlots(blockIds, blockIds.slotFamily('G2'));
  }

  get residentBlocks(): number {
    return this.entries.size - this.pendingCount;
  }
  get usedBlocks(): number {
    return this.entries.size;
  }

  isResident(id: BlockId): boolean {
    const slot = this.entries.slotOf(id);
    return slot !== NO_SLOT && this.pending[slot] === 0;
  }
  contains(id: BlockId): boolean {
    return this.entries.has(id);
  }
  /** Ids of the resident entries (not those still being stored), ascending. */
  residentSortedIds(): Int32Array {
    const ids = new Int32Array(this.residentBlocks);
    let n = 0;
    for (let slot = this.lru.first(); slot !== NO_SLOT; slot = this.lru.after(slot)) if (this.pending[slot] === 0) ids[n++] = this.entries.idAt(slot);
    return ids.subarray(0, n).sort();
  }
  residentHashes(): BlockHash[] {
    const hashes: BlockHash[] = [];
    for (let slot = this.lru.first(); slot !== NO_SLOT; slot = this.lru.after(slot)) hashes.push(this.entries.hashAt(slot));
    return hashes;
  }

  /**
   * G2-6: consecutive keys from `from` (stopping at the first miss or at `limit`); deferred when any
   * counted key is still pending, or is being loaded into the same rank by another request (ranks
   * of a shared pool may read one entry concurrently, each into its own G1).
   */
  lookup(ids: ArrayLike<BlockId>, from: number, limit: number, rank_index: number): HostLookup {
    let blocks = 0;
    let blocked: 'pending' | 'loading' | null = null;
    for (let i = from; i < limit; i++) {
      const slot = this.entries.slotOf(ids[i]);
      if (slot === NO_SLOT) break;
      if (this.pending[slot] === 1) blocked ??= 'pending';
      else if (this.loadsFor(slot, rank_index) > 0) blocked ??= 'loading';
      blocks++;
    }
    return blocked === null ? { outcome: 'hit', blocks } : { outcome: 'deferred', blocks, reason: blocked };
  }

  /** Resident consecutive keys from `from` (the engine's truth, for reconciliation). */
  residentRun(ids: ArrayLike<BlockId>, from: number): number {
    let blocks = 0;
    while (from + blocks < ids.length && this.isResident(ids[from + blocks])) blocks++;
    return blocks;
  }

  /** G2-5: touches a request's resident prompt keys (the first `count`) in reverse order, so its first block is most recent. */
  touch(ids: ArrayLike<BlockId>, count = ids.length): void {
    for (let i = count - 1; i >= 0; i--) this.touchId(ids[i]);
    this.endTouch();
  }

  /**
   * touch, of ids[indexes[k]] for k from `count` − 1 down to 0 only (the caller knows the other
   * ids of the prompt are not resident): the same order as a touch of the whole prompt.
   */
  touchIndexes(ids: ArrayLike<BlockId>, indexes: ArrayLike<number>, count = indexes.length): void {
    for (let k = count - 1; k >= 0; k--) this.touchSlot(this.entries.slotOf(ids[indexes[k]]));
    this.endTouch();
  }

  /**
   * touchIndexes, given the slot each id had when slotsOf looked it up (`slots[i]` for ids[i]); an
   * entry evicted since (its slot free, or another block's) is passed over, as a lookup would.
   */
  touchIndexesAt(ids: ArrayLike<BlockId>, slots: ArrayLike<number>, indexes: ArrayLike<number>, count = indexes.length): void {
    for (let k = count - 1; k >= 0; k--) {
      const i = indexes[k];
      const slot = slots[i];
      if (slot !== NO_SLOT && this.entries.idAt(slot) === ids[i]) this.touchSlot(slot);
    }
    this.endTouch();
  }

  /** The slot of each of ids[from, to) into slots[from, to) (NO_SLOT where the pool holds no entry): one lookup per block for a caller that reads it several times. */
  slotsOf(ids: ArrayLike<BlockId>, from: number, to: number, slots: Int32Array): void {
    for (let i = from; i < to; i++) slots[i] = this.entries.slotOf(ids[i]);
  }

  /**
   * One id of a touch. Entries are moved as runs: resident entries a touch meets one after another
   * that already follow each other in the LRU order (a cohort completed together, a prompt touched
   * before) go to the back in one splice (at the next entry that does not follow, or at endTouch);
   * the order is the one moving each entry in turn gives.
   */
  private touchId(id: BlockId): void {
    this.touchSlot(this.entries.slotOf(id));
  }

  /** touchId, given the entry's slot (NO_SLOT: none). */
  private touchSlot(slot: number): void {
    const lru = this.lru;
    if (slot === NO_SLOT || !lru.has(slot)) return;
    if (this.touchRunLast !== NO_SLOT && lru.after(this.touchRunLast) === slot) {
      this.touchRunLast = slot;
      return;
    }
    if (this.touchRunFirst !== NO_SLOT) lru.moveRunToBack(this.touchRunFirst, this.touchRunLast);
    this.touchRunFirst = slot;
    this.touchRunLast = slot;
  }

  private endTouch(): void {
    if (this.touchRunFirst !== NO_SLOT) this.lru.moveRunToBack(this.touchRunFirst, this.touchRunLast);
    this.touchRunFirst = NO_SLOT;
    this.touchRunLast = NO_SLOT;
  }

  /** Keys of `ids` that are neither resident nor pending. */
  missing(ids: readonly BlockId[]): BlockId[] {
    return ids.filter((id) => !this.entries.has(id));
  }

  /**
   * G2-2: reserves room for a cohort atomically, evicting LRU resident unpinned entries. The blocks
   * the store names (`named`, [namedFrom, namedTo): the request's blocks it covers, those already in
   * the pool included) are held while room is made, so a store never evicts part of the prefix it
   * extends (as vLLM's CPU offloading manager protects every key a store names). Returns null (and
   * changes nothing) when there are not enough victims; a cohort larger than the pool never fits.
   */
  reserve(cohort: ArrayLike<BlockId>, origin = '', named: ArrayLike<BlockId> = NOTHING_NAMED, namedFrom = 0, namedTo = 0): CohortReservation | null {
    const namedSlots: number[] = [];
    for (let i = namedFrom; i < namedTo; i++) {
      const slot = this.entries.slotOf(named[i]);
      if (slot !== NO_SLOT) namedSlots.push(slot);
    }
    return this.reserveSparing(cohort, origin, namedSlots, namedSlots.length);
  }

  /**
   * reserve, with the entries the store names given by their slots (spared[0, sparedCount), each
   * an entry of the pool): a caller that has looked its blocks up does not look them up again.
   */
  reserveSparing(cohort: ArrayLike<BlockId>, origin: string, spared: ArrayLike<number>, sparedCount: number): CohortReservation | null {
    if (cohort.length === 0 || cohort.length > this.capacity_blocks) return null;
    const shortfall = cohort.length - (this.capacity_blocks - this.entries.size);
    let victimSlots: number[] = [];
    if (shortfall > 0) {
      victimSlots = this.victimsSparing(shortfall, spared, sparedCount);
      if (victimSlots.length < shortfall) return null;
    }
    const victims: BlockId[] = [];
    for (const slot of victimSlots) {
      this.lru.remove(slot);
      const id = this.entries.idAt(slot);
      this.entries.blockIds.retain(id);
      victims.push(id);
      this.entries.removeAt(slot);
    }
    const slots = new Int32Array(cohort.length);
    const originAt = this.originAt(origin);
    for (let i = 0; i < cohort.length; i++) {
      const id = cohort[i];
      const slot = this.entries.insertIfAbsent(id);
      slots[i] = slot;
      if (slot === NO_SLOT) throw new InvariantError(`G2 ${this.domain_id}: cohort block ${this.entries.blockIds.hashOf(id)} is already in the pool`);
      if (slot >= this.pins.length) this.growFields(slot + 1);
      this.pending[slot] = 1;
      this.pins[slot] = 0;
      this.origins[slot] = originAt;
    }
    this.pendingCount += cohort.length;
    this.checkCapacity();
    return { victims, slots };
  }

  /** Up to `count` LRU-first resident entries that are neither pinned nor in spared[0, sparedCount) (slots). */
  private victimsSparing(count: number, spared: ArrayLike<number>, sparedCount: number): number[] {
    for (let i = 0; i < sparedCount; i++) this.spared[spared[i]] = 1;
    const victimSlots: number[] = [];
    for (let slot = this.lru.first(); slot !== NO_SLOT && victimSlots.length < count; slot = this.lru.after(slot)) {
      if (this.pins[slot] === 0 && this.spared[slot] === 0) victimSlots.push(slot);
    }
    for (let i = 0; i < sparedCount; i++) this.spared[spared[i]] = 0;
    return victimSlots;
  }

  /**
   * G2-3/G2-5: the D2H copy finished; the cohort becomes resident and is touched as one unit, in
   * reverse prompt order like a lookup, so its first block (the parent of the others) is the most
   * recent and children are evicted before their parents.
   */
  complete(cohort: ArrayLike<BlockId>, slots: ArrayLike<number> | null = null): void {
    for (let i = cohort.length - 1; i >= 0; i--) {
      const slot = slots !== null && this.entries.idAt(slots[i]) === cohort[i] ? slots[i] : this.entries.slotOf(cohort[i]);
      if (slot === NO_SLOT || this.pending[slot] === 0) {
        throw new InvariantError(`G2 ${this.domain_id}: completing block ${this.entries.blockIds.hashOf(cohort[i])} that is not pending`);
      }
      this.pending[slot] = 0;
      this.lru.pushBack(slot);
    }
    this.pendingCount -= cohort.length;
  }

  isPending(id: BlockId): boolean {
    const slot = this.entries.slotOf(id);
    return slot !== NO_SLOT && this.pending[slot] === 1;
  }

  /**
   * Holds an entry (pending or resident) in the pool without a load: the parent of a pending
   * cohort's run is anchored so it is still there when the run's Stored names it (HostPinned chain).
   */
  anchor(id: BlockId): void {
    const slot = this.entries.slotOf(id);
    if (slot === NO_SLOT) throw new InvariantError(`G2 ${this.domain_id}: anchoring block ${this.entries.blockIds.hashOf(id)} that is not in the pool`);
    this.anchors.set(slot, this.anchoredAt(slot) + 1);
    this.addPin(slot);
  }

  private anchoredAt(slot: number): number {
    return this.anchors.size === 0 ? 0 : (this.anchors.get(slot) ?? 0);
  }

  unanchor(id: BlockId): void {
    const slot = this.entries.slotOf(id);
    const anchored = slot === NO_SLOT ? 0 : this.anchoredAt(slot);
    if (anchored === 0) throw new InvariantError(`G2 ${this.domain_id}: unanchoring block ${this.entries.blockIds.hashOf(id)} that is not held`);
    if (anchored === 1) this.anchors.delete(slot);
    else this.anchors.set(slot, anchored - 1);
    this.pins[slot]--;
  }

  /** Calls `then` once the pending entry `id` has completed and its Stored has gone out (see releaseWaiters). */
  whenComplete(id: BlockId, then: () => void): void {
    const slot = this.entries.slotOf(id);
    if (slot === NO_SLOT || this.pending[slot] === 0) throw new InvariantError(`G2 ${this.domain_id}: waiting on block ${this.entries.blockIds.hashOf(id)} that is not pending`);
    const waiting = this.waiters.get(slot);
    if (waiting) waiting.push(then);
    else this.waiters.set(slot, [then]);
  }

  /** Runs what waited on these (now complete) entries, in the order it started waiting. */
  releaseWaiters(cohort: ArrayLike<BlockId>): void {
    if (this.waiters.size === 0) return;
    for (let i = 0; i < cohort.length; i++) {
      const slot = this.entries.slotOf(cohort[i]);
      const waiting = slot === NO_SLOT ? undefined : this.waiters.get(slot);
      if (!waiting) continue;
      this.waiters.delete(slot);
      for (const then of waiting) then();
    }
  }

  /** Who stored these entries (sorted, distinct). */
  originsOf(ids: ArrayLike<BlockId>): string[] {
    const origins = new Set<string>();
    for (let i = 0; i < ids.length; i++) {
      const slot = this.entries.slotOf(ids[i]);
      if (slot !== NO_SLOT) origins.add(this.originNames[this.origins[slot]]);
    }
    return [...origins].sort();
  }

  /** A load into `rank_index` starts: the entries are pinned until it ends. */
  pin(ids: ArrayLike<BlockId>, rank_index: number): void {
    for (let i = 0; i < ids.length; i++) {
      const slot = this.entries.slotOf(ids[i]);
      if (slot === NO_SLOT || this.pending[slot] === 1) {
        throw new InvariantError(`G2 ${this.domain_id}: pinning block ${this.entries.blockIds.hashOf(ids[i])} that is not resident`);
      }
      const sole = this.soleLoader[slot];
      if (rank_index > INT16_MAX) this.soleLoader = widenedInt32(this.soleLoader);
      const loads = this.pins[slot] - this.anchoredAt(slot);
      if (loads === 0) this.soleLoader[slot] = rank_index;
      else if (sole === SEVERAL_LOADERS) {
        const loaders = this.loaders.get(slot)!;
        loaders.set(rank_index, (loaders.get(rank_index) ?? 0) + 1);
      } else if (sole !== rank_index) {
        this.loaders.set(slot, new Map([[sole, loads], [rank_index, 1]]));
        this.soleLoader[slot] = SEVERAL_LOADERS;
      }
      this.addPin(slot);
    }
  }

  unpin(ids: ArrayLike<BlockId>, rank_index: number): void {
    for (let i = 0; i < ids.length; i++) {
      const slot = this.entries.slotOf(ids[i]);
      const mine = slot === NO_SLOT ? 0 : this.loadsFor(slot, rank_index);
      if (mine === 0) {
        throw new InvariantError(`G2 ${this.domain_id}: unpinning block ${this.entries.blockIds.hashOf(ids[i])} that rank ${rank_index} is not loading`);
      }
      this.pins[slot]--;
      if (this.pins[slot] === this.anchoredAt(slot)) this.soleLoader[slot] = NO_LOADER;
      else if (this.soleLoader[slot] === SEVERAL_LOADERS) this.unpinShared(slot, rank_index, mine);
    }
  }

  /** Loads in flight from the entry in `slot` for one rank. */
  private loadsFor(slot: number, rank_index: number): number {
    const sole = this.soleLoader[slot];
    if (sole === SEVERAL_LOADERS) return this.loaders.get(slot)!.get(rank_index) ?? 0;
    return sole === rank_index ? this.pins[slot] - this.anchoredAt(slot) : 0;
  }

  /** One load fewer for a rank, on an entry several ranks load: back to one counter when one rank is left. */
  private unpinShared(slot: number, rank_index: number, mine: number): void {
    const loaders = this.loaders.get(slot)!;
    if (mine > 1) loaders.set(rank_index, mine - 1);
    else loaders.delete(rank_index);
    if (loaders.size > 1) return;
    this.soleLoader[slot] = loaders.keys().next().value!;
    this.loaders.delete(slot);
  }

  /** One more pin on the entry in `slot` (its field widened first when 16 bits hold no more). */
  private addPin(slot: number): void {
    if (this.pins[slot] === UINT16_MAX) this.pins = widenedInt32(this.pins);
    this.pins[slot]++;
  }

  private growFields(minLength: number): void {
    this.pins = grownNarrow(this.pins, minLength);
    const known = this.soleLoader.length;
    this.soleLoader = grownNarrow(this.soleLoader, minLength);
    this.soleLoader.fill(NO_LOADER, known);
    this.pending = grownUint8(this.pending, minLength);
    this.spared = grownUint8(this.spared, minLength);
    this.origins = grownNarrow(this.origins, minLength);
  }

  /** The index of an origin's name, added when it is new (a request's cohorts come one after another: its index is kept). */
  private originAt(origin: string): number {
    if (origin === this.lastOrigin) return this.lastOriginAt;
    let at = this.originIndex.get(origin);
    if (at === undefined) {
      at = this.originNames.length;
      if (at > UINT16_MAX) this.origins = widenedInt32(this.origins);
      this.originNames.push(origin);
      this.originIndex.set(origin, at);
    }
    this.lastOrigin = origin;
    this.lastOriginAt = at;
    return at;
  }

  private checkCapacity(): void {
    if (this.entries.size > this.capacity_blocks) {
      throw new InvariantError(`G2 ${this.domain_id} over capacity: ${this.entries.size} > ${this.capacity_blocks}`);
    }
  }
}
