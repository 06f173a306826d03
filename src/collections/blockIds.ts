// Block ids: dense small integers standing for 64-bit block hashes inside one run. Internal
// structures (G1 caches, G2 pools, the router's residency index and load tracker) key by id,
// because a Map lookup by bigint re-hashes the bigint every time while an id indexes an array.
// Events, the wire format and reports keep the bigint hashes. Every holder of an id (a request,
// a cache entry, a pool entry, a mirror entry, an active request on the router) retains it and
// releases it when done; an id nobody holds is forgotten and reused, so the table stays as small
// as what is live. Ids never leak into results: which number a hash gets changes nothing.
import type { BlockHash } from '../hash';
import { toU64 } from '../hash';
import { hashInteger as importedHashInteger } from './openIndex';
import { grownIdArray, zeroedIdArray } from './typedArrays';
import { SlotFamily } from './slotFamily';

// Read per probe: copied into this module once (run through tsx, every read of an imported binding
// is a getter call, esbuild's live bindings).
const hashInteger = importedHashInteger;

/** A block id: an index into arrays sized by BlockIds.capacity. */
export type BlockId = number;

/** No id: the hash is not in the table. */
export const NO_BLOCK_ID = -1;

const INITIAL_CAPACITY = 1024;
/** Words per id in BlockIds.idWords: its hash's low and high 32-bit words, then its reference count. */
const ID_STRIDE = 3;
const LOW_WORD = 0;
const HIGH_WORD = 1;
const REFERENCES = 2;
/** Cells of the table from hashes to ids at first (a power of two). */
const INITIAL_CELLS = 1024;
/** A cell holds id + 1 in its second word; 0 is a free cell, so a new table needs no filling. */
const EMPTY_CELL = 0;

const U64_LIMIT = 1n << 64n;

/**
 * What a cell keeps of a hash beside its id, and where its probe run starts from: the low word mixed
 * with the high one. With the low word alone, hashes alike in their low 32 bits (a crafted event
 * log: 150,000 of them) all started at one cell and every lookup walked the run (93 s for a 7 MB
 * log). The high word is compared in idWords, and with it the key gives back the low word, so a
 * key and a high word match one hash only.
 */
