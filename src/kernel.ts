// The deterministic event kernel: an integer-nanosecond clock and a priority queue that drains
// each instant to a fixed point in the phase order of TIME-3, with stable tie-breaks; a scheduled
// action can be cancelled, and the action running now can be compared with any (time, phase, order).
import type { Nanos } from './time';
import { formatNs, LAST_VIRTUAL_NS, VirtualClockError, virtualDays } from './time';
import type { Action } from './kernelQueue';
import { MonotoneQueue } from './kernelQueue';

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

export type { Action };

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

/** onTick is called once per 2^16 actions run (the mask of the low bits of the count). */
const TICK_EVERY_MASK = (1 << 16) - 1;

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
  /** The queue (src/kernelQueue.ts): every queued time is at or after the clock. */
  private readonly queue = new MonotoneQueue();
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
    return this.queue.size - this.cancelled.size;
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
    this.queue.push(time, phase, order, handle, action);
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
    const queue = this.queue;
    while (queue.settle()) {
      if (this.processed >= budgetEnd) {
        throw new UnsettledError(maxEvents, this.nowNs, queue.size);
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
    const queue = this.queue;
    while (queue.settle()) {
      if (this.cancelled.size > 0 && this.cancelled.delete(queue.topSeq())) queue.pop();
      else return queue.topTime();
    }
    return undefined;
  }
}
