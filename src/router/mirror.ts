// The router's strict mirror of each rank's residency (MIR-1..3): applies KV events to the
// residency index and rejects impossible streams (duplicate store, unknown removal, a Stored whose
// parent the rank does not hold in that tier or whose start position does not follow it, a Stored
// that puts a block some rank holds at another position or under another parent, event-id gap or
// reorder) with an error naming worker, dp rank, event id, tier and block. A block's position and
// parent are one fact across ranks and tiers: its hash names its whole prefix (HASH-1), so a block
// held anywhere, in G1 or G2, keeps the place it was stored at everywhere (as far as Stored events
// that give positions tell it).
import type { BlockHash } from '../hash';
import { BlockIds, type BlockId } from '../collections/blockIds';
import type { KvEvent, KvEventData, RankRef, Tier } from '../events/model';
import { RemovedIds as ImportedRemovedIds, StoredIds as ImportedStoredIds, TIERS, workerIdText } from '../events/model';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { TierIndex } from './residency';
import { IdWords } from './rankSets';
import { grownIdArray } from '../collections/typedArrays';
import * as simulatorFaults from '../fuzz/simulatorFaults';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
// So is the planted-fault hook, read per event.
const faultPlanted = simulatorFaults.faultPlanted;
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
/** Read per event (instanceof): copied too. */
const StoredIds = ImportedStoredIds;
const RemovedIds = ImportedRemovedIds;
/** The largest position a record's 32-bit word holds (see ResidencyMirror.records). */
const INT32_MAX = 2 ** 31 - 1;
/** A Float64Array of `length`, holding `from`'s values first. */
function grownFloat64(from: Float64Array, length: number): Float64Array {
  const grown = new Float64Array(Math.max(length, 2 * from.length));
  grown.set(from);
  return grown;
}
/**
 * What the mirror keeps of each block id, side by side (`RECORD_STRIDE` words an id, see
 * ResidencyMirror.records): the cells of its holders in each tier (see RankSetsByBlock), its
 * position in its sequence, and its parent's id + 1 (0: none).
 */
const RECORD_STRIDE = 4;
const DEVICE_CELL = 0;
const HOST_CELL = 1;
const POSITION = 2;
const PARENT = 3;

export type StreamViolation = 'duplicate-store' | 'unknown-removal' | 'broken-chain' | 'event-id-gap' | 'unknown-rank';

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
  'broken-chain': 'Stored whose parent block the rank does not hold in that tier, or whose start position does not follow the parent',
  'event-id-gap': 'event id out of sequence: an event was lost, duplicated or reordered',
  'unknown-rank': 'event from a rank the router does not know',
};

/** The broken chain of a Stored that moves a block: one held by some rank, in either tier, stood elsewhere in its sequence. */
const MOVED_BLOCK_TEXT = 'Stored that puts a block some rank holds at another position or under another parent than it was stored at (its hash names its whole prefix)';

export class EventStreamError extends Error {
  constructor(
    readonly detail: StreamErrorDetail,
    what = VIOLATION_TEXT[detail.violation],
  ) {
    super(describeViolation(detail, what));
    this.name = 'EventStreamError';
  }
}