function cellKey(low: number, high: number): number {
  return (low ^ Math.imul(high, 0x9e3779b1)) | 0;
}
/** The two 32-bit halves of the hash being looked up, at LOW and HIGH (platform byte order). */
const queryWords = new Int32Array(2);
const queryU64 = new BigUint64Array(queryWords.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** `cellCount` free cells for the table of hashes to ids, made as arrays by id are (see zeroedIdArray). */
function tableCells(cellCount: number): Int32Array {
  return zeroedIdArray(2 * cellCount).subarray(0, 2 * cellCount);
}

/** Writes the two 32-bit words of a u64 hash into queryWords. */
function splitHash(hash: BlockHash): void {
  if (hash < 0n || hash >= U64_LIMIT) throw new RangeError(`block hash ${hash} is not an unsigned 64-bit integer`);
  queryU64[0] = hash;
}

export class BlockIds {
  /**
   * Per id, side by side at ID_STRIDE × id: the two 32-bit words (low, high) of its hash (the bigint
   * is made only when asked for) and its reference count. Side by side because a lookup that finds
   * an id checks its high word and counts a reference in one cache line, and freeing an id reads
   * its count and its hash.
   */
  private idWords = new Int32Array(ID_STRIDE * INITIAL_CAPACITY);
  /** Ids issued so far (ids are below this). */
  private issued = 0;
  /**
   * The table from hashes to ids: open addressing with linear probing from the home of the hash's
   * cell key (cellKey), backward-shift deletion, at most three quarters full. Each cell holds the cell key and
   * id + 1 (EMPTY_CELL when free); the high word is compared in idWords, so a cell is 8 bytes. A
   * large table is made as the arrays by id are (see tableCells), and grows in place (see resize). Its own table, not an OpenIndex:
   * an OpenIndex cell holds its whole key (12 bytes for a hash and its id), while here half the key
   * is already kept per id and is read in the cache line a found id's count needs anyway.
   */
  private cells = tableCells(INITIAL_CELLS);
  private mask = INITIAL_CELLS - 1;
  private live = 0;
  /** Ids released by everyone, reused last-released first. */
  private readonly freeIds: BlockId[] = [];
  /** The slot families of the run's block stores, by kind (see SlotFamily). */
  private readonly families = new Map<string, SlotFamily>();

  /** What the last touching pass read (nothing else reads it): stored, so that the compiler keeps the reads. */
  touched = 0;
  /** Told of each hash the table forgets (its id's last holder let go), as its low and high words. */
  onForget: ((low: number, high: number) => void) | null = null;

  /** The slot family shared by the run's block stores of one kind (made on first use). */
  slotFamily(kind: string): SlotFamily {
    let family = this.families.get(kind);
    if (family === undefined) {
      family = new SlotFamily();
      this.families.set(kind, family);
    }
    return family;
  }

  /** Ids live now. */
  get size(): number {
    return this.live;
  }
  /** One more than the highest id ever issued: arrays indexed by id need this length. */
  get capacity(): number {
    return this.issued;
  }

  /** The id of a hash, or NO_BLOCK_ID when no one holds it. */
  idOf(hash: BlockHash): BlockId {
    splitHash(hash);
    // A free cell holds EMPTY_CELL (0): 0 − 1 is NO_BLOCK_ID.
    return this.cells[2 * this.cellOf(queryWords[LOW], queryWords[HIGH]) + 1] - 1;
  }

  /** The hash an id stands for (a new bigint); the id must be held. */
  hashOf(id: BlockId): BlockHash {
    const at = ID_STRIDE * id;
    return toU64(this.idWords[at + LOW_WORD], this.idWords[at + HIGH_WORD]);
  }

  /** The id of a hash, issued if new, retained once for the caller. */
  acquire(hash: BlockHash): BlockId {
    splitHash(hash);
    return this.acquireWords(queryWords[LOW], queryWords[HIGH]);
  }

  /**
   * acquireWords for every block of `words` (its low and high hash words at i × stride and
   * i × stride + 1), into ids[i]. Each block's home cell is read first: a prompt's blocks sit in
   * cells all over a table larger than the cache, and reads that do not depend on each other let
   * their cache misses overlap, where the probes' come one after another.
   */
  acquireAllWords(words: Int32Array, stride: number, ids: Int32Array): void {
    let touched = 0;
    for (let at = 0; at < words.length; at += stride) touched ^= this.cells[2 * this.home(cellKey(words[at], words[at + 1])) + 1];
    this.touched = touched;
    for (let i = 0, at = 0; at < words.length; i++, at += stride) ids[i] = this.acquireWords(words[at], words[at + 1]);
  }

  /** acquire for the hash (high << 32) | low given as 32-bit words; the bigint is made only for a new id. */
  acquireWords(low: number, high: number): BlockId {
    low |= 0;
    high |= 0;
    if (4 * (this.live + 1) > 3 * (this.mask + 1)) this.resize(2 * (this.mask + 1));
    // One probe: the hash's id when it is there, else the free cell where it goes.
    const cell = this.cellOf(low, high);
    const stored = this.cells[2 * cell + 1];
    if (stored !== EMPTY_CELL) {
      this.idWords[ID_STRIDE * (stored - 1) + REFERENCES]++;
      return stored - 1;
    }
    const id = this.freeIds.length > 0 ? this.freeIds.pop()! : this.issued++;
    this.cells[2 * cell] = cellKey(low, high);
    this.cells[2 * cell + 1] = id + 1;
    this.live++;
    this.record(id, low, high);
    return id;
  }

  /** Stores a new id's hash words and its first reference. */
  private record(id: BlockId, low: number, high: number): void {
    const at = ID_STRIDE * id;
    if (at + ID_STRIDE > this.idWords.length) this.idWords = grownIdArray(this.idWords, at + ID_STRIDE);
    this.idWords[at + LOW_WORD] = low;
    this.idWords[at + HIGH_WORD] = high;
    this.idWords[at + REFERENCES] = 1;
  }

  /** Ids of hashes, looked up only (NO_BLOCK_ID for hashes no one holds). */
  lookupAll(hashes: readonly BlockHash[]): Int32Array {
    const ids = new Int32Array(hashes.length);
    for (let i = 0; i < hashes.length; i++) ids[i] = this.idOf(hashes[i]);
    return ids;
  }

  /** How many holders an id has now. */
  holders(id: BlockId): number {
    return this.idWords[ID_STRIDE * id + REFERENCES];
  }

  /** One more holder of an id already held. */
  retain(id: BlockId): void {
    this.idWords[ID_STRIDE * id + REFERENCES]++;
  }

  retainAll(ids: ArrayLike<BlockId>): void {
    for (let i = 0; i < ids.length; i++) this.idWords[ID_STRIDE * ids[i] + REFERENCES]++;
  }

  /** A holder lets go; the last one frees the id for reuse. */
  release(id: BlockId): void {
    const at = ID_STRIDE * id;
    const left = --this.idWords[at + REFERENCES];
    if (left > 0) return;
    if (left < 0) throw new Error(`block id ${id} released more often than retained`);
    if (this.onForget !== null) this.onForget(this.idWords[at + LOW_WORD], this.idWords[at + HIGH_WORD]);
    this.removeCell(cellKey(this.idWords[at + LOW_WORD], this.idWords[at + HIGH_WORD]), id);
    this.freeIds.push(id);
  }

  /** The cell holding the hash (low, high), or the free cell where its probe run ends. */
  private cellOf(low: number, high: number): number {
    const key = cellKey(low, high);
    for (let cell = this.home(key); ; cell = (cell + 1) & this.mask) {
      const stored = this.cells[2 * cell + 1];
      if (stored === EMPTY_CELL || (this.cells[2 * cell] === key && this.idWords[ID_STRIDE * (stored - 1) + HIGH_WORD] === high)) return cell;
    }
  }

  /** The home cell of a hash's cell key (see cellKey): where its probe run starts. */
  private home(key: number): number {
    return hashInteger(key) & this.mask;
  }

  /** Empties the cell of `id` (its hash's cell key `key`), pulling later cells of its probe run back (no tombstones). */
  private removeCell(key: number, id: BlockId): void {
    let hole = this.home(key);
    while (this.cells[2 * hole + 1] !== id + 1) {
      if (this.cells[2 * hole + 1] === EMPTY_CELL) throw new Error(`block id ${id} is not in the table of hashes`);
      hole = (hole + 1) & this.mask;
    }
    for (let cell = (hole + 1) & this.mask; this.cells[2 * cell + 1] !== EMPTY_CELL; cell = (cell + 1) & this.mask) {
      const home = this.home(this.cells[2 * cell]);
      if (((cell - home) & this.mask) >= ((cell - hole) & this.mask)) {
        this.cells[2 * hole] = this.cells[2 * cell];
        this.cells[2 * hole + 1] = this.cells[2 * cell + 1];
        hole = cell;
      }
    }
    this.cells[2 * hole + 1] = EMPTY_CELL;
    this.live--;
  }

  /**
   * The table in `cellCount` cells (a power of two), every live id (one with holders) at the first
   * free cell from its home, put back from its hash words in idWords. A large table grows where it
   * is while the reservation it was made in has room (see tableCells): its cells are emptied and
   * the longer table starts at the same place, its tail never written. A table made anew left the
   * one it outgrew resident until the collector freed it (8 MB when the whole trace's table
   * outgrows 8 MB on 64 workers, late in the replay).
   */
  private resize(cellCount: number): void {
    const old = this.cells;
    if (old.byteOffset === 0 && old.buffer.byteLength >= 2 * cellCount * Int32Array.BYTES_PER_ELEMENT) {
      old.fill(EMPTY_CELL);
      this.cells = new Int32Array(old.buffer, 0, 2 * cellCount);
    } else {
      this.cells = tableCells(cellCount);
    }
    this.mask = cellCount - 1;
    const words = this.idWords;
    for (let id = 0, at = 0; id < this.issued; id++, at += ID_STRIDE) {
      if (words[at + REFERENCES] === 0) continue;
      const key = cellKey(words[at + LOW_WORD], words[at + HIGH_WORD]);
      let cell = this.home(key);
      while (this.cells[2 * cell + 1] !== EMPTY_CELL) cell = (cell + 1) & this.mask;
      this.cells[2 * cell] = key;
      this.cells[2 * cell + 1] = id + 1;
    }
  }

  releaseAll(ids: ArrayLike<BlockId>): void {
    for (let i = 0; i < ids.length; i++) this.release(ids[i]);
  }
}
