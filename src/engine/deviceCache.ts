// The G1 (GPU) KV cache of one rank (ENG-3): a fixed number of blocks; complete prompt blocks
// become reusable cache entries keyed by sequence hash; entries no request uses stay cached and
// are evicted least-recently-used when blocks are needed. Every change is reported so the rank
// can emit Device Stored / Removed events.
import { InvariantError } from '../kernel';
import type { BlockHash } from '../hash';

interface CacheEntry {
  hash: BlockHash;
  users: number;
}

export class DeviceCache {
  private readonly entries = new Map<BlockHash, CacheEntry>();
  /** Entries with no users, least recently used first (Map keeps insertion order). */
  private readonly idle = new Map<BlockHash, CacheEntry>();
  /** Blocks held by requests that are not cache entries (partial, output, duplicate blocks). */
  private privateBlocks = 0;

  constructor(
    readonly capacity_blocks: number,
    readonly prefix_caching: boolean,
    private readonly onEvicted: (hash: BlockHash) => void,
  ) {
    if (!Number.isInteger(capacity_blocks) || capacity_blocks <= 0) throw new RangeError(`num_gpu_blocks ${capacity_blocks} must be a positive integer`);
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

  has(hash: BlockHash): boolean {
    return this.entries.has(hash);
  }

  /** Resident hashes in insertion order (for reports). */
  residentHashes(): BlockHash[] {
    return [...this.entries.keys()];
  }

  /** Length of the longest prefix of `hashes` resident in G1 (0 when prefix caching is off). */
  prefixLength(hashes: readonly BlockHash[]): number {
    if (!this.prefix_caching) return 0;
    let length = 0;
    while (length < hashes.length && this.entries.has(hashes[length])) length++;
    return length;
  }

  /** A request starts using cached entries (they leave the idle list). */
  acquire(hashes: readonly BlockHash[]): void {
    for (const hash of hashes) {
      const entry = this.entries.get(hash);
      if (!entry) throw new InvariantError(`G1 acquire of block ${hash} that is not cached`);
      if (entry.users === 0) this.idle.delete(hash);
      entry.users++;
    }
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
   * (returns true: a Device Stored is due) unless an entry with that hash already exists.
   */
  promote(hash: BlockHash): boolean {
    if (!this.prefix_caching || this.entries.has(hash)) return false;
    this.privateBlocks--;
    this.entries.set(hash, { hash, users: 1 });
    return true;
  }

  /** A request lets go of entries (tail first, so its last blocks are evicted first) and private blocks. */
  release(hashes: readonly BlockHash[], privateCount: number): void {
    for (let i = hashes.length - 1; i >= 0; i--) {
      const entry = this.entries.get(hashes[i]);
      if (!entry || entry.users === 0) throw new InvariantError(`G1 release of block ${hashes[i]} that the request does not use`);
      entry.users--;
      if (entry.users === 0) this.idle.set(entry.hash, entry);
    }
    this.privateBlocks -= privateCount;
    if (this.privateBlocks < 0) throw new InvariantError(`G1 private block count went negative (${this.privateBlocks})`);
  }

  private evictOne(): void {
    const victim = this.idle.keys().next();
    if (victim.done) throw new InvariantError('G1 eviction with no idle entry');
    this.idle.delete(victim.value);
    this.entries.delete(victim.value);
    this.onEvicted(victim.value);
  }

  private checkCapacity(): void {
    if (this.privateBlocks + this.entries.size > this.capacity_blocks) {
      throw new InvariantError(`G1 over capacity: ${this.privateBlocks} private + ${this.entries.size} cached > ${this.capacity_blocks}`);
    }
  }
}
