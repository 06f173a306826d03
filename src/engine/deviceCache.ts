// The G1 (GPU) KV cache of one rank (ENG-3): a fixed number of blocks; complete prompt blocks
// become reusable cache entries keyed by block id (see BlockIds); entries no request uses stay
// cached and are evicted least-recently-used when blocks are needed. Every change is reported so
// the rank can emit Device Stored / Removed events.
import { InvariantError } from '../kernel';
import type { BlockHash } from '../hash';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { grownInt32 } from '../collections/typedArrays';
import { BlockSlots, NO_SLOT as IMPORTED_NO_SLOT, SlotList } from '../collections/blockSlots';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
const NO_SLOT = IMPORTED_NO_SLOT;

export class DeviceCache {
  private readonly entries: BlockSlots;
  /** Requests using each entry, by slot. */
  private users = new Int32Array(0);
  /** Entries with no users, least recently used first. */
  private readonly idle = new SlotList();
  /** Blocks held by requests that are not cache entries (partial, output, duplicate blocks). */
  private privateBlocks = 0;
  /** The slots acquireSlots returns (reused). */
  private slotScratch = new Int32Array(64);
  /**
   * The idle entries the last acquireSlots took out of the idle list, in the order it took them, and
   * the entry each followed there: undoAcquire links them back in reverse, exactly where they were.
   */
  private takenSlots = new Int32Array(64);
  private takenAfter = new Int32Array(64);
  private taken = 0;

  constructor(
    readonly capacity_blocks: number,
    readonly prefix_caching: boolean,
    /** Told of each evicted entry's id while the cache still holds it (retain it to keep it). */
    private readonly onEvicted: (id: BlockId) => void,
    blockIds: BlockIds,
  ) {
    if (!Number.isInteger(capacity_blocks) || capacity_blocks <= 0) throw new RangeError(`num_gpu_blocks ${capacity_blocks} must be a positive integer`);
    this.entries = new BlockSlots(blockIds, blockIds.slotFamily('G1'));
  }

  get usedBlocks(): number {
    return this.privateBlocks + (this.entries.size - this.idle.size);
  }
  get cachedBlocks(): number {
    return this.entries.size;
  }
  get freeBlocks(): number {
    return this.capacity_blocks - this.privateBlocks - this.entries.size;
  }
  /** Blocks that could be had now: empty ones plus idle cache entries. */
  get obtainableBlocks(): number {
    return this.freeBlocks + this.idle.size;
  }

  has(id: BlockId): boolean {
    return this.entries.has(id);
  }

  /** Resident hashes in insertion order (for reports). */
  residentHashes(): BlockHash[] {
    return this.entries.hashes();
  }

  /** Ids of the cache entries, ascending (the router's mirror must hold the same). */
  sortedIds(): Int32Array {
    return this.entries.sortedIds();
  }

  /** Length of the longest prefix of `ids` resident in G1 (0 when prefix caching is off). */
  prefixLength(ids: ArrayLike<BlockId>): number {
    if (!this.prefix_caching) return 0;
    let length = 0;
    while (length < ids.length && this.entries.has(ids[length])) length++;
    return length;
  }

  /** A request starts using cached entries (they leave the idle list). */
  acquire(ids: ArrayLike<BlockId>): void {
    this.acquireSlots(ids);
  }

  /** acquire, returning the entries' slots (a view valid until the next call). */
  acquireSlots(ids: ArrayLike<BlockId>): Int32Array {
    if (ids.length > this.slotScratch.length) {
      const length = Math.max(ids.length, 2 * this.slotScratch.length);
      this.slotScratch = new Int32Array(length);
      this.takenSlots = new Int32Array(length);
      this.takenAfter = new Int32Array(length);
    }
    this.taken = 0;
    for (let i = 0; i < ids.length; i++) {
      const slot = this.entries.slotOf(ids[i]);
      if (slot === NO_SLOT) throw new InvariantError(`G1 acquire of block ${this.entries.blockIds.hashOf(ids[i])} that is not cached`);
      if (this.users[slot] === 0) {
        this.takenSlots[this.taken] = slot;
        this.takenAfter[this.taken++] = this.idle.before(slot);
        this.idle.remove(slot);
      }
      this.users[slot]++;
      this.slotScratch[i] = slot;
    }
    return this.slotScratch.subarray(0, ids.length);
  }