export function describeViolation(detail: StreamErrorDetail, what = VIOLATION_TEXT[detail.violation]): string {
  const block = detail.block_hash === null ? 'no block' : `block ${detail.block_hash}`;
  const expected = detail.expected_event_id === null ? '' : ` (expected event ${detail.expected_event_id})`;
  return (
    `KV event stream rejected: ${what} — worker ${workerIdText(detail.worker_id)}, dp rank ${detail.dp_rank}, ` +
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
  readonly device: TierIndex;
  readonly host: TierIndex;
  private readonly ranks: (RankState | undefined)[] = [];
  /** Rank index by worker id, then dp rank (numbers, so an event's rank is found without building a string). */
  private readonly indexOf = new Map<number, Map<number, number>>();
  private eventsApplied = 0;
  /** Block ids of the event being applied (reused from event to event). */
  private eventIds = new Int32Array(64);
  /** 1 for each block id met so far in the event being checked; cleared when the check ends. */
  private metInEvent = new Uint8Array(0);
  /**
   * By block id, RECORD_STRIDE words side by side, read together as a Stored is checked and
   * recorded (and by the router's overlap walk): the cells of the ranks holding the block in each
   * tier (the tiers' indexes keep them here), its position and its parent.
   *
   * The position in its sequence (−1 when no Stored of it gave one), in 32 bits until a position
   * past 2^31 − 1 comes (a log may give any position up to 2^53 − 1): from then on every position
   * is in widePositions, 64-bit floats, which hold them exactly. One position per block, whichever
   * rank or tier holds it: a block is named by its whole prefix (HASH-1), so it stands at one
   * position in every sequence it is part of.
   *
   * The parent it was stored under, as its id + 1, which the record holds (retained in the id
   * table) while some rank holds the block, so that the id stands for that parent's hash as long
   * as it is read: when no rank holds the block in either tier any more, the record lets go of its
   * parent (see letGoOfParent). One word, where the parent's hash words were two: the array spans
   * every id the run has held. A block some rank holds has a known parent exactly when its
   * position is known and past 0: a Stored that gives positions names a parent for every block but
   * the first of a sequence, which stands at 0 (a Stored without a parent must start at 0, one with
   * a parent must not); one that gives none forgets the position of a block nobody holds and
   * leaves both of a held one.
   */
  private readonly records = new IdWords(RECORD_STRIDE);
  private widePositions: Float64Array | null = null;

  /** `blockIds`: the run's id table when the mirror shares it with the engines (own table otherwise). */
  constructor(
    private readonly start: EventIdStart = 'zero',
    readonly blockIds = new BlockIds(),
  ) {
    this.device = new TierIndex(blockIds, this.records, DEVICE_CELL);
    this.host = new TierIndex(blockIds, this.records, HOST_CELL);
    const letGoOfParent = (id: BlockId) => this.letGoOfParent(id);
    this.device.onUnheld = letGoOfParent;
    this.host.onUnheld = letGoOfParent;
  }

  /** A block no rank holds in one tier any more: when none holds it in the other either, its record lets go of its parent. */
  private letGoOfParent(id: BlockId): void {
    const words = this.records.words;
    const at = RECORD_STRIDE * id;
    if (words[at + DEVICE_CELL] !== 0 || words[at + HOST_CELL] !== 0) return;
    const parent = words[at + PARENT];
    if (parent === 0) return;
    words[at + PARENT] = 0;
    this.blockIds.release(parent - 1);
  }

  /** Records `parent` (NO_BLOCK_ID: none) as the parent of the block whose record starts at `at`, holding it in place of the one recorded before. */
  private setParent(at: number, parent: BlockId): void {
    const words = this.records.words;
    const before = words[at + PARENT];
    if (before === parent + 1) return;
    if (parent !== NO_BLOCK_ID) this.blockIds.retain(parent);
    words[at + PARENT] = parent + 1;
    if (before !== 0) this.blockIds.release(before - 1);
  }

  get appliedEvents(): number {
    return this.eventsApplied;
  }

  tier(tier: Tier): TierIndex {
    return tier === 'Device' ? this.device : this.host;
  }

  /** Registers a rank (or re-registers one after its worker was removed) with a fresh stream. */
  addRank(ref: RankRef, rankIndex: number): void {
    this.ranks[rankIndex] = { ref, expectedEventId: this.start === 'zero' ? 0 : null };
    let ofWorker = this.indexOf.get(ref.worker_id);
    if (!ofWorker) {
      ofWorker = new Map();
      this.indexOf.set(ref.worker_id, ofWorker);
    }
    ofWorker.set(ref.dp_rank, rankIndex);
  }

  /** Drops a rank's residency and stream (worker removal, MIR-3). */
  dropRank(rankIndex: number): void {
    const state = this.ranks[rankIndex];
    if (!state) return;
    this.device.clearRank(rankIndex);
    this.host.clearRank(rankIndex);
    this.indexOf.get(state.ref.worker_id)?.delete(state.ref.dp_rank);
    this.ranks[rankIndex] = undefined;
  }

  rankIndex(ref: RankRef): number | undefined {
    return this.indexOf.get(ref.worker_id)?.get(ref.dp_rank);
  }

  /** Validates then applies one event; throws EventStreamError on an impossible stream. */
  apply(event: KvEvent): void {
    const rankIndex = this.rankIndex(event);
    if (rankIndex === undefined) throw violation(event, 'unknown-rank', firstBlock(event), null);
    const state = this.ranks[rankIndex]!;
    this.checkEventId(state, event);
    if (event.passed_over !== undefined) {
      // A tier the spec does not have (a log's disk or external): its id counts, its blocks are not mirrored.
      state.expectedEventId = event.event_id + 1;
      this.eventsApplied++;
      return;
    }
    const index = this.tier(event.tier);
    switch (event.data.type) {
      case 'Stored':
        this.applyStored(index, rankIndex, event, event.data);
        break;
      case 'Removed':
        this.applyRemoved(index, rankIndex, event, event.data);
        break;
      case 'Cleared':
        for (const tier of TIERS) this.tier(tier).clearRank(rankIndex);
        break;
    }
    state.expectedEventId = event.event_id + 1;
    this.eventsApplied++;
  }

  /**
   * A Stored: its blocks' ids into eventIds, then store(). Blocks that come as ids of this mirror's
   * table are taken as they are; blocks that come as hashes are looked up, held while checked.
   */
  private applyStored(index: TierIndex, rankIndex: number, event: KvEvent, data: StoredData): void {
    // Positions are whole numbers from 0 (the wire reads them so; engines count them): a known parent is told by a position past 0.
    if (data.start_position !== null && !(data.start_position >= 0)) throw new RangeError(`a Stored's start position is ${data.start_position}, not a position in a sequence`);
    if (data instanceof StoredIds && data.table === this.blockIds) {
      this.idsFor(data.block_ids.length).set(data.block_ids);
      this.store(index, rankIndex, event, data.block_ids.length, data.parent_id, data.start_position);
      return;
    }
    const count = data.blocks.length;
    const ids = this.idsFor(count);
    for (let i = 0; i < count; i++) ids[i] = this.blockIds.acquire(data.blocks[i].block_hash);
    const parent = data.parent_hash === null ? NO_BLOCK_ID : this.blockIds.idOf(data.parent_hash);
    try {
      this.store(index, rankIndex, event, count, parent === NO_BLOCK_ID && data.parent_hash !== null ? UNKNOWN_PARENT : parent, data.start_position);
    } finally {
      for (let i = 0; i < count; i++) this.blockIds.release(ids[i]);
    }
  }

  /**
   * The checks of a Stored whose block ids are in eventIds: none held by the rank yet nor twice in
   * the event; its parent (NO_BLOCK_ID: none) held by the rank in the same tier, and when both
   * positions are known the run starts right after it (a Stored without a parent starts a sequence,
   * position 0). Then the rank holds the blocks.
   */
  private store(index: TierIndex, rankIndex: number, event: KvEvent, count: number, parent: BlockId, start: number | null): void {
    const ids = this.eventIds;
    // One pass over the blocks checks them all; a moved block is told only after the duplicates and the chain.
    let moved = -1;
    for (let i = 0; i < count; i++) {
      if (index.holdsId(rankIndex, ids[i]) || this.metBefore(i, count)) {
        this.forgetMet(i, count);
        throw violation(event, 'duplicate-store', storedHashAt(event, i), null);
      }
      if (moved < 0 && start !== null && this.movedAt(i, parent, start)) moved = i;
    }
    this.forgetMet(count - 1, count);
    let broken = false;
    if (parent === NO_BLOCK_ID) broken = start !== null && start !== 0;
    // A block with a parent comes after it: never at position 0, whether or not the parent's position is known.
    else if (parent === UNKNOWN_PARENT || !index.holdsId(rankIndex, parent) || start === 0) broken = true;
    else if (start !== null) {
      const parentPosition = this.positionOf(parent);
      broken = parentPosition >= 0 && parentPosition + 1 !== start;
    }
    if (broken) throw violation(event, 'broken-chain', (event.data as StoredData).parent_hash ?? firstBlock(event), null);
    if (moved >= 0) throw violation(event, 'broken-chain', storedHashAt(event, moved), null, MOVED_BLOCK_TEXT);
    this.record(index, rankIndex, count, parent, start);
  }

  /**
   * Whether block i of a Stored (in eventIds, after its parent `parent` from `start`) is held by
   * some rank, in either tier, at another position or under another parent than this run gives it.
   */
  private movedAt(i: number, parent: BlockId, start: number): boolean {
    const id = this.eventIds[i];
    const words = this.records.words;
    const at = RECORD_STRIDE * id;
    // A held block was stored, so its position and parent records exist (a holders cell of 0: no rank holds it in that tier).
    if (at >= words.length || (words[at + DEVICE_CELL] === 0 && words[at + HOST_CELL] === 0)) return false;
    const position = this.widePositions === null ? words[at + POSITION] : this.widePositions[id];
    if (position >= 0 && position !== start + i) return true;
    // A block with a parent stands past position 0 (see records): here the run gives it one too (else its position differed).
    // The recorded parent is held by the record, so its id stands for its hash: the same id, the same parent.
    return position > 0 && words[at + PARENT] !== (i > 0 ? this.eventIds[i - 1] : parent) + 1;
  }

  /**
   * A checked Stored's blocks (in eventIds), in one pass: each one's position and parent are
   * recorded (before the rank holds it), then the rank holds it. A Stored that gives positions
   * records them, and each block's parent (the first block of a sequence has none). A Stored that
   * gives no position leaves what is known of a block some rank already holds, in either tier: it
   * does not know better, and forgetting would let a later child of that block claim any position;
   * of a block nobody holds, it forgets what was known.
   */
  private record(index: TierIndex, rankIndex: number, count: number, parent: BlockId, start: number | null): void {
    if (start !== null && start + count - 1 > INT32_MAX && this.widePositions === null) this.widenPositions();
    const ids = this.eventIds;
    const records = this.records;
    for (let i = 0; i < count; i++) {
      const id = ids[i];
      const at = RECORD_STRIDE * id;
      if (at + RECORD_STRIDE > records.words.length) records.fit(id);
      const words = records.words;
      if (start === null) {
        if (words[at + DEVICE_CELL] === 0 && words[at + HOST_CELL] === 0) this.setPosition(id, -1);
      } else {
        this.setPosition(id, start + i);
        // Past position 0 there is a parent (the chain check saw to it): its id is recorded, and held.
        const claimed = i > 0 ? ids[i - 1] : parent;
        if (claimed !== NO_BLOCK_ID) this.setParent(at, claimed);
      }
      index.addId(rankIndex, id);
    }
  }

  /** The position of a block in its sequence (−1: not known; a block whose words were never made has none). */
  private positionOf(id: BlockId): number {
    if (this.widePositions !== null) return id < this.widePositions.length ? this.widePositions[id] : -1;
    const at = RECORD_STRIDE * id + POSITION;
    return at < this.records.words.length ? this.records.words[at] : -1;
  }

  /** Sets the position of a block whose words are made. */
  private setPosition(id: BlockId, position: number): void {
    if (this.widePositions === null) this.records.words[RECORD_STRIDE * id + POSITION] = position;
    else {
      if (id >= this.widePositions.length) this.widePositions = grownFloat64(this.widePositions, id + 1);
      this.widePositions[id] = position;
    }
  }

  /** A Removed: every block held by the rank and named once; then the rank no longer holds them. */
  private applyRemoved(index: TierIndex, rankIndex: number, event: KvEvent, data: RemovedData): void {
    const ids = this.idsFor(data instanceof RemovedIds ? data.block_ids.length : data.block_hashes.length);
    let count: number;
    if (data instanceof RemovedIds && data.table === this.blockIds) {
      count = data.block_ids.length;
      ids.set(data.block_ids);
    } else {
      count = data.block_hashes.length;
      for (let i = 0; i < count; i++) ids[i] = this.blockIds.idOf(data.block_hashes[i]);
    }
    for (let i = 0; i < count; i++) {
      if (!index.holdsId(rankIndex, ids[i]) || this.metBefore(i, count)) {
        this.forgetMet(i - 1, count);
        throw violation(event, 'unknown-removal', data.block_hashes[i], null);
      }
    }
    this.forgetMet(count - 1, count);
    for (let i = 0; i < count; i++) index.removeId(rankIndex, ids[i]);
  }

  private checkEventId(state: RankState, event: KvEvent): void {
    if (state.expectedEventId === null || state.expectedEventId + (faultPlanted('event-ids') ? 1 : 0) === event.event_id) return; // planted fault (src/fuzz/simulatorFaults.ts)
    throw violation(event, 'event-id-gap', firstBlock(event), state.expectedEventId);
  }

  /** Every position from now on in 64-bit floats (those of the ids issued so far copied: the rest are zero in both). */
  private widenPositions(): void {
    const issued = Math.min(this.blockIds.capacity, Math.floor(this.records.words.length / RECORD_STRIDE));
    const wide = new Float64Array(Math.max(issued, 1));
    for (let id = 0; id < issued; id++) wide[id] = this.records.words[RECORD_STRIDE * id + POSITION];
    this.widePositions = wide;
  }

  /** eventIds, with room for the ids of an event of `count` blocks. */
  private idsFor(count: number): Int32Array {
    if (count > this.eventIds.length) this.eventIds = new Int32Array(Math.max(count, 2 * this.eventIds.length));
    return this.eventIds;
  }

  /** Whether eventIds[i] already came earlier in this event of `count` blocks (one block needs no marks). */
  private metBefore(i: number, count: number): boolean {
    if (count === 1) return false;
    const id = this.eventIds[i];
    if (id >= this.metInEvent.length) this.metInEvent = grownIdArray(this.metInEvent, id + 1);
    if (this.metInEvent[id] === 1) return true;
    this.metInEvent[id] = 1;
    return false;
  }

  /** Clears the marks of eventIds[0..last] in an event of `count` blocks. */
  private forgetMet(last: number, count: number): void {
    if (count === 1) return;
    for (let i = 0; i <= last; i++) if (this.eventIds[i] < this.metInEvent.length) this.metInEvent[this.eventIds[i]] = 0;
  }
}

type StoredData = Extract<KvEventData, { type: 'Stored' }>;
type RemovedData = Extract<KvEventData, { type: 'Removed' }>;

/** The parent of a Stored that names a parent the table does not know (so no rank holds it). */
const UNKNOWN_PARENT = -2;


/** Block i of a Stored event (its hashes are made only on a violation). */
function storedHashAt(event: KvEvent, i: number): BlockHash {
  return (event.data as StoredData).blocks[i].block_hash;
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

function violation(event: KvEvent, kind: StreamViolation, hash: BlockHash | null, expected: number | null, what?: string): EventStreamError {
  return new EventStreamError(
    {
      violation: kind,
      worker_id: event.worker_id,
      dp_rank: event.dp_rank,
      event_id: event.event_id,
      tier: event.tier,
      block_hash: hash,
      expected_event_id: expected,
    },
    what,
  );
}
