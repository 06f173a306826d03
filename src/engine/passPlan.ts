// The pass a rank plans and runs (a rank runs one pass at a time): its requests and the work each
// does in it, kept in arrays reused from pass to pass instead of an object per request per pass,
// and the shape of what it computes (PassShape, reused too), which fixes its duration.
import type { SimRequest } from './request';
import type { PassShape } from './passTime';

/** Planned work for one request in a pass: prefill tokens (≥ 0), or DECODE for one decode step. */
export type PlannedWork = number;
export const DECODE = -1;

export class PassPlan {
  readonly requests: SimRequest[] = [];
  readonly work: PlannedWork[] = [];
  /** Entries of requests / work in the current pass (the arrays keep their room between passes). */
  count = 0;
  /** Reused for every pass's shape (no object per pass). */
  private readonly shape: PassShape = { has_prefill: false, prefill_tokens: 0, decode_sequences: 0, context_tokens: 0, decode_context_tokens: 0 };

  add(request: SimRequest, work: PlannedWork): void {
    this.requests[this.count] = request;
    this.work[this.count] = work;
    this.count++;
  }

  clear(): void {
    this.count = 0;
  }

  /** What the planned pass computes (its duration depends on nothing else). */
  passShape(): PassShape {
    const shape = this.shape;
    shape.has_prefill = false;
    shape.prefill_tokens = 0;
    shape.decode_sequences = 0;
    shape.context_tokens = 0;
    shape.decode_context_tokens = 0;
    for (let i = 0; i < this.count; i++) {
      const request = this.requests[i];
      const work = this.work[i];
      if (work === DECODE) {
        const context = request.input_length + request.output_tokens;
        shape.decode_sequences++;
        shape.decode_context_tokens += context;
        shape.context_tokens += context;
      } else {
        shape.has_prefill = true;
        shape.prefill_tokens += work;
        shape.context_tokens += request.computed_tokens + work;
      }
    }
    return shape;
  }

  /** The shape of pass p of a decode run whose first pass read `firstContextTokens` of decode context (written into the reused shape object). */
  decodeRunShape(p: number, firstContextTokens: number): PassShape {
    const shape = this.shape;
    const sequences = this.count;
    shape.has_prefill = false;
    shape.prefill_tokens = 0;
    shape.decode_sequences = sequences;
    shape.decode_context_tokens = firstContextTokens + sequences * (p - 1);
    shape.context_tokens = shape.decode_context_tokens;
    return shape;
  }

  /** Tokens the pass computes: prefill chunk tokens, plus one per decode step. */
  scheduledTokens(): number {
    let tokens = 0;
    for (let i = 0; i < this.count; i++) tokens += this.work[i] === DECODE ? 1 : this.work[i];
    return tokens;
  }
}
