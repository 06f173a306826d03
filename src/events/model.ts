// KV events (EVT-1, EVT-2): Stored / Removed / Cleared on the Device (G1) or HostPinned (G2)
// tier, numbered per rank in one sequence across both tiers, emitted in batches.
import type { BlockHash, HashedBlock } from '../hash';
import type { Nanos } from '../time';

export type Tier = 'Device' | 'HostPinned';
export const TIERS: readonly Tier[] = ['Device', 'HostPinned'];

export interface RankRef {
  worker_id: number;
  dp_rank: number;
}

export type KvEventData =
  | { type: 'Stored'; parent_hash: BlockHash | null; start_position: number | null; blocks: HashedBlock[] }
  | { type: 'Removed'; block_hashes: BlockHash[] }
  | { type: 'Cleared' };

export interface KvEvent extends RankRef {
  event_id: number;
  tier: Tier;
  data: KvEventData;
}

/** Events emitted together by one rank at one instant; the transport delivers batches whole. */
export interface KvEventBatch extends RankRef {
  emitted_ns: Nanos;
  events: KvEvent[];
}

export function rankLabel(rank: RankRef): string {
  return `worker ${rank.worker_id} dp rank ${rank.dp_rank}`;
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
