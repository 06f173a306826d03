// The deterministic event kernel: an integer-nanosecond clock and a priority queue that drains
// each instant to a fixed point in the phase order of TIME-3, with stable tie-breaks.
import type { Nanos } from './time';
import { formatNs } from './time';

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

export type Action = () => void;

interface Entry {
  time: Nanos;
  phase: Phase;
  /** Stable identity inside the phase (e.g. worker/rank index, request ordinal, FIFO number). */
  order: number;
  /** Last resort for equal (time, phase, order): the schedule call's sequence number. */
  seq: number;
  action: Action;
}

export class InvariantError extends Error {}

function before(a: Entry, b: Entry): boolean {
  if (a.time !== b.time) return a.time < b.time;
  if (a.phase !== b.phase) return a.phase < b.phase;
  if (a.order !== b.order) return a.order < b.order;
  return a.seq < b.seq;
}

/** A binary min-heap of entries ordered by (time, phase, order, seq). */
class EntryHeap {
  private readonly items: Entry[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): Entry | undefined {
    return this.items[0];
  }
  push(entry: Entry): void {
    const items = this.items;
    let index = items.length;
    items.push(entry);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(entry, items[parent])) break;
      items[index] = items[parent];
      index = parent;
    }
    items[index] = entry;
  }
  pop(): Entry | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let index = 0;
    const length = items.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && before(items[right], items[left]) ? right : left;
      if (!before(items[child], last)) break;
      items[index] = items[child];
      index = child;
    }
    items[index] = last;
    return top;
  }
}

/** The virtual clock and its queue. Time only moves forward; violations fail loudly. */
export class Kernel {
  private nowNs: Nanos = 0;
  private seq = 0;
  private processed = 0;
  private readonly queue = new EntryHeap();

  get now(): Nanos {
    return this.nowNs;
  }
  get eventsProcessed(): number {
    return this.processed;
  }
  get pending(): number {
    return this.queue.size;
  }

  /** Schedules an action at an absolute instant, in a phase, with a stable order key. */
  at(time: Nanos, phase: Phase, order: number, action: Action): void {
    if (!Number.isSafeInteger(time)) {
      throw new InvariantError(`cannot schedule at ${time}: virtual time is whole nanoseconds`);
    }
    if (time < this.nowNs) {
      throw new InvariantError(
        `cannot schedule ${PHASE_NAMES[phase]} at ${formatNs(time)}: the clock is already at ${formatNs(this.nowNs)}`,
      );
    }
    this.queue.push({ time, phase, order, seq: this.seq++, action });
  }

  /** Runs every action due at or before `limit` (default: until the queue is empty). */
  run(limit: Nanos = Number.MAX_SAFE_INTEGER): void {
    for (;;) {
      const next = this.queue.peek();
      if (next === undefined || next.time > limit) break;
      this.queue.pop();
      if (next.time < this.nowNs) {
        throw new InvariantError(`time moved backwards: ${formatNs(this.nowNs)} → ${formatNs(next.time)}`);
      }
      this.nowNs = next.time;
      this.processed++;
      next.action();
    }
  }

  /** The time of the next queued action, if any. */
  nextTime(): Nanos | undefined {
    return this.queue.peek()?.time;
  }
}
