// Block ids: dense small integers standing for 64-bit block hashes inside one run. Internal
// structures (G1 caches, G2 pools, the router's residency index and load tracker) key by id,
// because a Map lookup by bigint re-hashes the bigint every time while an id indexes an array.
// Events, the wire format and reports keep the bigint hashes. Every holder of an id (a request,
// a cache entry, a pool entry, a mirror entry, an active request on the router) retains it and
// releases it when done; an id nobody holds is forgotten and reused, so the table stays as small
// as what is live. Ids never leak into results: which number a hash gets changes nothing.
import type { BlockHash } from '../hash';
import { toU64 } from '../hash';
import { OpenIndex } from './openIndex';
import { grownIdArray } from './typedArrays';
import { SlotFamily } from './slotFamily';

/** A block id: an index into arrays sized by BlockIds.capacity. */
export type BlockId = number;

/** No id: the hash is not in the table. */
export const NO_BLOCK_ID = -1;

const INITIAL_CAPACITY = 1024;

const U64_LIMIT = 1n << 64n;
/** The two 32-bit halves of the hash being looked up, at LOW and HIGH (platform byte order). */
const queryWords = new Int32Array(2);
const queryU64 = new BigUint64Array(queryWords.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** Writes the two 32-bit words of a u64 hash into queryWords. */
function splitHash(hash: BlockHash): void {
  if (hash < 0n || hash >= U64_LIMIT) throw new RangeError(`block hash ${hash} is not an unsigned 64-bit integer`);
  queryU64[0] = hash;
}

export class BlockIds {
  /** The two 32-bit words (low, high) of each id's hash; the bigint is made only when asked for. */
  private hashWords = new Int32Array(2 * INITIAL_CAPACITY);
  /** Ids issued so far (ids are below this). */
  private issued = 0;
  /** Ids by the two 32-bit words of their hash (compared as numbers, never as bigints). */
  private readonly idByHash = new OpenIndex(2);
  private references = new Int32Array(INITIAL_CAPACITY);
  /** Ids released by everyone, reused last-released first. */
  private readonly freeIds: BlockId[] = [];
  /** The slot families of the run's block stores, by kind (see SlotFamily). */
  private readonly families = new Map<string, SlotFamily>();

  /** What the last touching pass read (nothing else reads it): stored, so that the compiler keeps the reads. */
  touched = 0;

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
    return this.idByHash.size;
  }
  /** One more than the highest id ever issued: arrays indexed by id need this length. */
  get capacity(): number {
    return this.issued;
  }

  /** The id of a hash, or NO_BLOCK_ID when no one holds it. */
  idOf(hash: BlockHash): BlockId {
    splitHash(hash);
    return this.idByHash.find(queryWords[LOW], queryWords[HIGH]);
  }

  /** The hash an id stands for (a new bigint); the id must be held. */
  hashOf(id: BlockId): BlockHash {
    return toU64(this.hashWords[2 * id], this.hashWords[2 * id + 1]);
  }

  /** The id of a hash, issued if new, retained once for the caller. */
  acquire(hash: BlockHash): BlockId {
    splitHash(hash);
    return this.acquireWords(queryWords[LOW], queryWords[HIGH]);
  }

  /**
   * acquireWords for every block of `words` (its low and high hash words at i × stride and
   * i × stride + 1), into ids[i]. The table's cells are touched first (see OpenIndex.touch): a
   * prompt's blocks sit in cells all over a table larger than the cache.
   */
  acquireAllWords(words: Int32Array, stride: number, ids: Int32Array): void {
    let touched = 0;
    for (let at = 0; at < words.length; at += stride) touched ^= this.idByHash.touch(words[at], words[at + 1]);
    this.touched = touched;
    for (let i = 0, at = 0; at < words.length; i++, at += stride) ids[i] = this.acquireWords(words[at], words[at + 1]);
  }

  /** acquire for the hash (high << 32) | low given as 32-bit words; the bigint is made only for a new id. */
  acquireWords(low: number, high: number): BlockId {
    // One probe: the id a new hash would get is stored unless the hash is there already.
    const candidate = this.freeIds.length > 0 ? this.freeIds[this.freeIds.length - 1] : this.issued;
    const existing = this.idByHash.insertAbsent(candidate, low, high);
    if (existing !== NO_BLOCK_ID) {
      this.references[existing]++;
      return existing;
    }
    if (candidate === this.issued) this.issued++;
    else this.freeIds.pop();
    this.record(candidate, low, high);
    return candidate;
  }

  /** Stores a new id's hash words and its first reference. */
  private record(id: BlockId, low: number, high: number): void {
    if (2 * id + 1 >= this.hashWords.length) this.hashWords = grownIdArray(this.hashWords, 2 * id + 2);
    this.hashWords[2 * id] = low;
    this.hashWords[2 * id + 1] = high;
    if (id >= this.references.length) this.references = grownIdArray(this.references, id + 1);
    this.references[id] = 1;
  }

  /** Ids of hashes, looked up only (NO_BLOCK_ID for hashes no one holds). */
  lookupAll(hashes: readonly BlockHash[]): Int32Array {
    const ids = new Int32Array(hashes.length);
    for (let i = 0; i < hashes.length; i++) ids[i] = this.idOf(hashes[i]);
    return ids;
  }

  /** One more holder of an id already held. */
  retain(id: BlockId): void {
    this.references[id]++;
  }

  retainAll(ids: ArrayLike<BlockId>): void {
    for (let i = 0; i < ids.length; i++) this.references[ids[i]]++;
  }

  /** A holder lets go; the last one frees the id for reuse. */
  release(id: BlockId): void {
    const left = --this.references[id];
    if (left > 0) return;
    if (left < 0) throw new Error(`block id ${id} released more often than retained`);
    this.idByHash.remove(this.hashWords[2 * id], this.hashWords[2 * id + 1]);
    this.freeIds.push(id);
  }

  releaseAll(ids: ArrayLike<BlockId>): void {
    for (let i = 0; i < ids.length; i++) this.release(ids[i]);
  }
}
