// The deterministic event kernel: an integer-nanosecond clock and a priority queue that drains
// each instant to a fixed point in the phase order of TIME-3, with stable tie-breaks; a scheduled
// action can be cancelled, and the action running now can be compared with any (time, phase, order).
import type { Nanos } from './time';
import { formatNs, LAST_VIRTUAL_NS, VirtualClockError, virtualDays } from './time';

/** Phases of one instant, in the order TIME-3 runs them. */
export enum Phase {
  TransferCompletion = 1,
  PassCompletion = 2,
  EventVisibility = 3,
  Arrival = 4,
  Dispatch = 5,
  PassStart = 6,
}

export const PHASE_NAMES: Record<Phase, string> = {
  [Phase.TransferCompletion]: 'transfer completion',
  [Phase.PassCompletion]: 'pass completion',
  [Phase.EventVisibility]: 'KV event visibility',
  [Phase.Arrival]: 'arrival',
  [Phase.Dispatch]: 'dispatch',
  [Phase.PassStart]: 'pass start',
};

const FIRST_PHASE = Phase.TransferCompletion;
const LAST_PHASE = Phase.PassStart;

export type Action = () => void;

export class InvariantError extends Error {}

/** The run still had work after the kernel event budget it was given (a livelock, or a run too long for that budget). */
export class UnsettledError extends InvariantError {
  constructor(
    readonly events: number,
    readonly now_ns: number,
    readonly queued: number,
  ) {
    super(`the simulation did not settle: ${events} kernel events processed by ${formatNs(now_ns)} and ${queued} still queued (a livelock?)`);
  }
}

/** Entries a new queue has room for (it doubles when full): a generated case of the fuzzer queues a few dozen at once, and makes two kernels. */
const INITIAL_CAPACITY = 64;
/** onTick is called once per 2^16 actions run (the mask of the low bits of the count). */
const TICK_EVERY_MASK = (1 << 16) - 1;
const HEAP_ARITY = 4;

/**
 * A 4-ary min-heap of scheduled actions ordered by (time, phase, order, seq), where seq is the
 * schedule call's sequence number: the last resort for equal (time, phase, order).
 * Entries are stored column-wise in typed arrays (one slot per entry, moved as a whole), so
 * sifting reads contiguous numbers instead of chasing one object per entry, and four children
 * per node halve the levels a removal walks. With a million entries queued this is about three
 * times faster than a binary heap of entry objects (npm run bench -- kernel).
 */
class EntryHeap {
  private times = new Float64Array(INITIAL_CAPACITY);
  private phases = new Uint8Array(INITIAL_CAPACITY);
  /** Stable identity inside the phase (e.g. worker/rank index, request ordinal, FIFO number). */
  private orders = new Float64Array(INITIAL_CAPACITY);
  private seqs = new Float64Array(INITIAL_CAPACITY);
  private actions: (Action | undefined)[] = new Array<Action | undefined>(INITIAL_CAPACITY);
  private length = 0;

  get size(): number {
    return this.length;
  }
  /** Time of the earliest entry; only meaningful when size > 0 (as are the three below). */
  topTime(): Nanos {
    return this.times[0];
  }
  topPhase(): Phase {
    return this.phases[0];
  }
  topOrder(): number {
    return this.orders[0];
  }
  topSeq(): number {
    return this.seqs[0];
  }

  push(time: Nanos, phase: Phase, order: number, seq: number, action: Action): void {
    if (this.length === this.times.length) this.grow();
    this.siftUp(this.length++, time, phase, order, seq, action);
  }

  /** Removes the earliest entry and returns its action; the heap must not be empty. */
  pop(): Action {
    const top = this.actions[0]!;
    const last = --this.length;
    if (last > 0) this.refillRoot(last);
    this.actions[last] = undefined;
    return top;
  }

  /**
   * Fills the root's hole with the entry in slot `last` (now outside the heap), bottom-up: the
   * hole first walks down to a leaf along the earliest child, then the entry climbs from there.
   * The last entry is late, so it rarely climbs far.
   */
  private refillRoot(last: number): void {
    const time = this.times[last];
    const phase = this.phases[last];
    const order = this.orders[last];
    const seq = this.seqs[last];
    const action = this.actions[last]!;
    let index = 0;
    for (;;) {
      const first = HEAP_ARITY * index + 1;
      if (first >= last) break;
      const child = this.earliestSlot(first, Math.min(first + HEAP_ARITY, last));
      this.moveSlot(child, index);
      index = child;
    }
    this.siftUp(index, time, phase, order, seq, action);
  }

