// The event kernel's queue: scheduled actions taken out in (time, phase, order, seq) order, for
// times that never go below the last one taken out (the virtual clock only moves forward). A radix
// heap over the integer times, whose lowest level is the instant being run: a small heap ordered
// by (phase, order, seq).
import type { Nanos } from './time';
import { grownInt32 } from './collections/typedArrays';

export type Action = () => void;

/** Entries a new queue has room for (it doubles when full); a generated case of the fuzzer queues a few dozen at once. */
const INITIAL_CAPACITY = 64;
/**
 * A time is read as 7 digits of 8 bits (levels 0..3 in its low word, 4..6 in its high one). A
 * later entry waits in the bucket of the highest level at which its time's digit differs from the
 * instant's, and of its digit there: bucket level × 256 + digit.
 */
const DIGIT_BITS = 8;
const DIGITS = 1 << DIGIT_BITS;
const LEVELS = 7;
const BUCKETS = LEVELS * DIGITS;
/** Words of a level's bitmap of non-empty buckets. */
const WORDS_PER_LEVEL = DIGITS / 32;
const HIGH_WORD = 4294967296;
/** Numbers per slot in the keys (phase, order, seq and one unused, so that a slot never straddles a cache line). */
const KEY_STRIDE = 4;

/**
 * A monotone priority queue of scheduled actions. Every queued time is at least the instant's
 * time `instantNs`: the entries at that instant wait in a binary heap ordered by (phase, order,
 * seq); each later entry waits, unordered, in the bucket of the highest 8-bit digit in which its
 * time differs from the instant's, and of its value there. When the instant's heap is empty, the
 * lowest non-empty bucket gives the next instant (its earliest time), and its entries move to the
 * instant's heap or to lower buckets. An entry moves down at most once per digit, by a sequential
 * append, where a heap of all entries walks a dozen levels of a large array for each one taken out
 * (about 760,000 queued at once in `npm run bench -- kernel`). Times are whole nanoseconds up to 2^53.
 *
 * Entries live in slots (phase, order, seq, action by slot, reused once taken out); buckets and
 * the instant's heap hold slot numbers, the buckets beside each entry's time.
 */
export class MonotoneQueue {
  /** Each slot's phase, order and seq side by side (KEY_STRIDE numbers a slot), read together when the entry meets the instant's heap. */
  private keys = new Float64Array(INITIAL_CAPACITY * KEY_STRIDE);
  private actions: (Action | undefined)[] = new Array<Action | undefined>(INITIAL_CAPACITY);
  /** Slots free for reuse (a stack), and the first slot never used. */
  private freeSlots = new Int32Array(INITIAL_CAPACITY);
  private freeCount = 0;
  private slotsUsed = 0;

  /** Each bucket's times and slots (made when first used; copies of lists of empty ones, a builtin's copy rather than thousands of pushes per queue) and its length. */
  private readonly bucketTimes: Float64Array[] = NO_BUCKET_TIMES.slice();
  private readonly bucketSlots: Int32Array<ArrayBuffer>[] = NO_BUCKET_SLOTS.slice();
  private readonly bucketLengths = new Int32Array(BUCKETS);
  /** Non-empty buckets: a bitmap of each level's digits, and the levels with any as bits. */
  private readonly bucketBits = new Int32Array(LEVELS * WORDS_PER_LEVEL);
  private levelMask = 0;

  /** The instant: its time (split in words for the bucket of a time) and its heap of slots. */
  private instantNs: Nanos = 0;
  private instantHigh = 0;
  private instantLow = 0;
  private instantHeap = new Int32Array(INITIAL_CAPACITY);
  private instantLength = 0;

  private length = 0;

  get size(): number {
    return this.length;
  }

  push(time: Nanos, phase: number, order: number, seq: number, action: Action): void {
    if (time < this.instantNs) this.rebase(time);
    const slot = this.takeSlot();
    const at = slot * KEY_STRIDE;
    this.keys[at] = phase;
    this.keys[at + 1] = order;
    this.keys[at + 2] = seq;
    this.actions[slot] = action;
    this.place(time, slot);
    this.length++;
  }

