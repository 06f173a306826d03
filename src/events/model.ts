// KV events (EVT-1, EVT-2): Stored / Removed / Cleared on the Device (G1) or HostPinned (G2)
// tier, numbered per rank in one sequence across both tiers, emitted in batches. Inside the
// simulator an engine's Stored and Removed carry block ids (StoredIds, RemovedIds) and make their
// hashes only when read; events read from a log carry hashes.
import type { BlockHash, HashedBlock } from '../hash';
import { toU64 } from '../hash';
import type { Nanos } from '../time';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import type { IdRun } from '../collections/idRun';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;

export type Tier = 'Device' | 'HostPinned';
export const TIERS: readonly Tier[] = ['Device', 'HostPinned'];

export interface RankRef {
  worker_id: number;
  dp_rank: number;
}

/**
 * Worker ids of captured logs past 2^53 − 1 (Dynamo's are u64, often near 10^18): each stands in a
 * log's events as a negative number, which no worker id is, and is shown by workerIdText as its
 * exact decimal. The simulator's own ids are small and stand for themselves.
 */
const hugeWorkerStandIns = new Map<bigint, number>();
const hugeWorkerIds = new Map<number, bigint>();

/** The number a worker id read exactly from a log stands as: itself up to 2^53 − 1, else its stand-in. */
export function workerIdOf(id: bigint): number {
  if (id <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(id);
  let standIn = hugeWorkerStandIns.get(id);
  if (standIn === undefined) {
    standIn = -(hugeWorkerStandIns.size + 1);
    hugeWorkerStandIns.set(id, standIn);
    hugeWorkerIds.set(standIn, id);
  }
  return standIn;
}

/** A worker id exactly as the log gave it: a number, or the u64 a stand-in stands for (as a bigint). */
export function exactWorkerId(id: number): number | bigint {
  return id < 0 ? (hugeWorkerIds.get(id) ?? id) : id;
}

/** A worker id for people: its exact decimal. */
export function workerIdText(id: number): string {
  return String(exactWorkerId(id));
}

/** Orders worker ids by their exact values (a stand-in by the u64 it stands for). */
export function compareWorkerIds(a: number, b: number): number {
  const [x, y] = [BigInt(exactWorkerId(a)), BigInt(exactWorkerId(b))];
  return x < y ? -1 : x > y ? 1 : 0;
}

export type KvEventData =
  | { type: 'Stored'; parent_hash: BlockHash | null; start_position: number | null; blocks: HashedBlock[] }
  | { type: 'Removed'; block_hashes: BlockHash[] }
  | { type: 'Cleared' };

/**
 * A Stored as an engine rank emits it inside the simulator: its blocks travel as block ids of the
 * run's table (and each block's token-hash words), and the hashes are made only when something
 * reads them (a wire log, evidence, a scenario). The event holds each id (and its parent's) from
 * its making until release(), after the router has applied it, so no id is reused for another
 * block while the event is in flight.
 */
export class StoredIds {
  readonly type = 'Stored' as const;
  private made: HashedBlock[] | null = null;

  /**
   * `tokenWords`: two 32-bit words (low, high) of each block's token hash. `run`: the held run of ids
   * the blocks and their parent are part of (a request's prompt): the event holds it with one count
   * instead of holding each id (views of the run's buffer stay valid while it is held).
   */
  constructor(
    readonly table: BlockIds,
    readonly block_ids: Int32Array,
    private readonly tokenWords: Int32Array,
    readonly parent_id: BlockId,
    readonly start_position: number | null,
    private readonly run: IdRun | null = null,
  ) {
    if (run !== null) {
      run.hold();
      return;
    }
    table.retainAll(block_ids);
    if (parent_id !== NO_BLOCK_ID) table.retain(parent_id);
  }

  get parent_hash(): BlockHash | null {
    return this.parent_id === NO_BLOCK_ID ? null : this.table.hashOf(this.parent_id);
  }

  get blocks(): HashedBlock[] {
    if (this.made === null) {
      const words = this.tokenWords;
      this.made = Array.from(this.block_ids, (id, i) => ({ block_hash: this.table.hashOf(id), tokens_hash: toU64(words[2 * i], words[2 * i + 1]) }));
    }
    return this.made;
  }

  /** The event's hold on its ids ends (the hashes must have been read before, if they are needed). */
  release(): void {
    if (this.run !== null) return this.run.letGo();
    this.table.releaseAll(this.block_ids);
    if (this.parent_id !== NO_BLOCK_ID) this.table.release(this.parent_id);
  }

  plain(): KvEventData {
    return { type: 'Stored', parent_hash: this.parent_hash, start_position: this.start_position, blocks: this.blocks };
  }

  /** The same Stored with a hold of its own (for another rank's stream). */
  copy(): StoredIds {
    return new StoredIds(this.table, this.block_ids, this.tokenWords, this.parent_id, this.start_position, this.run);
  }
}

/** A Removed as an engine rank emits it: block ids held until release() (see StoredIds). */
export class RemovedIds {
  readonly type = 'Removed' as const;
  private made: BlockHash[] | null = null;

  /** `holdsTaken`: the maker already holds each id once and hands those holds to the event (see takingHolds). */
  constructor(
    readonly table: BlockIds,
    readonly block_ids: Int32Array,
    holdsTaken = false,
  ) {
    if (!holdsTaken) table.retainAll(block_ids);
  }

  /** A Removed that takes over its maker's holds on the ids (one each) instead of retaining them again. */
  static takingHolds(table: BlockIds, block_ids: Int32Array): RemovedIds {
    return new RemovedIds(table, block_ids, true);
  }

  get block_hashes(): BlockHash[] {
    this.made ??= Array.from(this.block_ids, (id) => this.table.hashOf(id));
    return this.made;
  }

  release(): void {
    this.table.releaseAll(this.block_ids);
  }

  plain(): KvEventData {
    return { type: 'Removed', block_hashes: this.block_hashes };
  }
}

/** The event with its blocks as hashes in plain data (what a log or a picture keeps after the ids are released). */
export function plainEvent(event: KvEvent): KvEvent {
  const data = event.data;
  if (!(data instanceof StoredIds) && !(data instanceof RemovedIds)) return event;
  return { event_id: event.event_id, worker_id: event.worker_id, dp_rank: event.dp_rank, tier: event.tier, data: data.plain() };
}

/** Ends the hold of an event's ids, if it carries ids. */
export function releaseEvent(event: KvEvent): void {
  const data = event.data;
  if (data instanceof StoredIds || data instanceof RemovedIds) data.release();
}

export interface KvEvent extends RankRef {
  event_id: number;
  tier: Tier;
  data: KvEventData;
  /**
   * Read from a log: an event of what kvqual does not model (Dynamo's disk or external tier, or a
   * cache owner's residency domain rather than the worker's own). Its id counts in the rank's
   * sequence (EVT-2); its blocks are not mirrored. The simulator never sets it.
   */
  passed_over?: PassedOver;
}

/** Dynamo's storage tiers beyond the two of the spec (G1, G2), which a log may hold. */
export type PassedOverTier = 'disk' | 'external';
/** Why a logged event is passed over: a tier the spec does not have, or a cache owner's domain. */
export type PassedOver = PassedOverTier | 'cache_owner';

/** Events emitted together by one rank at one instant; the transport delivers batches whole. */
export interface KvEventBatch extends RankRef {
  emitted_ns: Nanos;
  events: KvEvent[];
}

export function rankLabel(rank: RankRef): string {
  return `worker ${workerIdText(rank.worker_id)} dp rank ${rank.dp_rank}`;
}

/** One rank's event numbering (EVT-2): 0, 1, 2, … across both tiers. */
export class RankEventStream {
  private nextId = 0;
  constructor(readonly rank: RankRef) {}

  get nextEventId(): number {
    return this.nextId;
  }

  stored(tier: Tier, blocks: HashedBlock[], parent_hash: BlockHash | null, start_position: number | null): KvEvent {
    return this.make(tier, { type: 'Stored', parent_hash, start_position, blocks });
  }
  removed(tier: Tier, block_hashes: BlockHash[]): KvEvent {
    return this.make(tier, { type: 'Removed', block_hashes });
  }
  /** Numbers an event made elsewhere (a StoredIds or RemovedIds). */
  numbered(tier: Tier, data: KvEventData): KvEvent {
    return this.make(tier, data);
  }
  cleared(tier: Tier): KvEvent {
    return this.make(tier, { type: 'Cleared' });
  }

  private make(tier: Tier, data: KvEventData): KvEvent {
    return { event_id: this.nextId++, worker_id: this.rank.worker_id, dp_rank: this.rank.dp_rank, tier, data };
  }
}

/** Short human description of an event: "HostPinned Stored of 2 blocks (event 3)". */
export function describeEvent(event: KvEvent): string {
  switch (event.data.type) {
    case 'Stored':
      return `${event.tier} Stored of ${event.data.blocks.length} block(s) (event ${event.event_id})`;
    case 'Removed':
      return `${event.tier} Removed of ${event.data.block_hashes.length} block(s) (event ${event.event_id})`;
    case 'Cleared':
      return `${event.tier} Cleared (event ${event.event_id})`;
  }
}