  /**
   * Takes back the last acquireSlots (given its slots), nothing else having changed the cache since:
   * a request that could not be admitted after all has not used its prefix, so each idle entry goes
   * back exactly where it was in the LRU order (as vLLM refuses an allocation before it touches the
   * prefix), not to the most recent end as a release would put it.
   */
  undoAcquire(slots: ArrayLike<number>): void {
    for (let i = 0; i < slots.length; i++) {
      if (this.users[slots[i]] <= 0) throw new InvariantError(`G1 undo of an acquire of block ${this.entries.hashAt(slots[i])} that nobody uses`);
      this.users[slots[i]]--;
    }
    for (let k = this.taken - 1; k >= 0; k--) {
      const slot = this.takenSlots[k];
      if (this.users[slot] !== 0) throw new InvariantError(`G1 undo of an acquire: block ${this.entries.hashAt(slot)} is still in use`);
      this.idle.insertAfter(slot, this.takenAfter[k]);
    }
    this.taken = 0;
  }

  /** Takes `count` empty blocks for a request, evicting idle entries LRU-first; false if impossible. */
  allocate(count: number): boolean {
    if (count > this.obtainableBlocks) return false;
    while (this.freeBlocks < count) this.evictOne();
    this.privateBlocks += count;
    this.checkCapacity();
    return true;
  }

  /**
   * A private block of a request has become a complete prompt block. It becomes a cache entry
   * (returns true: a Device Stored is due) unless an entry with that id already exists.
   */
  promote(id: BlockId): boolean {
    return this.promoteToSlot(id) !== NO_SLOT;
  }

  /** promote, returning the new entry's slot, or NO_SLOT when none was made. */
  promoteToSlot(id: BlockId): number {
    if (!this.prefix_caching) return NO_SLOT;
    const slot = this.entries.insertIfAbsent(id);
    if (slot === NO_SLOT) return NO_SLOT;
    this.privateBlocks--;
    if (slot >= this.users.length) this.users = grownInt32(this.users, slot + 1);
    this.users[slot] = 1;
    return slot;
  }

  /**
   * A private block of a request holds a block that is already a cache entry (another request
   * computed it first): the request uses that entry instead, and its private copy is freed. So the
   * parent of the blocks it stores next is an entry it holds, never evicted under it. Returns the
   * entry's slot, or NO_SLOT when there is no such entry.
   */
  adoptSlot(id: BlockId): number {
    if (!this.prefix_caching) return NO_SLOT;
    const slot = this.entries.slotOf(id);
    if (slot === NO_SLOT) return NO_SLOT;
    if (this.users[slot] === 0) this.idle.remove(slot);
    this.users[slot]++;
    this.privateBlocks--;
    return slot;
  }

  /** A request lets go of entries (tail first, so its last blocks are evicted first) and private blocks. */
  release(ids: ArrayLike<BlockId>, privateCount: number): void {
    const slots = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      slots[i] = this.entries.slotOf(ids[i]);
      if (slots[i] === NO_SLOT) throw new InvariantError(`G1 release of block ${this.entries.blockIds.hashOf(ids[i])} that the request does not use`);
    }
    this.releaseSlots(slots, privateCount);
  }

  /** release, by the entries' slots. */
  releaseSlots(slots: ArrayLike<number>, privateCount: number): void {
    for (let i = slots.length - 1; i >= 0; i--) {
      const slot = slots[i];
      if (this.users[slot] === 0 || this.entries.idAt(slot) === NO_BLOCK_ID) {
        throw new InvariantError(`G1 release of block ${this.entries.hashAt(slot)} that the request does not use`);
      }
      this.users[slot]--;
      if (this.users[slot] === 0) this.idle.pushBack(slot);
    }
    this.privateBlocks -= privateCount;
    if (this.privateBlocks < 0) throw new InvariantError(`G1 private block count went negative (${this.privateBlocks})`);
  }

  private evictOne(): void {
    const victim = this.idle.first();
    if (victim === NO_SLOT) throw new InvariantError('G1 eviction with no idle entry');
    this.idle.remove(victim);
    this.onEvicted(this.entries.idAt(victim));
    this.entries.removeAt(victim);
  }

  private checkCapacity(): void {
    if (this.privateBlocks + this.entries.size > this.capacity_blocks) {
      throw new InvariantError(`G1 over capacity: ${this.privateBlocks} private + ${this.entries.size} cached > ${this.capacity_blocks}`);
    }
  }
}
