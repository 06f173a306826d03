// How long one engine pass takes (ENG-2 and its extensions): the fixed model, a linear model of
// the pass's shape (BLIS-style fitted coefficients), and a table of measured points interpolated
// piecewise-linearly. Everything is exact integer arithmetic (bigint where products can pass 2^53);
// a duration that is not a whole nanosecond is rounded up (TIME-2). Never below 1 ns.
import type { Nanos } from '../time';
import { LAST_VIRTUAL_NS, VirtualClockError, virtualDays } from '../time';

/** What a pass does, counted as it is planned (the duration is fixed when the pass starts). */
export interface PassShape {
  /** The pass computes at least one prefill chunk (possibly of 0 tokens). */
  has_prefill: boolean;
  /** New prefill tokens computed by the pass (chunk tokens; reused tokens are not computed). */
  prefill_tokens: number;
  /** Requests that take one decode step in the pass. */
  decode_sequences: number;
  /** Context tokens attended: per prefill chunk, the tokens before it plus the chunk; per decode step, the request's context (input + outputs so far). */
  context_tokens: number;
  /** The decode steps' part of context_tokens. */
  decode_context_tokens: number;
}

export interface FixedPassTime {
  model: 'fixed';
  prefill_ns: Nanos;
  decode_ns: Nanos;
}

/** Coefficients in whole picoseconds (exact: the config gives milliseconds with up to 9 decimals). */
export interface LinearPassTime {
  model: 'linear';
  base_ps: bigint;
  prefill_token_ps: bigint;
  decode_sequence_ps: bigint;
  context_token_ps: bigint;
}

/** One axis of a table: strictly increasing points. */
export interface TablePassTime {
  model: 'table';
  /** Prefill: new tokens → ns, strictly increasing tokens. */
  prefill_tokens: number[];
  prefill_ns: Nanos[];
  /** Decode: a full grid of batch sizes × context tokens per sequence (mean), ns[batch][context]. */
  decode_batch_sizes: number[];
  decode_context_tokens: number[];
  decode_ns: Nanos[][];
}

export type PassTimeModel = FixedPassTime | LinearPassTime | TablePassTime;

const ceilDiv = (numerator: bigint, denominator: bigint): bigint => {
  if (denominator < 0n) return ceilDiv(-numerator, -denominator);
  const q = numerator / denominator;
  return q * denominator < numerator ? q + 1n : q;
};

/** The duration of a pass of this shape, in whole nanoseconds (at least 1). */
export function passDurationNs(model: PassTimeModel, shape: PassShape): Nanos {
  let ns: bigint;
  const has_decode = shape.decode_sequences > 0;
  if (model.model === 'fixed') {
    return (shape.has_prefill ? model.prefill_ns : 0) + (has_decode ? model.decode_ns : 0);
  } else if (model.model === 'linear') {
    const ps =
      model.base_ps +
      model.prefill_token_ps * BigInt(shape.prefill_tokens) +
      model.decode_sequence_ps * BigInt(shape.decode_sequences) +
      model.context_token_ps * BigInt(shape.context_tokens);
    ns = ceilDiv(ps, 1000n);
  } else {
    // Each part exact, none below zero (an extrapolation below zero must not cancel the other part), their sum rounded up once.
    const parts: Exact[] = [];
    if (shape.has_prefill) parts.push(atLeastZero(prefillTableExact(model, shape.prefill_tokens)));
    if (has_decode) parts.push(atLeastZero(decodeTableExact(model, shape.decode_sequences, shape.decode_context_tokens)));
    const sum = parts.reduce((a, b) => [a[0] * b[1] + b[0] * a[1], a[1] * b[1]], [0n, 1n] as Exact);
    ns = ceilDiv(sum[0], sum[1]);
  }
  if (ns < 1n) return 1;
  if (ns > BigInt(LAST_VIRTUAL_NS)) throw new VirtualClockError(`a pass of ${shape.prefill_tokens} prefill tokens and ${shape.decode_sequences} decode sequences would last ${virtualDays(Number(ns))}`);
  return Number(ns);
}

/**
 * The segment of strictly increasing `points` used for x: the one containing it, or the first /
 * last one beyond the ends (extrapolation from the two end points). -1 for a single point.
 */
export function segmentOf(points: readonly number[], x: number): number {
  if (points.length < 2) return -1;
  let i = 0;
  while (i < points.length - 2 && x > points[i + 1]) i++;
  return i;
}

/** An exact number of nanoseconds: numerator over a positive denominator. */
type Exact = [bigint, bigint];

/** The part, or 0 when an extrapolation took it below zero. */
const atLeastZero = (part: Exact): Exact => (part[0] < 0n ? [0n, 1n] : part);

/** Prefill time of `tokens` new tokens: the piecewise-linear interpolation, exact (rounded with the rest of the pass). */
function prefillTableExact(model: TablePassTime, tokens: number): Exact {
  const xs = model.prefill_tokens;
  const ys = model.prefill_ns;
  const i = segmentOf(xs, tokens);
  if (i < 0) return [BigInt(ys[0]), 1n];
  const [x0, x1, y0, y1] = [BigInt(xs[i]), BigInt(xs[i + 1]), BigInt(ys[i]), BigInt(ys[i + 1])];
  const x = BigInt(tokens);
  return [y0 * (x1 - x0) + (y1 - y0) * (x - x0), x1 - x0];
}

/**
 * Decode time of a batch of `sequences` whose contexts sum to `contextTotal` tokens: bilinear
 * interpolation over (batch size, mean context per sequence), exact (rounded with the rest of the pass).
 */
function decodeTableExact(model: TablePassTime, sequences: number, contextTotal: number): Exact {
  const bs = model.decode_batch_sizes;
  const cs = model.decode_context_tokens;
  const n = BigInt(sequences);
  const C = BigInt(contextTotal);
  // Weights along the context axis, as numerators over cDen (mean context = C / n).
  const j = segmentOf(cs, contextTotal / sequences);
  let cWeights: [number, bigint][];
  let cDen: bigint;
  if (j < 0) {
    cWeights = [[0, 1n]];
    cDen = 1n;
  } else {
    const c0 = BigInt(cs[j]);
    const c1 = BigInt(cs[j + 1]);
    cDen = (c1 - c0) * n;
    cWeights = [
      [j, c1 * n - C],
      [j + 1, C - c0 * n],
    ];
  }
  const i = segmentOf(bs, sequences);
  let bWeights: [number, bigint][];
  let bDen: bigint;
  if (i < 0) {
    bWeights = [[0, 1n]];
    bDen = 1n;
  } else {
    const b0 = BigInt(bs[i]);
    const b1 = BigInt(bs[i + 1]);
    bDen = b1 - b0;
    bWeights = [
      [i, b1 - n],
      [i + 1, n - b0],
    ];
  }
  let total = 0n;
  for (const [bi, bw] of bWeights) for (const [ci, cw] of cWeights) total += bw * cw * BigInt(model.decode_ns[bi][ci]);
  return [total, bDen * cDen];
}