  /** Whether an entry is queued, with the earliest in the instant's heap (call before reading the top). */
  settle(): boolean {
    if (this.instantLength > 0) return true;
    if (this.length === 0) return false;
    this.nextInstant();
    return true;
  }

  /** Time of the earliest entry; only meaningful after settle() said true (as are the three below). */
  topTime(): Nanos {
    return this.instantNs;
  }
  topPhase(): number {
    return this.keys[this.instantHeap[0] * KEY_STRIDE];
  }
  topOrder(): number {
    return this.keys[this.instantHeap[0] * KEY_STRIDE + 1];
  }
  topSeq(): number {
    return this.keys[this.instantHeap[0] * KEY_STRIDE + 2];
  }

  /** Removes the earliest entry and returns its action; only after settle() said true. */
  pop(): Action {
    const heap = this.instantHeap;
    const slot = heap[0];
    const last = --this.instantLength;
    if (last > 0) this.siftDown(heap[last], last);
    const action = this.actions[slot]!;
    this.actions[slot] = undefined;
    this.freeSlot(slot);
    this.length--;
    return action;
  }

  /** Puts the entry in `slot`, due at `time` (not before the instant), in the instant's heap or its bucket. */
  private place(time: Nanos, slot: number): void {
    const high = Math.floor(time / HIGH_WORD);
    const highDiffers = high ^ this.instantHigh;
    let bucket: number;
    if (highDiffers !== 0) {
      const level = (31 - Math.clz32(highDiffers)) >> 3;
      bucket = (4 + level) * DIGITS + ((high >>> (level << 3)) & 255);
    } else {
      const low = time >>> 0;
      const lowDiffers = low ^ this.instantLow;
      if (lowDiffers === 0) {
        this.instantPush(slot);
        return;
      }
      const level = (31 - Math.clz32(lowDiffers)) >> 3;
      bucket = level * DIGITS + ((low >>> (level << 3)) & 255);
    }
    const n = this.bucketLengths[bucket];
    if (n === this.bucketSlots[bucket].length) this.growBucket(bucket);
    this.bucketTimes[bucket][n] = time;
    this.bucketSlots[bucket][n] = slot;
    this.bucketLengths[bucket] = n + 1;
    if (n === 0) {
      this.bucketBits[bucket >> 5] |= 1 << (bucket & 31);
      this.levelMask |= 1 << (bucket >> DIGIT_BITS);
    }
  }

  /** The lowest non-empty bucket: the lowest level with any, its lowest digit (entries are queued). */
  private lowestBucket(): number {
    const level = lowestBit(this.levelMask);
    const bits = this.bucketBits;
    for (let word = level * WORDS_PER_LEVEL; ; word++) if (bits[word] !== 0) return (word << 5) + lowestBit(bits[word]);
  }

  private emptyBucket(bucket: number): void {
    this.bucketLengths[bucket] = 0;
    const bits = this.bucketBits;
    bits[bucket >> 5] &= ~(1 << (bucket & 31));
    const level = bucket >> DIGIT_BITS;
    for (let word = level * WORDS_PER_LEVEL; word < (level + 1) * WORDS_PER_LEVEL; word++) if (bits[word] !== 0) return;
    this.levelMask &= ~(1 << level);
  }

  /**
   * The instant's heap is empty and entries are queued: the earliest time of the lowest bucket
   * becomes the instant, and that bucket's entries move to its heap or to lower levels (they
   * share the bucket's digit and those above it with the new instant).
   */
  private nextInstant(): void {
    const bucket = this.lowestBucket();
    const n = this.bucketLengths[bucket];
    const times = this.bucketTimes[bucket];
    const slots = this.bucketSlots[bucket];
    let earliest = times[0];
    for (let i = 1; i < n; i++) if (times[i] < earliest) earliest = times[i];
    this.setInstant(earliest);
    this.emptyBucket(bucket);
    for (let i = 0; i < n; i++) this.place(times[i], slots[i]);
  }

  private setInstant(time: Nanos): void {
    this.instantNs = time;
    this.instantHigh = Math.floor(time / HIGH_WORD);
    this.instantLow = time >>> 0;
  }