  /** The earliest of the sibling slots [first, end): by time, and by the full order on a tie. */
  private earliestSlot(first: number, end: number): number {
    const times = this.times;
    let earliest = first;
    let earliestTime = times[first];
    for (let sibling = first + 1; sibling < end; sibling++) {
      const siblingTime = times[sibling];
      if (siblingTime < earliestTime || (siblingTime === earliestTime && this.slotBeforeSlot(sibling, earliest))) {
        earliest = sibling;
        earliestTime = siblingTime;
      }
    }
    return earliest;
  }

  /** Writes the entry into the hole at `index`, first moving down every parent that runs after it. */
  private siftUp(index: number, time: Nanos, phase: Phase, order: number, seq: number, action: Action): void {
    while (index > 0) {
      const parent = ((index - 1) / HEAP_ARITY) | 0;
      if (!this.entryBeforeSlot(time, phase, order, seq, parent)) break;
      this.moveSlot(parent, index);
      index = parent;
    }
    this.writeSlot(index, time, phase, order, seq, action);
  }

  /** Whether this heap's earliest entry runs before the earliest of `other` (both not empty). */
  topBefore(other: EntryHeap): boolean {
    return other.entryBeforeSlot(this.times[0], this.phases[0], this.orders[0], this.seqs[0], 0);
  }

  private entryBeforeSlot(time: Nanos, phase: number, order: number, seq: number, slot: number): boolean {
    const slotTime = this.times[slot];
    if (time !== slotTime) return time < slotTime;
    const slotPhase = this.phases[slot];
    if (phase !== slotPhase) return phase < slotPhase;
    const slotOrder = this.orders[slot];
    if (order !== slotOrder) return order < slotOrder;
    return seq < this.seqs[slot];
  }

  private slotBeforeSlot(a: number, b: number): boolean {
    return this.entryBeforeSlot(this.times[a], this.phases[a], this.orders[a], this.seqs[a], b);
  }

  private moveSlot(from: number, to: number): void {
    this.times[to] = this.times[from];
    this.phases[to] = this.phases[from];
    this.orders[to] = this.orders[from];
    this.seqs[to] = this.seqs[from];
    this.actions[to] = this.actions[from];
  }

  private writeSlot(slot: number, time: Nanos, phase: Phase, order: number, seq: number, action: Action): void {
    this.times[slot] = time;
    this.phases[slot] = phase;
    this.orders[slot] = order;
    this.seqs[slot] = seq;
    this.actions[slot] = action;
  }

  private grow(): void {
    const capacity = this.times.length * 2;
    this.times = copyInto(new Float64Array(capacity), this.times);
    this.phases = copyInto(new Uint8Array(capacity), this.phases);
    this.orders = copyInto(new Float64Array(capacity), this.orders);
    this.seqs = copyInto(new Float64Array(capacity), this.seqs);
    this.actions.length = capacity;
  }
}

function copyInto<T extends Float64Array | Uint8Array>(target: T, source: T): T {
  target.set(source);
  return target;
}

/** The virtual clock and its queue. Time only moves forward; violations fail loudly. */
export class Kernel {
  private nowNs: Nanos = 0;
  private seq = 0;
  private processed = 0;
  /**
   * Called after every 65,536th action, for a progress display in a long stretch where nothing
   * else reports (no request ends during a spin on preemption); it must not schedule or change
   * anything.
   */
  onTick: (() => void) | null = null;
  /**
   * The queue, as two heaps: arrivals in one of their own and every other action in the other. A
   * replay schedules all its arrivals up front, thousands, while the other actions queued at once
   * are a few per rank: kept apart, those are taken from a heap a few levels deep. The earlier of
   * the two heaps' first entries, in the full order, runs next.
   */
  private readonly queue = new EntryHeap();
  private readonly arrivals = new EntryHeap();
  /** Phase and order of the action running now (Arrival / 0 before the run). */
  private phaseNow: Phase = Phase.Arrival;
  private orderNow = 0;
  /**
   * The greatest (phase, order) of the actions that ran earlier at this instant (phase 0: none).
   * An instant is drained to a fixed point: an action may schedule another into an earlier phase
   * of the same instant, so the kernel can run phase 6 and then phase 4 again; what ran before the
   * action running now is then more than the keys below its own (see ranBefore).
   */
  private highPhase = 0;
  private highOrder = 0;
  /** Sequence numbers of scheduled actions that were cancelled and are still queued. */
  private readonly cancelled = new Set<number>();

  get now(): Nanos {
    return this.nowNs;
  }
  /** The phase of the action running now. */
  get phase(): Phase {
    return this.phaseNow;
  }
  /** The order key of the action running now. */
  get order(): number {
    return this.orderNow;
  }

