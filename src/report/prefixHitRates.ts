// Prefix hit rates in the three definitions papers publish (docs/glossary.md, "prefix hit rates"):
// token-weighted (Σ reused tokens ÷ Σ prompt tokens), block-weighted (Σ hit blocks ÷ Σ requested
// blocks) and request-averaged (the mean over requests of each one's hit blocks ÷ its requested
// blocks), each measured and as the policy-free infinite-cache ceiling, where a request's hit is
// the longest prefix of its blocks seen in any earlier request, and the share of the ceiling a run
// realised. Owns the ceiling's record of blocks seen (PrefixCeiling) and the arithmetic.
import { OpenIndex } from '../collections/openIndex';

/**
 * The blocks of every request seen so far, by sequence hash (two 32-bit words: a block's hash
 * stands for its whole prefix, so a prefix was seen exactly when its last block was).
 */
export class PrefixCeiling {
  private readonly seen = new OpenIndex(2);

  /**
   * Records a request's blocks (key words at `stride` × i and + 1) and returns how many leading
   * blocks an earlier request had: its hit with an infinite cache.
   */
  observe(words: ArrayLike<number>, stride: number): number {
    let hits = 0;
    let leading = true;
    for (let at = 0; at + 1 < words.length; at += stride) {
      const earlier = this.seen.insertAbsent(0, words[at], words[at + 1]) !== -1;
      if (leading && earlier) hits++;
      else leading = false;
    }
    return hits;
  }
}

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
