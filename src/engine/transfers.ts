// Host↔device transfers (TIME-2, G2-8, G2-9): private per-rank FIFO lanes with deadlines fixed
// at submission, and a shared pool whose per-direction bandwidth is fair-shared among moving
// jobs and re-divided at every start, finish and cancel. Completions run in the transfer phase,
// stores before loads, then by transfer id (TIME-3).
import { InvariantError, Kernel, Phase } from '../kernel';
import type { Nanos } from '../time';
import { formatNs } from '../time';
import { ceilQuotient, exactDecimal } from '../exactDecimal';

/** d2h / h2d: G1↔G2 copies; p2d: a prefill worker's KV handed to a decode worker (PD-1). */
export type Direction = 'd2h' | 'h2d' | 'p2d';

/** Bytes per nanosecond for a decimal GB/s figure (1 GB/s = 1 byte/ns); 0 means unlimited. */
export function bytesPerNs(gbps: number): number {
  return gbps;
}

/**
 * Time to move `bytes` at `gbps`, rounded up to a whole nanosecond; 0 bandwidth is instant (TIME-2).
 * Exact: both numbers are taken as the decimals they are written as (0.7 GB/s is 7/10 byte/ns) and
 * divided in integers, so a quotient that is whole stays whole and one a hair above a whole
 * nanosecond rounds up, as no floating-point division guarantees.
 */
export function transferNs(bytes: number, gbps: number): Nanos {
  if (gbps === 0 || bytes === 0) return 0;
  return ceilQuotient(bytes, bytesPerNs(gbps));
}

/**
 * A non-negative rational, exactly: `top` over `bottom` (bottom > 0), kept reduced. The shared
 * pool's bytes left and rates (a decimal cap divided among its moving jobs) are rationals, so its
 * finishing times are exact ceilings as TIME-2 asks: in floating point with a tolerance for dust,
 * a job alone at 1.0000001 GB/s finished a nanosecond early.
 */
interface Ratio {
  top: bigint;
  bottom: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function ratio(top: bigint, bottom: bigint): Ratio {
  const common = gcd(top, bottom);
  return common > 1n ? { top: top / common, bottom: bottom / common } : { top, bottom };
}

/** A decimal cap (GB/s = bytes/ns) shared by `sharers` jobs; null when the cap is 0 (unlimited). */
function shareOf(gbps: number, sharers: number): Ratio | null {
  if (gbps === 0) return null;
  const exact = exactDecimal(bytesPerNs(gbps));
  return ratio(exact.digits, 10n ** BigInt(exact.scale) * BigInt(sharers));
}

/** The lower of two rates, null being unlimited. */
function slower(a: Ratio | null, b: Ratio | null): Ratio | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.top * b.bottom <= b.top * a.bottom ? a : b;
}

/** Bytes left after `elapsed` ns at `rate`; never below none (a finish rounded up to a whole ns moves a little more). */
function bytesLeft(remaining: Ratio, rate: Ratio, elapsed: Nanos): Ratio {
  const top = remaining.top * rate.bottom - BigInt(elapsed) * rate.top * remaining.bottom;
  return top <= 0n ? NO_BYTES : ratio(top, remaining.bottom * rate.bottom);
}

/** Whole nanoseconds (rounded up) to move `remaining` at `rate`. */
function nsToMove(remaining: Ratio, rate: Ratio): Nanos {
  const top = remaining.top * rate.bottom;
  const bottom = remaining.bottom * rate.top;
  return Number((top + bottom - 1n) / bottom);
}

const NO_BYTES: Ratio = { top: 0n, bottom: 1n };

export interface TransferRecord {
  transfer_id: number;
  direction: Direction;
  worker_id: number;
  dp_rank: number;
  bytes: number;
  blocks: number;
  submitted_ns: Nanos;
  started_ns: Nanos;
  finished_ns: Nanos | null;
  /** The request it serves: a restore's, or the request whose prompt a G2 store copies (null for a transfer that serves none). */
  request_id: string | null;
}

