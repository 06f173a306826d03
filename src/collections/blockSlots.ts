// Numbered slots for the entries of a block store (a G1 cache, a G2 pool): which block id sits in
// which slot, the store keeping each entry's fields in typed arrays indexed by slot; and an
// intrusive doubly linked list over slots for LRU orders (O(1) append, unlink and move-to-back,
// instead of a Map delete + set per touch).
//
// Stores of one kind (every rank's G1, say) can share a SlotFamily: one word per block id naming
// the store that took the block first and its slot there. A block usually sits in one store of a
// kind (the router sends a prefix where it is cached), so most lookups read that word, next to
// the words of the prompt's other blocks, instead of probing the store's hash table; only entries
// whose block another store of the kind holds already go into the table, which stays small.
import type { BlockHash } from '../hash';
import type { BlockId, BlockIds } from './blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from './blockIds';
import { grownIdArray, grownInt32, grownNarrow, grownUint8, type NarrowInts, widenedInt32 } from './typedArrays';
import { OpenIndex } from './openIndex';
import {
  NO_OWNER as IMPORTED_NO_OWNER,
  SLOT_MASK as IMPORTED_SLOT_MASK,
  SLOT_BITS as IMPORTED_SLOT_BITS,
  TABLE_HOLDERS_STUCK as IMPORTED_TABLE_HOLDERS_STUCK,
  type SlotFamily,
} from './slotFamily';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
const NO_OWNER = IMPORTED_NO_OWNER;
const SLOT_MASK = IMPORTED_SLOT_MASK;
const SLOT_BITS = IMPORTED_SLOT_BITS;
const TABLE_HOLDERS_STUCK = IMPORTED_TABLE_HOLDERS_STUCK;

/** No slot. */
export const NO_SLOT = -1;

/** Block ids held in numbered slots; each entry retains its id in the run's BlockIds. */
export class BlockSlots {
  /** Slots by block id, for the entries the family word does not name. */
  private readonly slotById = new OpenIndex(1);
  /** The block id in each slot (NO_BLOCK_ID in a free slot). */
  private idBySlot = new Int32Array(0);
  private readonly freeSlots: number[] = [];
  private slotsIssued = 0;
  private entries = 0;
  /** This store's number in its family (0: none), shifted into place. */
  private readonly ownerBits: number;

  constructor(
    readonly blockIds: BlockIds,
    private readonly family: SlotFamily | null = null,
  ) {
    this.ownerBits = (family?.join() ?? 0) << SLOT_BITS;
  }

  get size(): number {
    return this.entries;
  }

  has(id: BlockId): boolean {
    return this.slotOf(id) !== NO_SLOT;
  }
  slotOf(id: BlockId): number {
    const family = this.family;
    if (family !== null) {
      if (this.ownerBits !== 0) {
        const owners = family.owners;
        const word = id < owners.length ? owners[id] : NO_OWNER;
        if ((word & ~SLOT_MASK) === this.ownerBits) return word & SLOT_MASK;
      }
      // No store of the kind keeps it in a table: this one does not either.
      if (id >= family.tableHolders.length || family.tableHolders[id] === 0) return NO_SLOT;
    }
    return this.slotById.find(id);
  }
  idAt(slot: number): BlockId {
    return this.idBySlot[slot];
  }
  hashAt(slot: number): BlockHash {
    return this.blockIds.hashOf(this.idBySlot[slot]);
  }
  /** Hashes of the entries in slot order. */
  hashes(): BlockHash[] {
    const hashes: BlockHash[] = [];
    for (let slot = 0; slot < this.slotsIssued; slot++) if (this.idBySlot[slot] !== NO_BLOCK_ID) hashes.push(this.hashAt(slot));
    return hashes;
  }

  /** Ids of the entries, ascending. */
  sortedIds(): Int32Array {
    const ids = new Int32Array(this.size);
    let n = 0;
    for (let slot = 0; slot < this.slotsIssued; slot++) if (this.idBySlot[slot] !== NO_BLOCK_ID) ids[n++] = this.idBySlot[slot];
    return ids.sort();
  }

  /** Puts a block in a free slot (the id must not be here yet) and returns the slot. */
  insert(id: BlockId): number {
    const slot = this.freeSlots.pop() ?? this.slotsIssued++;
    if (slot >= this.idBySlot.length) this.idBySlot = grownInt32(this.idBySlot, slot + 1);
    this.idBySlot[slot] = id;
    if (!this.claimOwner(id, slot)) {
      this.slotById.insert(slot, id);
      if (this.family !== null) this.countTableHolder(id, 1);
    }
    this.entries++;
    this.blockIds.retain(id);
    return slot;
  }

  /** Puts a block in a free slot and returns the slot, or NO_SLOT (changing nothing) when it is here already. */
  insertIfAbsent(id: BlockId): number {
    return this.has(id) ? NO_SLOT : this.insert(id);
  }

