// What the fuzzer keeps of a run's passes, so a long case costs no memory per pass: the first
// passes whole (for readable messages and for tests that edit one), and of every pass its
// capacity and pass-time violations, found as it is observed, a count and an order-independent
// digest. Two runs of one seed must plan the same passes, but a batched run reports a run of decode
// passes in another order than stepping does; the digest is a sum of per-pass keys, so order
// does not change it.
import { integersKey } from '../hash';
import { passViolations, type PassRecord, type Violation } from './invariants';

/** Passes kept whole per run; generated cases usually plan far fewer. */
export const KEPT_PASSES = 50_000;

/** Violations of unkept passes kept per run (the first ones tell the story). */
const KEPT_VIOLATIONS = 100;

/** How many numbers passNumbers writes. */
const PASS_NUMBERS = 12;

export class PassLedger {
  readonly kept: PassRecord[] = [];
  readonly unkept_violations: Violation[] = [];
  count = 0;
  /** Sums (mod 2^32) of the two 32-bit lanes of every pass key. */
  private sumLo = 0;
  private sumHi = 0;
  /** What passNumbers writes (reused from pass to pass). */
  private readonly numbers = new Float64Array(PASS_NUMBERS);

  constructor(private readonly keep = KEPT_PASSES) {}

  /**
   * Counts a pass, keeps a copy of it while fewer than `keep` are kept, and checks it when it is not
   * kept. The caller may write the same record again for its next pass: a run observes millions of
   * passes in a preemption spin, and a new record for each, once the first ones had been kept for
   * good, made V8 put every later one straight into its old space (allocation-site pretenuring),
   * where the collector then had to sweep them (more than half of such a case's time).
   */
  observe(pass: PassRecord): void {
    this.count++;
    const key = integersKey(passNumbers(pass, this.numbers));
    this.sumLo = (this.sumLo + key.key_lo) | 0;
    this.sumHi = (this.sumHi + key.key_hi) | 0;
    if (this.kept.length < this.keep) {
      this.kept.push({ ...pass });
      return;
    }
    if (this.unkept_violations.length >= KEPT_VIOLATIONS) return;
    this.unkept_violations.push(...passViolations(pass).slice(0, KEPT_VIOLATIONS - this.unkept_violations.length));
  }

  /** The digest of every pass observed, whatever their order. */
  get digest(): string {
    return `${hex32(this.sumHi)}${hex32(this.sumLo)}`;
  }
}

function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

/**
 * What the digest counts of a pass, as numbers into `into`: the same as its text (passKey) says,
 * without building the text.
 */
function passNumbers(pass: PassRecord, into: Float64Array): Float64Array {
  const shape = pass.shape;
  into[0] = pass.time_ns;
  into[1] = pass.worker_id;
  into[2] = pass.dp_rank;
  into[3] = pass.running_requests;
  into[4] = pass.scheduled_tokens;
  into[5] = pass.g1_occupied_blocks;
  into[6] = shape.has_prefill ? 1 : 0;
  into[7] = shape.prefill_tokens;
  into[8] = shape.decode_sequences;
  into[9] = shape.context_tokens;
  into[10] = shape.decode_context_tokens;
  into[11] = pass.duration_ns;
  return into;
}

/**
 * One pass as text: when, where, what it ran and how long it lasted. A shared pool's use, which
 * other ranks change while a run of decode passes is under way, is left out.
 */
export function passKey(pass: PassRecord): string {
  return `${pass.time_ns} ns worker ${pass.worker_id}/${pass.dp_rank}: ${pass.running_requests} running, ${pass.scheduled_tokens} tokens, ${pass.g1_occupied_blocks} G1 blocks, ${JSON.stringify(pass.shape)}, ${pass.duration_ns} ns`;
}

/** Passes in the order stepping starts them (time, then rank), as text. */
export function passKeysInOrder(passes: readonly PassRecord[]): string[] {
  return [...passes].sort((x, y) => x.time_ns - y.time_ns || x.worker_id - y.worker_id || x.dp_rank - y.dp_rank).map(passKey);
}
