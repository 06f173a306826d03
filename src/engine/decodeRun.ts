// Runs of identical decode-only passes of one rank, taken through the kernel as one action with
// the same result as stepping each pass: the end of each pass of the run, accounting its passes
// as they end (tokens stamped, in groups of equal gaps; passes shown to the observer), and cutting
// the run short where a request joining the rank would have changed course. Which passes may form a run is the rank's
// to say (decodeRunLength in passStart.ts).
import { InvariantError, Kernel, Phase } from '../kernel';
import type { Nanos } from '../time';
import { passDurationNs, PassShape, PassTimeModel } from './passTime';
import type { PassPlan } from './passPlan';
import * as simulatorFaults from '../fuzz/simulatorFaults';
// Read per pass of a run: copied into this module once (run through tsx, every read of an imported
// binding is a getter call).
const plantedPassDelayNs = simulatorFaults.plantedPassDelayNs;

/** What a decode run needs of its rank. */
export interface DecodeRunRank {
  readonly rank_index: number;
  /** Shows a pass to the rank's pass observer; false when there is none. */
  showPass(time_ns: Nanos, shape: PassShape, duration_ns: Nanos): boolean;
  /** The run's last pass ends now: it ends as any pass does. */
  endPass(): void;
  /** Stepping ended a pass at this instant and asks for the next one to start now. */
  stepOn(): void;
  name(): string;
}

export class DecodeRun {
  /**
   * The run under way: its passes (0 when none), and the end of each (index p − 1 for pass p), in a
   * typed array grown as runs get longer (integer nanoseconds up to 2^53 are exact in it): setting
   * a plain array's length for each run reallocated it, about 1 % of a replay.
   */
  private passes = 0;
  private ends_ns = new Float64Array(64);
  /** Passes of the run whose tokens are stamped, and passes counted as started. */
  private completed = 0;
  private started = 0;
  /** The decode-context tokens of the run's first pass (each later pass adds one per sequence). */
  private contextTokens = 0;
  /** Kernel handle of the run's end. */
  private endHandle = -1;
  private readonly endAction = () => this.end();
  /** The gaps between the ends of passes being accounted, as groups of equal gaps (reused). */
  private groupGaps: Nanos[] = [];
  private groupCounts: number[] = [];

  constructor(
    private readonly rank: DecodeRunRank,
    private readonly kernel: Kernel,
    private readonly passTime: PassTimeModel,
    private readonly plan: PassPlan,
  ) {}

  /** Schedules only the end of a run of `passes` identical decode passes; each pass's tokens are stamped as if stepped. */
  start(passes: number, shape: PassShape, firstDuration: Nanos): void {
    if (passes > this.ends_ns.length) this.ends_ns = new Float64Array(Math.max(passes, 2 * this.ends_ns.length));
    const ends = this.ends_ns;
    this.contextTokens = shape.decode_context_tokens;
    let end = this.kernel.now + firstDuration;
    ends[0] = end;
    for (let p = 2; p <= passes; p++) {
      end += passDurationNs(this.passTime, this.plan.decodeRunShape(p, this.contextTokens)) + plantedPassDelayNs(); // planted fault (src/fuzz/simulatorFaults.ts)
      ends[p - 1] = end;
    }
    this.passes = passes;
    this.completed = 0;
    this.started = 1;
    this.endHandle = this.kernel.at(ends[passes - 1], Phase.PassCompletion, this.rank.rank_index, this.endAction);
  }

  /** The run's last pass ends now: the passes before it are accounted, then it ends as any pass does. */
  private end(): void {
    this.advance(this.passes - 1, this.passes);
    this.passes = 0;
    this.rank.endPass();
  }

  /**
   * A request joins the rank during a run: the run is cut where stepping would have changed
   * course. Passes that ended before now are accounted; the pass under way (if one started)
   * becomes the run's last, and otherwise the next pass starts now as stepping would.
   */
  cut(): void {
    if (this.passes === 0) return;
    const kernel = this.kernel;
    const ends = this.ends_ns;
    const rank_index = this.rank.rank_index;
    let completed = this.completed;
    while (completed < this.passes && kernel.ranBefore(ends[completed], Phase.PassCompletion, rank_index)) completed++;
    if (completed >= this.passes) throw new InvariantError(`rank ${this.rank.name()}: its decode run ended at ${ends[this.passes - 1]} ns but was still under way at ${kernel.now} ns`);
    const nextStarted = completed === 0 || kernel.ranBefore(ends[completed - 1], Phase.PassStart, rank_index);
    this.advance(completed, nextStarted ? completed + 1 : completed);
    kernel.cancel(this.endHandle);
    if (nextStarted) {
      this.passes = completed + 1;
      this.endHandle = kernel.at(ends[completed], Phase.PassCompletion, rank_index, this.endAction);
      return;
    }
    // Stepping ended pass `completed` at this instant and asked for the next pass to start now.
    this.passes = 0;
    this.rank.stepOn();
  }

  /** Accounts the run's passes up to `completed` (their tokens) and `started` (observed). */
  private advance(completed: number, started: number): void {
    const ends = this.ends_ns;
    for (let p = this.started + 1; p <= started; p++) {
      const start = ends[p - 2];
      if (!this.rank.showPass(start, this.plan.decodeRunShape(p, this.contextTokens), ends[p - 1] - start)) break;
    }
    this.started = Math.max(this.started, started);
    const from = this.completed + 1;
    if (completed >= from) this.stampTokens(from, completed);
    this.completed = Math.max(this.completed, completed);
  }

  /**
   * Each request of the run makes a token at the end of passes from..to: the first stamped as it
   * comes, the rest in groups of passes that end equally far apart (every pass of a fixed pass
   * time), so a request's tokens cost one step per group instead of one per pass.
   */
  private stampTokens(from: number, to: number): void {
    const ends = this.ends_ns;
    let groups = 0;
    for (let p = from + 1; p <= to; p++) {
      const gap = ends[p - 1] - ends[p - 2];
      if (groups > 0 && this.groupGaps[groups - 1] === gap) this.groupCounts[groups - 1]++;
      else {
        this.groupGaps[groups] = gap;
        this.groupCounts[groups] = 1;
        groups++;
      }
    }
    const plan = this.plan;
    const firstEnd = ends[from - 1];
    const lastEnd = ends[to - 1];
    for (let i = 0; i < plan.count; i++) {
      const request = plan.requests[i];
      request.stampToken(firstEnd);
      request.stampTokenGroups(this.groupGaps, this.groupCounts, groups, lastEnd);
    }
  }
}
