// The router's strict mirror of each rank's residency (MIR-1..3): applies KV events to the
// residency index and rejects impossible streams (duplicate store, unknown removal, event-id gap
// or reorder) with an error naming worker, dp rank, event id, tier and block.
import type { BlockHash } from '../hash';
import type { KvEvent, RankRef, Tier } from '../events/model';
import { TIERS } from '../events/model';
import { TierIndex } from './residency';

export type StreamViolation = 'duplicate-store' | 'unknown-removal' | 'event-id-gap' | 'unknown-rank';

export interface StreamErrorDetail extends RankRef {
  violation: StreamViolation;
  event_id: number;
  tier: Tier;
  block_hash: BlockHash | null;
  expected_event_id: number | null;
}

const VIOLATION_TEXT: Record<StreamViolation, string> = {
  'duplicate-store': 'duplicate Stored: the rank already holds this block in that tier',
  'unknown-removal': 'Removed of a block the rank does not hold in that tier',
  'event-id-gap': 'event id out of sequence: an event was lost, duplicated or reordered',
  'unknown-rank': 'event from a rank the router does not know',
};

export class EventStreamError extends Error {
  constructor(readonly detail: StreamErrorDetail) {
    super(describeViolation(detail));
    this.name = 'EventStreamError';
  }
}

export function describeViolation(detail: StreamErrorDetail): string {
  const block = detail.block_hash === null ? 'no block' : `block ${detail.block_hash}`;
  const expected = detail.expected_event_id === null ? '' : ` (expected event ${detail.expected_event_id})`;
  return (
    `KV event stream rejected: ${VIOLATION_TEXT[detail.violation]} — worker ${detail.worker_id}, dp rank ${detail.dp_rank}, ` +
    `event ${detail.event_id}${expected}, tier ${detail.tier}, ${block}`
  );
}

/** How the first event id of a rank is checked (MIR-2). */
export type EventIdStart = 'zero' | 'first-seen';

interface RankState {
  ref: RankRef;
  expectedEventId: number | null;
}

/** Residency of every known rank, per tier, built only from events seen. */
export class ResidencyMirror {
  readonly device = new TierIndex();
  readonly host = new TierIndex();
  private readonly ranks: (RankState | undefined)[] = [];
  private readonly indexOf = new Map<string, number>();
  private eventsApplied = 0;

  constructor(private readonly start: EventIdStart = 'zero') {}

  get appliedEvents(): number {
    return this.eventsApplied;
  }

  tier(tier: Tier): TierIndex {
    return tier === 'Device' ? this.device : this.host;
  }

  /** Registers a rank (or re-registers one after its worker was removed) with a fresh stream. */
  addRank(ref: RankRef, rankIndex: number): void {
    this.ranks[rankIndex] = { ref, expectedEventId: this.start === 'zero' ? 0 : null };
    this.indexOf.set(key(ref), rankIndex);
  }

  /** Drops a rank's residency and stream (worker removal, MIR-3). */
  dropRank(rankIndex: number): void {
    const state = this.ranks[rankIndex];
    if (!state) return;
    this.device.clearRank(rankIndex);
    this.host.clearRank(rankIndex);
    this.indexOf.delete(key(state.ref));
    this.ranks[rankIndex] = undefined;
  }

  rankIndex(ref: RankRef): number | undefined {
    return this.indexOf.get(key(ref));
  }

  /** Validates then applies one event; throws EventStreamError on an impossible stream. */
  apply(event: KvEvent): void {
    const rankIndex = this.indexOf.get(key(event));
    if (rankIndex === undefined) throw violation(event, 'unknown-rank', firstBlock(event), null);
    const state = this.ranks[rankIndex]!;
    this.checkEventId(state, event);
    const index = this.tier(event.tier);
    switch (event.data.type) {
      case 'Stored':
        this.checkStored(index, rankIndex, event, event.data.blocks.map((block) => block.block_hash));
        for (const block of event.data.blocks) index.add(rankIndex, block.block_hash);
        break;
      case 'Removed':
        this.checkRemoved(index, rankIndex, event, event.data.block_hashes);
        for (const hash of event.data.block_hashes) index.remove(rankIndex, hash);
        break;
      case 'Cleared':
        for (const tier of TIERS) this.tier(tier).clearRank(rankIndex);
        break;
    }
    state.expectedEventId = event.event_id + 1;
    this.eventsApplied++;
  }

  private checkEventId(state: RankState, event: KvEvent): void {
    if (state.expectedEventId === null || state.expectedEventId === event.event_id) return;
    throw violation(event, 'event-id-gap', firstBlock(event), state.expectedEventId);
  }

  private checkStored(index: TierIndex, rankIndex: number, event: KvEvent, hashes: BlockHash[]): void {
    const seen = new Set<BlockHash>();
    for (const hash of hashes) {
      if (index.has(rankIndex, hash) || seen.has(hash)) throw violation(event, 'duplicate-store', hash, null);
      seen.add(hash);
    }
  }

  private checkRemoved(index: TierIndex, rankIndex: number, event: KvEvent, hashes: BlockHash[]): void {
    const seen = new Set<BlockHash>();
    for (const hash of hashes) {
      if (!index.has(rankIndex, hash) || seen.has(hash)) throw violation(event, 'unknown-removal', hash, null);
      seen.add(hash);
    }
  }
}

function key(ref: RankRef): string {
  return `${ref.worker_id}/${ref.dp_rank}`;
}

function firstBlock(event: KvEvent): BlockHash | null {
  switch (event.data.type) {
    case 'Stored':
      return event.data.blocks[0]?.block_hash ?? null;
    case 'Removed':
      return event.data.block_hashes[0] ?? null;
    case 'Cleared':
      return null;
  }
}

function violation(event: KvEvent, kind: StreamViolation, hash: BlockHash | null, expected: number | null): EventStreamError {
  return new EventStreamError({
    violation: kind,
    worker_id: event.worker_id,
    dp_rank: event.dp_rank,
    event_id: event.event_id,
    tier: event.tier,
    block_hash: hash,
    expected_event_id: expected,
  });
}