export interface TransferRequest {
  direction: Direction;
  rank_index: number;
  worker_id: number;
  dp_rank: number;
  bytes: number;
  blocks: number;
  request_id: string | null;
  onComplete: () => void;
}

/** Something that moves bytes for ranks and calls back in the transfer-completion phase. */
export interface TransferEngine {
  submit(request: TransferRequest): TransferRecord;
}

/** Numbering and completion scheduling shared by both transfer models. */
export class TransferLog {
  private nextId = 0;
  readonly records: TransferRecord[] = [];
  constructor(private readonly kernel: Kernel) {}

  open(request: TransferRequest, started_ns: Nanos): TransferRecord {
    const record: TransferRecord = {
      transfer_id: this.nextId++,
      direction: request.direction,
      worker_id: request.worker_id,
      dp_rank: request.dp_rank,
      bytes: request.bytes,
      blocks: request.blocks,
      submitted_ns: this.kernel.now,
      started_ns,
      finished_ns: null,
      request_id: request.request_id,
    };
    this.records.push(record);
    return record;
  }

  /** Order key in the transfer phase: stores (D2H) before loads (H2D), then by transfer id. */
  static order(record: TransferRecord): number {
    return (record.direction === 'd2h' ? 0 : 1) * 2 ** 40 + record.transfer_id;
  }

  complete(record: TransferRecord, at: Nanos, onComplete: () => void): void {
    this.kernel.at(at, Phase.TransferCompletion, TransferLog.order(record), () => {
      record.finished_ns = this.kernel.now;
      onComplete();
    });
  }
}

export interface LaneSettings {
  d2h_bandwidth_gbps: number;
  h2d_bandwidth_gbps: number;
  latency_to_first_byte_ns: Nanos;
}

/** G2-8: one rank's two independent FIFO lanes; a job's deadline is fixed when it is submitted. */
export class PrivateLanes implements TransferEngine {
  private readonly tail: Record<Direction, Nanos> = { d2h: 0, h2d: 0, p2d: 0 };
  constructor(
    private readonly kernel: Kernel,
    private readonly log: TransferLog,
    private readonly settings: LaneSettings,
  ) {}

  submit(request: TransferRequest): TransferRecord {
    const start = Math.max(this.tail[request.direction], this.kernel.now + this.settings.latency_to_first_byte_ns);
    const gbps = request.direction === 'd2h' ? this.settings.d2h_bandwidth_gbps : this.settings.h2d_bandwidth_gbps;
    const finish = start + transferNs(request.bytes, gbps);
    this.tail[request.direction] = finish;
    const record = this.log.open(request, start);
    this.log.complete(record, finish, request.onComplete);
    return record;
  }
}

/** The pool caps of a shared pool, shared by every participating rank (G2-9); they are part of the pool contract (G2-10). */
export interface SharedPoolBandwidth {
  shared_d2h_bandwidth_gbps: number;
  shared_h2d_bandwidth_gbps: number;
}

interface MovingJob {
  record: TransferRecord;
  request: TransferRequest;
  /** Bytes still to move, exactly. */
  remaining: Ratio;
  /** Bytes per ns now, exactly; null: unlimited (both caps 0). */
  rate: Ratio | null;
  /** Bumped at each re-division so stale completion checks are ignored. */
  generation: number;
}

/**
 * G2-9: the shared pool's bandwidth. Each moving job runs at min(rank cap / that rank's moving
 * jobs, pool cap / all moving jobs) in its direction; rates are re-divided whenever a job starts
 * or finishes. Unused shares are not redistributed. Each participating rank brings its own
 * per-rank caps and first-byte latency (roles may differ there); the pool caps are common.
 */
export class SharedBandwidth implements TransferEngine {
  private readonly moving: Record<Direction, MovingJob[]> = { d2h: [], h2d: [], p2d: [] };
  private lastUpdateNs: Record<Direction, Nanos> = { d2h: 0, h2d: 0, p2d: 0 };
  /** Per-rank caps and latency, by rank index. */
  private readonly lanes = new Map<number, LaneSettings>();