  /**
   * An entry due before the instant (possible only once the kernel found the next instant without
   * running it: a run stopped at a limit, or nextTime): every queued entry is placed again from
   * that earlier time.
   */
  private rebase(time: Nanos): void {
    const queued: number[] = [];
    const slots: number[] = [];
    for (let i = 0; i < this.instantLength; i++) {
      queued.push(this.instantNs);
      slots.push(this.instantHeap[i]);
    }
    this.instantLength = 0;
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      for (let i = 0; i < this.bucketLengths[bucket]; i++) {
        queued.push(this.bucketTimes[bucket][i]);
        slots.push(this.bucketSlots[bucket][i]);
      }
      this.bucketLengths[bucket] = 0;
    }
    this.bucketBits.fill(0);
    this.levelMask = 0;
    this.setInstant(time);
    for (let i = 0; i < queued.length; i++) this.place(queued[i], slots[i]);
  }

  private instantPush(slot: number): void {
    if (this.instantLength === this.instantHeap.length) this.instantHeap = grownInt32(this.instantHeap, this.instantLength + 1);
    let index = this.instantLength++;
    const heap = this.instantHeap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.slotBefore(slot, heap[parent])) break;
      heap[index] = heap[parent];
      index = parent;
    }
    heap[index] = slot;
  }

  /** Fills the root's hole with `slot` (formerly at `end`, now outside the heap). */
  private siftDown(slot: number, end: number): void {
    const heap = this.instantHeap;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= end) break;
      if (child + 1 < end && this.slotBefore(heap[child + 1], heap[child])) child++;
      if (!this.slotBefore(heap[child], slot)) break;
      heap[index] = heap[child];
      index = child;
    }
    heap[index] = slot;
  }

  /** Whether the entry in slot `a` runs before the one in `b` at the same instant: by phase, order, then seq. */
  private slotBefore(a: number, b: number): boolean {
    const keys = this.keys;
    const atA = a * KEY_STRIDE;
    const atB = b * KEY_STRIDE;
    const phaseA = keys[atA];
    const phaseB = keys[atB];
    if (phaseA !== phaseB) return phaseA < phaseB;
    const orderA = keys[atA + 1];
    const orderB = keys[atB + 1];
    if (orderA !== orderB) return orderA < orderB;
    return keys[atA + 2] < keys[atB + 2];
  }

  private takeSlot(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    if (this.slotsUsed === this.actions.length) this.growSlots();
    return this.slotsUsed++;
  }

  private freeSlot(slot: number): void {
    this.freeSlots[this.freeCount++] = slot;
  }

  private growSlots(): void {
    const capacity = this.actions.length * 2;
    const keys = new Float64Array(capacity * KEY_STRIDE);
    keys.set(this.keys);
    this.keys = keys;
    this.actions.length = capacity;
    this.freeSlots = grownInt32(this.freeSlots, capacity);
  }

  private growBucket(bucket: number): void {
    const slots = grownInt32(this.bucketSlots[bucket], this.bucketSlots[bucket].length + 1);
    const times = new Float64Array(slots.length);
    times.set(this.bucketTimes[bucket]);
    this.bucketTimes[bucket] = times;
    this.bucketSlots[bucket] = slots;
  }
}

const EMPTY_TIMES = new Float64Array(0);
const EMPTY_SLOTS = new Int32Array(0);
/** Every bucket empty: what a new queue copies (built by pushes, so that the copies are packed arrays, as the hot path reads best). */
const NO_BUCKET_TIMES: Float64Array[] = [];
const NO_BUCKET_SLOTS: Int32Array<ArrayBuffer>[] = [];
for (let bucket = 0; bucket < BUCKETS; bucket++) {
  NO_BUCKET_TIMES.push(EMPTY_TIMES);
  NO_BUCKET_SLOTS.push(EMPTY_SLOTS);
}

/** The index of the lowest set bit of a non-zero 32-bit mask. */
function lowestBit(mask: number): number {
  return 31 - Math.clz32(mask & -mask);
}