  /** Frees a slot (the entry's hold on its block id ends). */
  removeAt(slot: number): void {
    const id = this.idBySlot[slot];
    const owners = this.ownerBits === 0 ? null : this.family!.owners;
    if (owners !== null && id < owners.length && owners[id] === (this.ownerBits | slot)) owners[id] = NO_OWNER;
    else {
      this.slotById.remove(id);
      if (this.family !== null) this.countTableHolder(id, -1);
    }
    this.idBySlot[slot] = NO_BLOCK_ID;
    this.freeSlots.push(slot);
    this.entries--;
    this.blockIds.release(id);
  }

  /** One more (`change` 1) or one fewer (−1) store of the family keeps `id` in its table; a count that reached TABLE_HOLDERS_STUCK stays. */
  private countTableHolder(id: BlockId, change: 1 | -1): void {
    const family = this.family!;
    // Grown by doubling, not reserved whole as other arrays by id are: reserved, it raised the peak RSS
    // of the doubled whole-trace replay by about 35 MB (bench -- scale), grown it does not.
    if (id >= family.tableHolders.length) family.tableHolders = grownUint8(family.tableHolders, id + 1);
    const count = family.tableHolders[id];
    if (count !== TABLE_HOLDERS_STUCK) family.tableHolders[id] = count + change;
  }

  /** Names this store and slot in the family word of a block no store of the kind holds; false when it cannot. */
  private claimOwner(id: BlockId, slot: number): boolean {
    if (this.ownerBits === 0 || slot > SLOT_MASK) return false;
    const family = this.family!;
    if (id >= family.owners.length) family.owners = grownIdArray(family.owners, id + 1);
    if (family.owners[id] !== NO_OWNER) return false;
    family.owners[id] = this.ownerBits | slot;
    return true;
  }
}

/** Slots a list links in 16 bits (its links then take half the bytes); a list of more widens to 32. */
const NARROW_SLOTS = 0x8000;

/** An intrusive doubly linked list of slots, oldest first. */
export class SlotList {
  private next: NarrowInts = new Int16Array(0);
  private previous: NarrowInts = new Int16Array(0);
  private linked = new Uint8Array(0);
  private head = NO_SLOT;
  private tail = NO_SLOT;
  private length = 0;

  get size(): number {
    return this.length;
  }
  has(slot: number): boolean {
    return slot < this.linked.length && this.linked[slot] === 1;
  }
  /** The oldest slot, or NO_SLOT when empty. */
  first(): number {
    return this.head;
  }
  /** The slot after `slot`, or NO_SLOT at the end. */
  after(slot: number): number {
    return this.next[slot];
  }
  /** The slot before `slot` (in the list), or NO_SLOT at the front. */
  before(slot: number): number {
    return this.previous[slot];
  }

  /** Links a slot that is not in the list right after `before` (NO_SLOT: at the front). */
  insertAfter(slot: number, before: number): void {
    if (before === NO_SLOT ? this.head === NO_SLOT : before === this.tail) return this.pushBack(slot);
    if (slot >= this.linked.length) this.grow(slot + 1);
    const after = before === NO_SLOT ? this.head : this.next[before];
    this.linked[slot] = 1;
    this.previous[slot] = before;
    this.next[slot] = after;
    this.previous[after] = slot;
    if (before === NO_SLOT) this.head = slot;
    else this.next[before] = slot;
    this.length++;
  }

  /** Appends a slot that is not in the list. */
  pushBack(slot: number): void {
    if (slot >= this.linked.length) this.grow(slot + 1);
    this.linked[slot] = 1;
    this.previous[slot] = this.tail;
    this.next[slot] = NO_SLOT;
    if (this.tail === NO_SLOT) this.head = slot;
    else this.next[this.tail] = slot;
    this.tail = slot;
    this.length++;
  }

  /** Unlinks a slot that is in the list. */
  remove(slot: number): void {
    const before = this.previous[slot];
    const after = this.next[slot];
    if (before === NO_SLOT) this.head = after;
    else this.next[before] = after;
    if (after === NO_SLOT) this.tail = before;
    else this.previous[after] = before;
    this.linked[slot] = 0;
    this.length--;
  }

  /** Makes a slot in the list the newest. */
  moveToBack(slot: number): void {
    if (slot === this.tail) return;
    this.remove(slot);
    this.pushBack(slot);
  }

  /**
   * Makes a run of slots the newest, in its order: `first`, then each `after` up to `last` (which
   * must follow `first` in the list). The same order as moving each to the back in turn, in O(1).
   */
  moveRunToBack(first: number, last: number): void {
    if (last === this.tail) return;
    const before = this.previous[first];
    const after = this.next[last];
    if (before === NO_SLOT) this.head = after;
    else this.next[before] = after;
    this.previous[after] = before;
    this.previous[first] = this.tail;
    this.next[this.tail] = first;
    this.next[last] = NO_SLOT;
    this.tail = last;
  }

  private grow(minLength: number): void {
    if (minLength > NARROW_SLOTS) {
      this.next = widenedInt32(this.next);
      this.previous = widenedInt32(this.previous);
    }
    this.next = grownNarrow(this.next, minLength);
    this.previous = grownNarrow(this.previous, minLength);
    this.linked = grownUint8(this.linked, minLength);
  }
}
