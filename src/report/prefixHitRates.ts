// Prefix hit rates in the three definitions papers publish (docs/glossary.md, "prefix hit rates"):
// token-weighted (Σ reused tokens ÷ Σ prompt tokens), block-weighted (Σ hit blocks ÷ Σ requested
// blocks) and request-averaged (the mean over requests of each one's hit blocks ÷ its requested
// blocks), each measured and as the policy-free infinite-cache ceiling, where a request's hit is
// the longest prefix of its blocks seen in any earlier request, and the share of the ceiling a run
// realised. Owns the ceiling's record of blocks seen (PrefixCeiling, and TableCeiling beside a run's
// block id table) and the arithmetic.
import type { BlockIds } from '../collections/blockIds';

/**
 * The blocks of every request seen so far, by sequence hash (two 32-bit words: a block's hash
 * stands for its whole prefix, so a prefix was seen exactly when its last block was). An
 * open-addressing set of its own, specialised for this one use (a hash is two words, nothing is
 * removed): a replay of the whole conversation trace adds two million blocks to it.
 */
export class PrefixCeiling {
  /**
   * Cell c holds a hash's low word at 2c and its high word at 2c + 1; a cell of two zero words is
   * free (the hash 0 itself is kept apart, in zeroSeen), so a probe reads one cache line.
   */
  private words = new Int32Array(2 * INITIAL_CELLS);
  private mask = INITIAL_CELLS - 1;
  private count = 0;
  private zeroSeen = false;
  /** What the last observe's first pass read (nothing else reads it): stored, so that the compiler keeps the reads. */
  touched = 0;

  /**
   * Records a request's blocks (key words at `stride` × i and + 1) and returns how many leading
   * blocks an earlier request had: its hit with an infinite cache.
   */
  observe(words: Int32Array, stride: number): number {
    // Each block's home cell is read first: the blocks sit in cells all over a table larger than the
    // cache, and reads that do not depend on each other let their cache misses overlap.
    while (4 * (this.count + words.length / stride) > 3 * (this.mask + 1)) this.grow();
    let touched = 0;
    for (let at = 0; at + 1 < words.length; at += stride) touched ^= this.words[2 * this.home(words[at] | 0, words[at + 1] | 0)];
    this.touched = touched;
    let hits = 0;
    let leading = true;
    for (let at = 0; at + 1 < words.length; at += stride) {
      const earlier = !this.add(words[at] | 0, words[at + 1] | 0);
      if (leading && earlier) hits++;
      else leading = false;
    }
    return hits;
  }

  /** Adds a hash (its two words) to the blocks seen. */
  record(lo: number, hi: number): void {
    this.add(lo | 0, hi | 0);
  }

  /**
   * Adds the hashes of `words[0, wordCount)` (low and high word of each, side by side) to the blocks
   * seen. As in observe, every home cell is read first, so that their cache misses overlap, and the
   * table grows at most once, before the batch.
   */
  recordAll(words: Int32Array, wordCount: number): void {
    while (4 * (this.count + wordCount / 2) > 3 * (this.mask + 1)) this.grow();
    let touched = 0;
    for (let at = 0; at + 1 < wordCount; at += 2) touched ^= this.words[2 * this.home(words[at] | 0, words[at + 1] | 0)];
    this.touched = touched;
    for (let at = 0; at + 1 < wordCount; at += 2) this.add(words[at] | 0, words[at + 1] | 0);
  }

  /** Whether a hash (its two words) was seen. */
  has(lo: number, hi: number): boolean {
    lo |= 0;
    hi |= 0;
    if ((lo | hi) === 0) return this.zeroSeen;
    const cell = this.cellOf(lo, hi);
    return (this.words[2 * cell] | this.words[2 * cell + 1]) !== 0;
  }

  /** Adds a hash; false when it was there already. */
  private add(lo: number, hi: number): boolean {
    if ((lo | hi) === 0) {
      if (this.zeroSeen) return false;
      this.zeroSeen = true;
      return true;
    }
    if (4 * (this.count + 1) > 3 * (this.mask + 1)) this.grow();
    const cell = this.cellOf(lo, hi);
    if ((this.words[2 * cell] | this.words[2 * cell + 1]) !== 0) return false;
    this.words[2 * cell] = lo;
    this.words[2 * cell + 1] = hi;
    this.count++;
    return true;
  }

  /** The cell holding the (non-zero) hash, or the free cell where its probe run ends. */
  private cellOf(lo: number, hi: number): number {
    const words = this.words;
    for (let cell = this.home(lo, hi); ; cell = (cell + 1) & this.mask) {
      const cellLo = words[2 * cell];
      const cellHi = words[2 * cell + 1];
      if ((cellLo | cellHi) === 0 || (cellLo === lo && cellHi === hi)) return cell;
    }
  }

  /** Where a hash's probe run starts. */
  private home(lo: number, hi: number): number {
    const mixed = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
    return (mixed ^ (mixed >>> 16)) & this.mask;
  }

  private grow(): void {
    const words = this.words;
    const cells = words.length; // twice the cells there were
    this.words = new Int32Array(2 * cells);
    this.mask = cells - 1;
    for (let at = 0; at < words.length; at += 2) {
      if ((words[at] | words[at + 1]) === 0) continue;
      const into = this.cellOf(words[at], words[at + 1]);
      this.words[2 * into] = words[at];
      this.words[2 * into + 1] = words[at + 1];
    }
  }
}

const INITIAL_CELLS = 1024;

/**
 * The same ceiling kept beside a run's block id table, recording fewer blocks: a block was seen in
 * an earlier request exactly when the table holds its id as the request arrives (every id a run
 * holds comes from a prompt that arrived before) or forgot it before (the table tells of each hash
 * it forgets, and only those are recorded). A request's leading blocks are looked up only until the
 * first one never seen.
 */
