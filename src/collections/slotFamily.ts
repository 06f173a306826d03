// Words shared by the block stores of one kind (every rank's G1, every rank's G2), one per block
// id: which store took the block first, and its slot there (see BlockSlots). Kept by the run's
// BlockIds, one family per kind.
/** Bits of a family word for the slot; the store's number takes the bits above. */
export const SLOT_BITS = 19;
export const SLOT_MASK = (1 << SLOT_BITS) - 1;
/** The highest store number a family word can hold (stores past it use their table only). */
const MAX_FAMILY_STORE = (1 << (31 - SLOT_BITS)) - 1;
/** A family word for no store. */
export const NO_OWNER = 0;
/**
 * A table-holder count that stays once reached, even after the id is reused (it is then read as
 * "look in the table", as every lookup did before the count): a byte per block id keeps the arrays small.
 */
export const TABLE_HOLDERS_STUCK = 0xff;

/** Stores of one kind sharing one word per block id: the first store (numbered from 1) holding it and its slot there. */
export class SlotFamily {
  /** By block id: (store << SLOT_BITS) | slot, or NO_OWNER. */
  owners = new Int32Array(0);
  /**
   * By block id: how many stores of the kind keep the block in their own table (not named by its
   * word), up to TABLE_HOLDERS_STUCK. A store that does not own a block looks in its table only
   * when this is not zero: most blocks are in one store of a kind or none, and a probe of a large
   * table is a cache miss.
   */
  tableHolders = new Uint8Array(0);
  private stores = 0;

  /** A number for a new store of this kind (0: too many stores, the store keeps every entry in its table). */
  join(): number {
    this.stores++;
    return this.stores <= MAX_FAMILY_STORE ? this.stores : 0;
  }
}