  constructor(
    private readonly kernel: Kernel,
    private readonly log: TransferLog,
    private readonly settings: SharedPoolBandwidth,
  ) {}

  /** A rank joins the pool with its own per-rank caps and first-byte latency. */
  join(rank_index: number, lanes: LaneSettings): void {
    this.lanes.set(rank_index, { d2h_bandwidth_gbps: lanes.d2h_bandwidth_gbps, h2d_bandwidth_gbps: lanes.h2d_bandwidth_gbps, latency_to_first_byte_ns: lanes.latency_to_first_byte_ns });
  }

  private lanesOf(rank_index: number): LaneSettings {
    const lanes = this.lanes.get(rank_index);
    if (!lanes) throw new InvariantError(`rank ${rank_index} moves data through a shared pool it never joined`);
    return lanes;
  }

  submit(request: TransferRequest): TransferRecord {
    const start = this.kernel.now + this.lanesOf(request.rank_index).latency_to_first_byte_ns;
    const record = this.log.open(request, start);
    const bytes = exactDecimal(request.bytes);
    const job: MovingJob = { record, request, remaining: ratio(bytes.digits, 10n ** BigInt(bytes.scale)), rate: null, generation: 0 };
    if (start === this.kernel.now) this.start(job);
    else this.kernel.at(start, Phase.TransferCompletion, TransferLog.order(record), () => this.start(job));
    return record;
  }

  /** Jobs currently moving in a direction (for reports and tests). */
  movingCount(direction: Direction): number {
    return this.moving[direction].length;
  }

  private start(job: MovingJob): void {
    const direction = job.request.direction;
    this.advance(direction);
    this.moving[direction].push(job);
    this.redivide(direction);
  }

  private finish(job: MovingJob): void {
    const direction = job.request.direction;
    this.advance(direction);
    // Unlimited bandwidth (0 = no cap, TIME-2): the job moves all its bytes in no time.
    if (job.rate === null) job.remaining = NO_BYTES;
    if (job.remaining.top !== 0n) {
      throw new InvariantError(`transfer ${job.record.transfer_id} finished with ${job.remaining.top}/${job.remaining.bottom} bytes left at ${formatNs(this.kernel.now)}`);
    }
    this.moving[direction] = this.moving[direction].filter((other) => other !== job);
    job.record.finished_ns = this.kernel.now;
    this.redivide(direction);
    job.request.onComplete();
  }

  /** Moves every job's progress forward to now at its current rate. */
  private advance(direction: Direction): void {
    const elapsed = this.kernel.now - this.lastUpdateNs[direction];
    this.lastUpdateNs[direction] = this.kernel.now;
    if (elapsed === 0) return;
    for (const job of this.moving[direction]) job.remaining = job.rate === null ? NO_BYTES : bytesLeft(job.remaining, job.rate, elapsed);
  }

  private redivide(direction: Direction): void {
    const jobs = this.moving[direction];
    const poolCap = direction === 'd2h' ? this.settings.shared_d2h_bandwidth_gbps : this.settings.shared_h2d_bandwidth_gbps;
    const perRank = new Map<number, number>();
    for (const job of jobs) perRank.set(job.request.rank_index, (perRank.get(job.request.rank_index) ?? 0) + 1);
    for (const job of jobs) {
      const lanes = this.lanesOf(job.request.rank_index);
      const rankCap = direction === 'd2h' ? lanes.d2h_bandwidth_gbps : lanes.h2d_bandwidth_gbps;
      job.rate = slower(shareOf(rankCap, perRank.get(job.request.rank_index)!), shareOf(poolCap, jobs.length));
      job.generation++;
      const generation = job.generation;
      const finishAt = job.rate === null ? this.kernel.now : this.kernel.now + nsToMove(job.remaining, job.rate);
      this.kernel.at(finishAt, Phase.TransferCompletion, TransferLog.order(job.record), () => {
        if (job.generation === generation) this.finish(job);
      });
    }
  }
}