export class TableCeiling {
  private readonly forgotten = new PrefixCeiling();
  /**
   * Hashes forgotten and not yet recorded (low and high word side by side, `pendingWords` of them):
   * recorded as a batch when the buffer is full or before the ceiling is next asked.
   */
  private readonly pending = new Int32Array(2 * PENDING_BLOCKS);
  private pendingWords = 0;

  /** `table`: the run's id table, which tells this ceiling of each hash it forgets from now on. */
  constructor(private readonly table: BlockIds) {
    if (table.onForget !== null) throw new Error('the block id table already tells another of the hashes it forgets');
    table.onForget = (low, high) => this.forget(low, high);
  }

  /**
   * How many leading blocks of an arriving request an earlier request had, given the ids it has just
   * acquired (holding each once) and their hash words (key words at `stride` × i and + 1).
   */
  hits(ids: Int32Array, words: Int32Array, stride: number): number {
    let hits = 0;
    while (hits < ids.length && (this.table.holders(ids[hits]) > 1 || this.wasForgotten(words[stride * hits], words[stride * hits + 1]))) hits++;
    return hits;
  }

  private forget(low: number, high: number): void {
    if (this.pendingWords === this.pending.length) this.recordPending();
    this.pending[this.pendingWords] = low;
    this.pending[this.pendingWords + 1] = high;
    this.pendingWords += 2;
  }

  private wasForgotten(low: number, high: number): boolean {
    if (this.pendingWords > 0) this.recordPending();
    return this.forgotten.has(low, high);
  }

  private recordPending(): void {
    this.forgotten.recordAll(this.pending, this.pendingWords);
    this.pendingWords = 0;
  }
}

/**
 * Forgotten hashes a TableCeiling records at once at most: few enough that the cells and pages the
 * first pass reads are still cached for the second (256 took about half the time 1,024 did).
 */
const PENDING_BLOCKS = 256;

/** One request's prefix reuse: its prompt, how much of it was reused, and how much could have been. */
export interface RequestReuse {
  input_tokens: number;
  /** Blocks the prompt touches: ⌈prompt tokens ÷ block size⌉, a partial last block included. */
  requested_blocks: number;
  hit_blocks: number;
  hit_tokens: number;
  ceiling_hit_blocks: number;
  ceiling_hit_tokens: number;
}

/** One figure in the three definitions (each a fraction from 0 to 1). */
export interface HitRateDefinitions {
  token_weighted: number;
  block_weighted: number;
  request_averaged: number;
}

export interface PrefixHitRates {
  block_size_tokens: number;
  /** The requests counted: every request that arrived (a skipped one never did). */
  requests: number;
  input_tokens: number;
  requested_blocks: number;
  measured: HitRateDefinitions & { hit_blocks: number; hit_tokens: number };
  /** The infinite-cache ceiling: what any cache and router could at most have reused. */
  ceiling: HitRateDefinitions & { hit_blocks: number; hit_tokens: number };
  /** measured ÷ ceiling in each definition; null where the ceiling is 0 (nothing could be reused). */
  of_ceiling: { [K in keyof HitRateDefinitions]: number | null };
}

/** A request's requested blocks: every block its prompt touches, a partial last one included. */
export function requestedBlocks(input_tokens: number, block_size: number): number {
  return Math.ceil(input_tokens / block_size);
}

/** The hit rates of requests (in any order: every sum is of whole numbers, exact in any order). */
export function prefixHitRates(requests: Iterable<RequestReuse>, block_size: number): PrefixHitRates {
  let count = 0;
  let input = 0;
  let requested = 0;
  const totals = { hit_blocks: 0, hit_tokens: 0, ceiling_blocks: 0, ceiling_tokens: 0 };
  const shares: number[] = [];
  const ceilingShares: number[] = [];
  for (const request of requests) {
    count++;
    input += request.input_tokens;
    requested += request.requested_blocks;
    totals.hit_blocks += request.hit_blocks;
    totals.hit_tokens += request.hit_tokens;
    totals.ceiling_blocks += request.ceiling_hit_blocks;
    totals.ceiling_tokens += request.ceiling_hit_tokens;
    shares.push(request.requested_blocks === 0 ? 0 : request.hit_blocks / request.requested_blocks);
    ceilingShares.push(request.requested_blocks === 0 ? 0 : request.ceiling_hit_blocks / request.requested_blocks);
  }
  const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);
  const measured = {
    token_weighted: ratio(totals.hit_tokens, input),
    block_weighted: ratio(totals.hit_blocks, requested),
    request_averaged: mean(shares),
    hit_blocks: totals.hit_blocks,
    hit_tokens: totals.hit_tokens,
  };
  const ceiling = {
    token_weighted: ratio(totals.ceiling_tokens, input),
    block_weighted: ratio(totals.ceiling_blocks, requested),
    request_averaged: mean(ceilingShares),
    hit_blocks: totals.ceiling_blocks,
    hit_tokens: totals.ceiling_tokens,
  };
  const share = (key: keyof HitRateDefinitions) => (ceiling[key] === 0 ? null : measured[key] / ceiling[key]);
  return {
    block_size_tokens: block_size,
    requests: count,
    input_tokens: input,
    requested_blocks: requested,
    measured,
    ceiling,
    of_ceiling: { token_weighted: share('token_weighted'), block_weighted: share('block_weighted'), request_averaged: share('request_averaged') },
  };
}

/** The mean, summed in ascending order (the same figure whatever order the requests came in). */
function mean(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return total / sorted.length;
}
