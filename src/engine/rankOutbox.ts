// The KV events a rank's pass makes, held until the pass ends (LAG-3: residency changes at
// emission) and then numbered and emitted as one batch: Stored events as drafts, and G1 evictions
// as bare block ids that go out as one Device Removed per run of consecutive evictions. Also what
// the outbox says about G1 before it is emitted (pendingDeviceChanges), for the engine's truth.
import type { BlockId, BlockIds } from '../collections/blockIds';
import type { KvEvent, RankEventStream, Tier } from '../events/model';
import { RemovedIds as ImportedRemovedIds, StoredIds as ImportedStoredIds } from '../events/model';
// Read per pass: copied into this module once (every read of an imported binding is a getter call, esbuild's live bindings).
const RemovedIds = ImportedRemovedIds;
type RemovedIds = ImportedRemovedIds;
const StoredIds = ImportedStoredIds;
type StoredIds = ImportedStoredIds;

/** An event to be numbered when it is emitted (ids follow emission order, EVT-2). */
interface EventDraft {
  tier: Tier;
  data: StoredIds | RemovedIds;
}

export class RankOutbox {
  /**
   * Events due at the end of the pass, in order: the first draftCount entries (the array is kept
   * from pass to pass, not made anew: a pass's evictions would grow a new one from empty each time);
   * a bare block id (held by the outbox) stands for a Device Removed of that one block (an eviction).
   */
  private readonly drafts: (EventDraft | BlockId)[] = [];
  private draftCount = 0;

  constructor(private readonly blockIds: BlockIds) {}

  get isEmpty(): boolean {
    return this.draftCount === 0;
  }

  /** A G1 entry was evicted: its Device Removed is due (the outbox holds its id until then). */
  evicted(id: BlockId): void {
    this.blockIds.retain(id);
    this.draft(id);
  }

  /** An event is due at the end of the pass. */
  add(tier: Tier, data: StoredIds | RemovedIds): void {
    this.draft({ tier, data });
  }

  private draft(draft: EventDraft | BlockId): void {
    if (this.draftCount < this.drafts.length) this.drafts[this.draftCount] = draft;
    else this.drafts.push(draft);
    this.draftCount++;
  }

  /** Per block with a Device event in the outbox, whether it was held before the first of them (null: none). */
  pendingDeviceChanges(): Map<BlockId, boolean> | null {
    let heldBefore: Map<BlockId, boolean> | null = null;
    for (let i = 0; i < this.draftCount; i++) {
      const draft = this.drafts[i];
      if (typeof draft === 'number') {
        heldBefore ??= new Map();
        if (!heldBefore.has(draft)) heldBefore.set(draft, true);
      } else if (draft.tier === 'Device' && draft.data instanceof StoredIds) {
        heldBefore ??= new Map();
        for (const id of draft.data.block_ids) if (!heldBefore.has(id)) heldBefore.set(id, false);
      }
    }
    return heldBefore;
  }

  /** The events due, numbered on `stream` in order (consecutive evictions as one Device Removed of all their blocks); the outbox is then empty. */
  flush(stream: RankEventStream): KvEvent[] {
    const drafts = this.drafts;
    const count = this.draftCount;
    const events: KvEvent[] = [];
    for (let i = 0; i < count; ) {
      const draft = drafts[i];
      if (typeof draft !== 'number') {
        events.push(stream.numbered(draft.tier, draft.data));
        // The draft is let go of here (the array is reused; a stale entry would keep its event data alive).
        drafts[i] = 0;
        i++;
        continue;
      }
      let end = i + 1;
      while (end < count && typeof drafts[end] === 'number') end++;
      const ids = new Int32Array(end - i);
      for (let k = 0; k < ids.length; k++) ids[k] = drafts[i + k] as BlockId;
      // The outbox held each evicted id once: the event takes those holds.
      events.push(stream.numbered('Device', RemovedIds.takingHolds(this.blockIds, ids)));
      i = end;
    }
    this.draftCount = 0;
    return events;
  }
}
