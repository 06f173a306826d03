// Event transport with kv_event_lag_ms (LAG-1, LAG-2): batches are delivered to the router in
// FIFO order, visible at exactly emission time + lag, in the event-visibility phase (TIME-3).
import { Kernel, Phase, InvariantError } from '../kernel';
import type { Nanos } from '../time';
import { formatNs } from '../time';
import type { KvEventBatch } from './model';
import { plainEvent } from './model';
import * as simulatorFaults from '../fuzz/simulatorFaults';
// The planted-fault hook, read per batch, is copied into this module once: run through tsx, every
// read of an imported binding is a getter call (esbuild's live bindings).
const faultPlanted = simulatorFaults.faultPlanted;

export interface DeliveredBatch {
  batch: KvEventBatch;
  visible_ns: Nanos;
}

export class EventTransport {
  private fifoNumber = 0;
  private lastVisibleNs = 0;
  private deliveredCount = 0;
  /** Every delivered batch, in order, when history is kept (scenarios, evidence); empty otherwise. */
  readonly delivered: DeliveredBatch[] = [];

  constructor(
    private readonly kernel: Kernel,
    readonly lag_ns: Nanos,
    private readonly deliver: (batch: KvEventBatch) => void,
    private readonly keepHistory = true,
    /** Told of each batch as it is delivered, before the router applies it (e.g. to stream an event log). */
    private readonly onDelivered: ((batch: KvEventBatch, visible_ns: Nanos) => void) | null = null,
  ) {
    if (!Number.isSafeInteger(lag_ns) || lag_ns < 0) throw new RangeError(`kv_event_lag ${lag_ns} ns must be a non-negative integer`);
  }

  /** Batches delivered so far (kept or not). */
  get deliveredBatches(): number {
    return this.deliveredCount;
  }

  /** Emits a batch now; the router sees it at now + lag, after batches emitted earlier. */
  emit(batch: KvEventBatch): void {
    if (batch.emitted_ns !== this.kernel.now) {
      throw new InvariantError(
        `batch from worker ${batch.worker_id} stamped ${formatNs(batch.emitted_ns)} emitted at ${formatNs(this.kernel.now)}`,
      );
    }
    const visible_ns = batch.emitted_ns + (faultPlanted('lag') ? 2 : 1) * this.lag_ns; // planted fault (src/fuzz/simulatorFaults.ts)
    if (visible_ns < this.lastVisibleNs) {
      throw new InvariantError(`FIFO violated: batch visible at ${formatNs(visible_ns)} after one at ${formatNs(this.lastVisibleNs)}`);
    }
    this.lastVisibleNs = visible_ns;
    this.kernel.at(visible_ns, Phase.EventVisibility, this.fifoNumber++, () => {
      this.deliveredCount++;
      // History keeps hashes: an event's block ids are released once the router has applied it.
      if (this.keepHistory) this.delivered.push({ batch: { ...batch, events: batch.events.map(plainEvent) }, visible_ns });
      this.onDelivered?.(batch, visible_ns);
      this.deliver(batch);
    });
  }
}