  /**
   * Whether an action at (time, phase, order), queued since before this instant, would have run
   * before the action running now: at an earlier time, or at this instant below the key of the
   * action running now or at most the greatest key that ran earlier at this instant (the queue
   * would have given it out before that one). Equal to the key running now counts as after.
   */
  ranBefore(time: Nanos, phase: Phase, order: number): boolean {
    if (time !== this.nowNs) return time < this.nowNs;
    if (phase !== this.phaseNow ? phase < this.phaseNow : order < this.orderNow) return true;
    return phase < this.highPhase || (phase === this.highPhase && order <= this.highOrder);
  }
  get eventsProcessed(): number {
    return this.processed;
  }
  /** Actions queued and not cancelled. */
  get pending(): number {
    return this.queue.size + this.arrivals.size - this.cancelled.size;
  }

  /** Schedules an action at an absolute instant, in a phase, with a stable order key; returns its handle (for cancel). */
  at(time: Nanos, phase: Phase, order: number, action: Action): number {
    if (!Number.isSafeInteger(time)) {
      // An instant past the clock's end comes from the input (long passes, delays or outputs); any other non-integer from a defect.
      if (time > LAST_VIRTUAL_NS) throw new VirtualClockError(`the ${PHASE_NAMES[phase] ?? 'kernel event'} due at ${virtualDays(time)}`);
      throw new InvariantError(`cannot schedule at ${time}: virtual time is whole nanoseconds`);
    }
    if (!(phase >= FIRST_PHASE && phase <= LAST_PHASE && Number.isInteger(phase))) {
      throw new InvariantError(`cannot schedule at ${formatNs(time)}: ${phase} is not a phase of TIME-3`);
    }
    if (time < this.nowNs) {
      throw new InvariantError(
        `cannot schedule ${PHASE_NAMES[phase]} at ${formatNs(time)}: the clock is already at ${formatNs(this.nowNs)}`,
      );
    }
    const handle = this.seq++;
    (phase === Phase.Arrival ? this.arrivals : this.queue).push(time, phase, order, handle, action);
    return handle;
  }

  /** Cancels a scheduled action that has not run: it will neither run nor move the clock. */
  cancel(handle: number): void {
    if (!Number.isInteger(handle) || handle < 0 || handle >= this.seq) throw new InvariantError(`cannot cancel action ${handle}: it was never scheduled`);
    this.cancelled.add(handle);
  }

  /**
   * Runs every action due at or before `limit` (default: until the queue is empty). With
   * `maxEvents`, a run that processes more actions than that (a livelock: work that never settles)
   * fails loudly instead of running forever.
   */
  run(limit: Nanos = Number.MAX_SAFE_INTEGER, maxEvents = Number.POSITIVE_INFINITY): void {
    const budgetEnd = this.processed + maxEvents;
    for (;;) {
      const queue = this.earliestHeap();
      if (queue === null) break;
      if (this.processed >= budgetEnd) {
        throw new UnsettledError(maxEvents, this.nowNs, this.queue.size + this.arrivals.size);
      }
      if (this.cancelled.size > 0 && this.cancelled.delete(queue.topSeq())) {
        queue.pop();
        continue;
      }
      const time = queue.topTime();
      if (time > limit) break;
      if (time < this.nowNs) {
        throw new InvariantError(`time moved backwards: ${formatNs(this.nowNs)} → ${formatNs(time)}`);
      }
      this.foldIntoInstant(time);
      this.phaseNow = queue.topPhase();
      this.orderNow = queue.topOrder();
      const action = queue.pop();
      this.nowNs = time;
      this.processed++;
      action();
      if ((this.processed & TICK_EVERY_MASK) === 0 && this.onTick !== null) this.onTick();
    }
  }

  /** Before the next action runs: the one that ran last joins this instant's high mark, or a new instant starts with none. */
  private foldIntoInstant(time: Nanos): void {
    if (time !== this.nowNs || this.processed === 0) {
      this.highPhase = 0;
      this.highOrder = 0;
    } else if (this.phaseNow > this.highPhase || (this.phaseNow === this.highPhase && this.orderNow > this.highOrder)) {
      this.highPhase = this.phaseNow;
      this.highOrder = this.orderNow;
    }
  }

  /** The time of the next queued action, if any. */
  nextTime(): Nanos | undefined {
    for (;;) {
      const queue = this.earliestHeap();
      if (queue === null) return undefined;
      if (this.cancelled.size > 0 && this.cancelled.delete(queue.topSeq())) queue.pop();
      else return queue.topTime();
    }
  }

  /** The heap whose first entry runs next (null when both are empty). */
  private earliestHeap(): EntryHeap | null {
    const queue = this.queue;
    const arrivals = this.arrivals;
    if (arrivals.size === 0) return queue.size === 0 ? null : queue;
    return queue.size > 0 && queue.topBefore(arrivals) ? queue : arrivals;
  }
}
