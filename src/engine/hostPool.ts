// A G2 (host memory) pool (G2-1..7, G2-10): capacity in blocks keyed by sequence hash; entries
// are pending while their D2H copy runs, then resident; LRU with touches; pinned while loaded
// back to G1. A private pool serves one rank; a shared pool serves every participating rank.
import { InvariantError } from '../kernel';
import type { BlockHash } from '../hash';

interface HostEntry {
  hash: BlockHash;
  pending: boolean;
  /** Loads in flight from this entry, per rank index (a pinned entry is never a victim). */
  pins: number;
  loaders: Map<number, number> | null;
  /** Who stored it: the cache_id of the storing request's play, or its request id. */
  origin: string;
}

export interface CohortReservation {
  /** Resident entries evicted to make room (HostPinned Removed is due for them). */
  victims: BlockHash[];
}

export type HostLookup =
  | { outcome: 'hit'; blocks: number }
  | { outcome: 'deferred'; blocks: number; reason: 'pending' | 'loading' };

export class HostPool {
  private readonly entries = new Map<BlockHash, HostEntry>();
  /** Resident entries, least recently used first. */
  private readonly lru = new Map<BlockHash, HostEntry>();
  private pendingCount = 0;

  constructor(
    readonly domain_id: string,
    readonly capacity_blocks: number,
    readonly shared: boolean,
  ) {
    if (!Number.isInteger(capacity_blocks) || capacity_blocks <= 0) throw new RangeError(`num_host_blocks ${capacity_blocks} must be a positive integer`);
  }

  get residentBlocks(): number {
    return this.entries.size - this.pendingCount;
  }
  get usedBlocks(): number {
    return this.entries.size;
  }

  isResident(hash: BlockHash): boolean {
    const entry = this.entries.get(hash);
    return entry !== undefined && !entry.pending;
  }
  contains(hash: BlockHash): boolean {
    return this.entries.has(hash);
  }
  residentHashes(): BlockHash[] {
    return [...this.lru.keys()];
  }

  /**
   * G2-6: consecutive keys from `from` (stopping at the first miss or at `limit`); deferred when any
   * counted key is still pending, or is being loaded into the same rank by another request (ranks
   * of a shared pool may read one entry concurrently, each into its own G1).
   */
  lookup(hashes: readonly BlockHash[], from: number, limit: number, rank_index: number): HostLookup {
    let blocks = 0;
    let blocked: 'pending' | 'loading' | null = null;
    for (let i = from; i < limit; i++) {
      const entry = this.entries.get(hashes[i]);
      if (!entry) break;
      if (entry.pending) blocked ??= 'pending';
      else if ((entry.loaders?.get(rank_index) ?? 0) > 0) blocked ??= 'loading';
      blocks++;
    }
    return blocked === null ? { outcome: 'hit', blocks } : { outcome: 'deferred', blocks, reason: blocked };
  }

  /** Resident consecutive keys from `from` (the engine's truth, for reconciliation). */
  residentRun(hashes: readonly BlockHash[], from: number): number {
    let blocks = 0;
    while (from + blocks < hashes.length && this.isResident(hashes[from + blocks])) blocks++;
    return blocks;
  }

  /** G2-5: touches a request's resident prompt keys in reverse order, so its first block is most recent. */
  touch(hashes: readonly BlockHash[]): void {
    for (let i = hashes.length - 1; i >= 0; i--) {
      const entry = this.lru.get(hashes[i]);
      if (!entry) continue;
      this.lru.delete(entry.hash);
      this.lru.set(entry.hash, entry);
    }
  }

  /** Keys of `hashes` that are neither resident nor pending. */
  missing(hashes: readonly BlockHash[]): BlockHash[] {
    return hashes.filter((hash) => !this.entries.has(hash));
  }

  /**
   * G2-2: reserves room for a cohort atomically, evicting LRU resident unpinned entries. Returns
   * null (and changes nothing) when there are not enough victims; a cohort larger than the pool
   * never fits.
   */
  reserve(cohort: readonly BlockHash[], origin = ''): CohortReservation | null {
    if (cohort.length === 0 || cohort.length > this.capacity_blocks) return null;
    const shortfall = cohort.length - (this.capacity_blocks - this.entries.size);
    const victims: BlockHash[] = [];
    if (shortfall > 0) {
      for (const entry of this.lru.values()) {
        if (victims.length === shortfall) break;
        if (entry.pins === 0) victims.push(entry.hash);
      }
      if (victims.length < shortfall) return null;
    }
    for (const hash of victims) {
      this.entries.delete(hash);
      this.lru.delete(hash);
    }
    for (const hash of cohort) {
      if (this.entries.has(hash)) throw new InvariantError(`G2 ${this.domain_id}: cohort block ${hash} is already in the pool`);
      this.entries.set(hash, { hash, pending: true, pins: 0, loaders: null, origin });
    }
    this.pendingCount += cohort.length;
    this.checkCapacity();
    return { victims };
  }

  /** G2-3/G2-5: the D2H copy finished; the cohort becomes resident and is touched as one unit. */
  complete(cohort: readonly BlockHash[]): void {
    for (const hash of cohort) {
      const entry = this.entries.get(hash);
      if (!entry || !entry.pending) throw new InvariantError(`G2 ${this.domain_id}: completing block ${hash} that is not pending`);
      entry.pending = false;
      this.lru.set(hash, entry);
    }
    this.pendingCount -= cohort.length;
  }

  /** Who stored these entries (sorted, distinct). */
  originsOf(hashes: readonly BlockHash[]): string[] {
    const origins = new Set<string>();
    for (const hash of hashes) {
      const entry = this.entries.get(hash);
      if (entry) origins.add(entry.origin);
    }
    return [...origins].sort();
  }

  /** A load into `rank_index` starts: the entries are pinned until it ends. */
  pin(hashes: readonly BlockHash[], rank_index: number): void {
    for (const hash of hashes) {
      const entry = this.entries.get(hash);
      if (!entry || entry.pending) throw new InvariantError(`G2 ${this.domain_id}: pinning block ${hash} that is not resident`);
      entry.pins++;
      entry.loaders ??= new Map();
      entry.loaders.set(rank_index, (entry.loaders.get(rank_index) ?? 0) + 1);
    }
  }

  unpin(hashes: readonly BlockHash[], rank_index: number): void {
    for (const hash of hashes) {
      const entry = this.entries.get(hash);
      const mine = entry?.loaders?.get(rank_index) ?? 0;
      if (!entry || !entry.loaders || mine === 0) throw new InvariantError(`G2 ${this.domain_id}: unpinning block ${hash} that rank ${rank_index} is not loading`);
      entry.pins--;
      if (mine > 1) entry.loaders.set(rank_index, mine - 1);
      else if (entry.loaders.size === 1) entry.loaders = null;
      else entry.loaders.delete(rank_index);
    }
  }

  private checkCapacity(): void {
    if (this.entries.size > this.capacity_blocks) {
      throw new InvariantError(`G2 ${this.domain_id} over capacity: ${this.entries.size} > ${this.capacity_blocks}`);
    }
  }
}
