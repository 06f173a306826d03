// Block ids: dense small integers standing for 64-bit block hashes inside one run. Internal
// structures (G1 caches, G2 pools, the router's residency index and load tracker) key by id,
// because a Map lookup by bigint re-hashes the bigint every time while an id indexes an array.
// Events, the wire format and reports keep the bigint hashes. Every holder of an id (a request,
// a cache entry, a pool entry, a mirror entry, an active request on the router) retains it and
// releases it when done; an id nobody holds is forgotten and reused, so the table stays as small
// as what is live. Ids never leak into results: which number a hash gets changes nothing.
import type { BlockHash } from './hash';
import { toU64 } from './hash';
import { OpenIndex, hashInteger } from './openIndex';

/** A block id: an index into arrays sized by BlockIds.capacity. */
export type BlockId = number;

/** No id: the hash is not in the table. */
export const NO_BLOCK_ID = -1;

const INITIAL_CAPACITY = 1024;

const U64_LIMIT = 1n << 64n;
/** The two 32-bit halves of the hash being looked up: [low, high]. */
const queryWords = new Int32Array(2);
const queryU64 = new BigUint64Array(queryWords.buffer);

/** A lookup key meaning "the words already in queryWords". */
const WORDS_KEY = null;

function hashWords(low: number, high: number): number {
  return hashInteger(low ^ hashInteger(high));
}

/**
 * Ids by the hash they stand for. The hash of each id is also kept as two 32-bit words, so a
 * lookup compares numbers instead of reading bigints.
 */
class IdsByHash extends OpenIndex<BlockHash | typeof WORDS_KEY> {
  /** [low, high] words of the hash of each id. */
  words = new Int32Array(0);

  protected hashKey(hash: BlockHash | typeof WORDS_KEY): number {
    if (hash === WORDS_KEY) return hashWords(queryWords[0], queryWords[1]);
    if (hash < 0n || hash >= U64_LIMIT) throw new RangeError(`block hash ${hash} is not an unsigned 64-bit integer`);
    queryU64[0] = hash;
    return hashWords(queryWords[0], queryWords[1]);
  }
  /** The id of the hash with these words, or NO_BLOCK_ID (no bigint involved). */
  findWords(low: number, high: number): BlockId {
    queryWords[0] = low;
    queryWords[1] = high;
    return this.find(WORDS_KEY);
  }
  protected matches(id: BlockId): boolean {
    return this.words[2 * id] === queryWords[0] && this.words[2 * id + 1] === queryWords[1];
  }
  protected hashValue(id: BlockId): number {
    return hashWords(this.words[2 * id], this.words[2 * id + 1]);
  }

  /** Records the words of a new id's hash (before it is inserted). */
  describe(id: BlockId, low: number, high: number): void {
    if (2 * id + 2 > this.words.length) this.words = grownInt32(this.words, 2 * id + 2);
    this.words[2 * id] = low;
    this.words[2 * id + 1] = high;
  }
}

export class BlockIds {
  private readonly hashById: (BlockHash | undefined)[] = [];
  private readonly idByHash = new IdsByHash();
  private references = new Int32Array(INITIAL_CAPACITY);
  /** Ids released by everyone, reused last-released first. */
  private readonly freeIds: BlockId[] = [];

  /** Ids live now. */
  get size(): number {
    return this.idByHash.size;
  }
  /** One more than the highest id ever issued: arrays indexed by id need this length. */
  get capacity(): number {
    return this.hashById.length;
  }

  /** The id of a hash, or NO_BLOCK_ID when no one holds it. */
  idOf(hash: BlockHash): BlockId {
    return this.idByHash.find(hash);
  }

  /** The hash an id stands for; the id must be held. */
  hashOf(id: BlockId): BlockHash {
    return this.hashById[id]!;
  }

  /** The id of a hash, issued if new, retained once for the caller. */
  acquire(hash: BlockHash): BlockId {
    const id = this.idByHash.find(hash);
    if (id !== NO_BLOCK_ID) {
      this.references[id]++;
      return id;
    }
    return this.issue(hash, queryWords[0], queryWords[1]);
  }

  /** acquire for the hash (high << 32) | low given as 32-bit words; the bigint is made only for a new id. */
  acquireWords(low: number, high: number): BlockId {
    const id = this.idByHash.findWords(low, high);
    if (id !== NO_BLOCK_ID) {
      this.references[id]++;
      return id;
    }
    return this.issue(toU64(low, high), low, high);
  }

  private issue(hash: BlockHash, low: number, high: number): BlockId {
    const id = this.freeIds.pop() ?? this.hashById.length;
    if (id === this.hashById.length) this.hashById.push(hash);
    else this.hashById[id] = hash;
    if (id >= this.references.length) this.references = grownInt32(this.references, id + 1);
    this.idByHash.describe(id, low, high);
    this.idByHash.insert(id);
    this.references[id] = 1;
    return id;
  }

  /** Ids of hashes, each acquired. */
  acquireAll(hashes: readonly BlockHash[]): Int32Array {
    const ids = new Int32Array(hashes.length);
    for (let i = 0; i < hashes.length; i++) ids[i] = this.acquire(hashes[i]);
    return ids;
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

  /** A holder lets go; the last one frees the id for reuse. */
  release(id: BlockId): void {
    const left = --this.references[id];
    if (left > 0) return;
    if (left < 0) throw new Error(`block id ${id} released more often than retained`);
    this.idByHash.remove(this.hashById[id]!);
    this.hashById[id] = undefined;
    this.freeIds.push(id);
  }

  releaseAll(ids: ArrayLike<BlockId>): void {
    for (let i = 0; i < ids.length; i++) this.release(ids[i]);
  }
}

/** A copy of `array` at least `minLength` long (doubling), zero-filled beyond the old length. */
export function grownInt32(array: Int32Array, minLength: number): Int32Array<ArrayBuffer> {
  let length = Math.max(array.length, 16);
  while (length < minLength) length *= 2;
  const grown = new Int32Array(length);
  grown.set(array);
  return grown;
}
