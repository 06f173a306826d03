// One vLLM-style engine rank (ENG-1..4, G2-2..7): waiting and running queues, passes under a
// token budget and a sequence cap with chunked prefill, pass timing (fixed, linear or table), the G1 prefix cache
// and G2 write-through / restore, and the KV events all of that produces. Runs of identical
// decode-only passes go through the kernel as one action (startDecodeRun), with the same result as
// stepping each pass.
import { InvariantError, Kernel, Phase } from '../kernel';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { NO_SLOT as IMPORTED_NO_SLOT } from '../collections/blockSlots';
import type { KvEvent, RankRef, Tier } from '../events/model';
import { RankEventStream, RemovedIds, StoredIds } from '../events/model';
import type { Nanos } from '../time';
import { DeviceCache } from './deviceCache';
import type { HostPool } from './hostPool';
import type { TransferEngine } from './transfers';
import { ValueCounts } from '../collections/valueCounts';
import type { EngineTruth, SimRequest } from './request';
import { passDurationNs, PassShape, PassTimeModel } from './passTime';
import { faultPlanted, plantedPassDelayNs } from '../fuzz/simulatorFaults';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
const NO_SLOT = IMPORTED_NO_SLOT;

export interface EngineSettings {
  block_size: number;
  num_gpu_blocks: number;
  max_num_seqs: number;
  max_num_batched_tokens: number;
  enable_prefix_caching: boolean;
  /** Bytes of KV per token; block bytes = block_size × this. */
  kv_cache_bytes_per_token: number;
  /** How long a pass takes (fixed, linear or table; src/engine/passTime.ts). */
  pass_time: PassTimeModel;
}

/** The G2 side of a rank: its pool (private or shared), the transfers that feed it, and who hears about it. */
export interface HostDomain {
  pool: HostPool;
  transfers: TransferEngine;
  /** Every rank that sees this pool (one for a private pool). */
  subscribers: RankEngine[];
}

/** What a rank tells the rest of the cluster. */
export interface RankListener {
  emit(rank: RankEngine, events: KvEvent[]): void;
  prefillComplete(request: SimRequest): void;
  finished(request: SimRequest): void;
  /** A disaggregated request's prefill is done: its KV goes to a decode worker (PD-1). */
  handoff(request: SimRequest): void;
  /**
   * PD-1: a decode rank has reserved G1 room for a request's prompt; its KV moves from the prefill
   * worker, and `landed` is called when it has (in the transfer-completion phase).
   */
  pullKv(request: SimRequest, landed: () => void): void;
  /** PD-1: a request failed on its decode rank before its KV moved; the prefill worker lets its blocks go. */
  pullAbandoned(request: SimRequest): void;
  /** The request was just preempted (its `preemptions` counts this one). */
  preempted(rank: RankEngine, request: SimRequest): void;
}

/** What a rank holds and plans as a pass starts, for an optional observer (see RankEngine.passObserver). */
export interface PassObservation {
  time_ns: Nanos;
  /** Requests in the running queue, including those admitted for this pass. */
  running_requests: number;
  /** Tokens the pass computes: prefill chunk tokens, plus one per decode step. */
  scheduled_tokens: number;
  /** G1 blocks taken: held by requests or kept as cache entries. */
  g1_occupied_blocks: number;
  /** G2 entries of the rank's pool (resident or being stored); null without G2. */
  host_used_blocks: number | null;
  /** What the pass computes, and how long it lasts (fixed at its start). */
  shape: PassShape;
  duration_ns: Nanos;
}

/** An event to be numbered when it is emitted (ids follow emission order, EVT-2). */
interface EventDraft {
  tier: Tier;
  data: StoredIds | RemovedIds;
}

/** Planned work for one request in a pass: prefill tokens (≥ 0), or DECODE for one decode step. */
type PlannedWork = number;
const DECODE = -1;

export class RankEngine {
  readonly g1: DeviceCache;
  readonly events: RankEventStream;
  host: HostDomain | null = null;
  private readonly waiting: SimRequest[] = [];
  private readonly running: SimRequest[] = [];
  /** Events due at the end of the pass, in order; a bare block id (held by the outbox) stands for a Device Removed of that one block (an eviction). */
  private outbox: (EventDraft | BlockId)[] = [];
  private busy = false;
  private startScheduled = false;
  private loadsDoneMidPass: SimRequest[] = [];
  /**
   * The G1 blocks of ended requests that are still being read: by the KV handoff to a decode worker
   * (PD-1) and by D2H copies to G2 this rank started. vLLM's KV connectors free a finished request's
   * blocks only once those copies are done; `waits` counts what is still under way (the handoff,
   * the copies as one).
   */
  private readonly blockHolds = new Map<SimRequest, { slots: Int32Array; private_blocks: number; waits: number }>();
  /** D2H copies (G2 store cohorts) this rank started for each request that are not done yet. */
  private readonly copiesInFlight = new Map<SimRequest, number>();
  /**
   * Requests the pass being planned preempted while a D2H copy of theirs still reads their G1
   * blocks; then the requests whose copies the planned pass waits for before it computes (vLLM's
   * handle_preemptions waits for a preempted request's stores before its blocks are written again).
   */
  private preemptedWhileCopying: SimRequest[] = [];
  private fencedBy = new Set<SimRequest>();
  private fencedPass: { shape: PassShape; duration_ns: Nanos } | null = null;
  /** Waiting requests whose G2 restore, or whose KV from a prefill worker (PD-1), is loading or loaded: each holds its G1 room, but no running slot (as in vLLM). */
  private restoresInFlight = 0;
  /**
   * The pass being planned or run (a rank runs one pass at a time): its requests and their work,
   * kept in arrays reused from pass to pass instead of an object per request per pass.
   */
  private readonly planRequests: SimRequest[] = [];
  private readonly planWork: PlannedWork[] = [];
  /** Entries of planRequests / planWork in the current pass (the arrays keep their room between passes). */
  private planCount = 0;
  private readonly startPassAction = () => this.startPass();
  private readonly endPassAction = () => this.endPass();
  /** Reused for every pass's shape (no object per pass). */
  private readonly shape: PassShape = { has_prefill: false, prefill_tokens: 0, decode_sequences: 0, context_tokens: 0, decode_context_tokens: 0 };
  preemptionCount = 0;
  /** Told of every non-empty pass once it is planned (the fuzzer's capacity checks); observing never changes the run. */
  passObserver: ((rank: RankEngine, pass: PassObservation) => void) | null = null;
  /**
   * Runs of identical decode-only passes go through the kernel as one action (see startDecodeRun);
   * false steps every pass through the kernel. Both give the same run, to the nanosecond.
   */
  batchDecodeRuns = true;
  /**
   * A Stored of a request's prompt blocks holds the request's run of ids with one count (IdRun);
   * false holds each id it names. Both give the same run.
   */
  holdIdRuns = true;
  /** The decode run under way: its passes (0 when none), and the end of each (index p − 1 for pass p). */
  private runPasses = 0;
  private readonly runEnds_ns: Nanos[] = [];
  /** Passes of the run whose tokens are stamped, and passes counted as started. */
  private runCompleted = 0;
  private runStarted = 0;
  /** The decode-context tokens of the run's first pass (each later pass adds one per sequence). */
  private runContextTokens = 0;
  /** Kernel handle of the run's end. */
  private runEndHandle = -1;
  private readonly endDecodeRunAction = () => this.endDecodeRun();

  constructor(
    readonly rank: RankRef,
    readonly rank_index: number,
    readonly role: 'aggregated' | 'prefill' | 'decode',
    readonly settings: EngineSettings,
    private readonly kernel: Kernel,
    private readonly listener: RankListener,
    /** The run's block id table, shared with the router's mirror. */
    private readonly blockIds: BlockIds,
  ) {
    this.events = new RankEventStream(rank);
    this.g1 = new DeviceCache(
      settings.num_gpu_blocks,
      settings.enable_prefix_caching,
      (id) => {
        blockIds.retain(id);
        this.outbox.push(id);
      },
      blockIds,
    );
  }

  get block_bytes(): number {
    return this.settings.block_size * this.settings.kv_cache_bytes_per_token;
  }

  /**
   * Engine truth for a prompt, as the rank's events have told it so far (LAG-3: residency changes
   * at emission): G1 prefix blocks (none with prefix caching off) as its events say, and the
   * resident G2 run after them (G2 is looked up whatever the prefix-caching setting: see tryAdmit).
   * A pass under way changes G1 when it is planned (evictions, blocks restored at admission) and
   * reports the changes at its end; counted at once, a placement during the pass found the router's
   * view unlike the truth, and reconciliation put the difference down to lag in a run without lag
   * (found by the fuzzer's invariant).
   */
  truthOverlap(ids: ArrayLike<BlockId>): EngineTruth {
    const device_blocks = this.reportedPrefixLength(ids);
    const host_blocks = this.host ? this.host.pool.residentRun(ids, device_blocks) : 0;
    return { device_blocks, host_blocks };
  }

  /**
   * The G1 prefix of `ids` as the rank has reported it: a block whose first event still in the
   * outbox (due at the pass end) is a Removed was held; one whose first is a Stored (a block
   * restored from G2 at admission, say) was not; any other block is as G1 holds it now.
   */
  private reportedPrefixLength(ids: ArrayLike<BlockId>): number {
    if (!this.settings.enable_prefix_caching) return 0;
    const pending = this.pendingDeviceChanges();
    if (pending === null) return this.g1.prefixLength(ids);
    let length = 0;
    while (length < ids.length && (pending.get(ids[length]) ?? this.g1.has(ids[length]))) length++;
    return length;
  }

  /** Per block with a Device event in the outbox, whether it was held before the first of them (null: none). */
  private pendingDeviceChanges(): Map<BlockId, boolean> | null {
    let heldBefore: Map<BlockId, boolean> | null = null;
    for (const draft of this.outbox) {
      if (typeof draft === 'number') {
        heldBefore ??= new Map();
        if (!heldBefore.has(draft)) heldBefore.set(draft, true);
      } else if (draft.tier === 'Device' && draft.data instanceof StoredIds) {
        heldBefore ??= new Map();
        for (const id of draft.data.block_ids) if (!heldBefore.has(id)) heldBefore.set(id, false);
      }
    }
    return heldBefore;
  }

  /** Where an unfinished request is held on this rank, in words ("waiting at position 2 of 3 in the queue"). */
  whereIs(request: SimRequest): string {
    const running = this.running.indexOf(request);
    if (running >= 0) return `running (${running + 1} of ${this.running.length})`;
    const waiting = this.waiting.indexOf(request);
    if (waiting < 0) return `in state ${request.state}, in neither queue`;
    const what = request.state === 'loading' ? 'loading its G2 prefix' : request.state === 'loaded' ? 'loaded from G2, not yet admitted' : 'waiting';
    return `${what} at position ${waiting + 1} of ${this.waiting.length} in the queue`;
  }

  /** A request routed here joins the waiting queue (FCFS). */
  enqueue(request: SimRequest): void {
    this.cutDecodeRun();
    request.state = 'waiting';
    request.rank_index = this.rank_index;
    request.worker_id = this.rank.worker_id;
    request.dp_rank = this.rank.dp_rank;
    this.waiting.push(request);
    this.kick();
  }

  /**
   * A disaggregated request chosen for this decode rank at its first token joins the queue; its KV is
   * still on the prefill worker, and moves once this rank has reserved G1 room for it (pullKv).
   */
  enqueueDecode(request: SimRequest): void {
    this.cutDecodeRun();
    request.stage = 'decode';
    request.kv_from_prefill = true;
    request.computed_tokens = 0;
    // G2-2 counts what is missing from this rank's G2, not from the prefill worker's: a prompt the
    // prefill worker stored in its own pool is stored again here once it has landed (a pool both
    // roles share already holds it, and stores nothing twice).
    request.write_through_blocks = 0;
    request.state = 'waiting';
    request.decode_worker_id = this.rank.worker_id;
    request.decode_dp_rank = this.rank.dp_rank;
    this.waiting.push(request);
    this.kick();
  }

  /** PD-1: a handed-off request's KV has reached its decode worker; the blocks it held here are let go once nothing else reads them. */
  handoffDone(request: SimRequest): void {
    if (!this.blockHolds.has(request)) throw new InvariantError(`request ${request.request_id} holds no handed-off blocks on ${this.rank.worker_id}/${this.rank.dp_rank}`);
    this.endWait(request);
  }

  /** One of a request's D2H copies from this rank is done; with the last, an ended request's held blocks may go. */
  private copyDone(request: SimRequest): void {
    const left = (this.copiesInFlight.get(request) ?? 0) - 1;
    if (left < 0) throw new InvariantError(`request ${request.request_id} ended a D2H copy it never started on ${this.rank.worker_id}/${this.rank.dp_rank}`);
    if (left > 0) {
      this.copiesInFlight.set(request, left);
      return;
    }
    this.copiesInFlight.delete(request);
    if (this.blockHolds.has(request)) this.endWait(request);
    if (this.fencedBy.delete(request) && this.fencedBy.size === 0) this.computeFencedPass();
  }

  private endWait(request: SimRequest): void {
    const held = this.blockHolds.get(request)!;
    if (--held.waits > 0) return;
    this.blockHolds.delete(request);
    // A run of decode passes observed its passes with the blocks still held: it stops here, as stepping would see them freed.
    this.cutDecodeRun();
    this.g1.releaseSlots(held.slots, held.private_blocks);
    this.kick();
  }

  /** Asks for a pass to start at this instant, in the pass-start phase, if none is running. */
  kick(): void {
    if (this.busy || this.startScheduled) return;
    this.startScheduled = true;
    this.kernel.at(this.kernel.now, Phase.PassStart, this.rank_index, this.startPassAction);
  }

  /** Emits a HostPinned event for a shared/private pool change on this rank's stream, now. */
  emitNow(events: KvEvent[]): void {
    if (events.length > 0) this.listener.emit(this, events);
  }

  private startPass(): void {
    this.startScheduled = false;
    if (this.busy) return;
    this.plan();
    const count = this.planCount;
    if (count === 0) {
      this.flushOutbox();
      return;
    }
    this.busy = true;
    const shape = this.passShape();
    const duration = passDurationNs(this.settings.pass_time, shape) + plantedPassDelayNs(); // planted fault (src/fuzz/simulatorFaults.ts)
    if (this.preemptedWhileCopying.length > 0) {
      this.fencePass(shape, duration);
      return;
    }
    if (this.passObserver !== null) this.passObserver(this, this.observePass(this.kernel.now, shape, duration));
    const runPasses = this.batchDecodeRuns ? this.decodeRunLength() : 1;
    if (runPasses > 1) this.startDecodeRun(runPasses, shape, duration);
    else this.kernel.at(this.kernel.now + duration, Phase.PassCompletion, this.rank_index, this.endPassAction);
  }

  /**
   * A pass whose plan preempted requests while D2H copies of theirs were still reading their G1
   * blocks computes only when those copies are done (as vLLM's next step waits for them, and
   * AISimulate delays the rank's compute): its blocks may be the ones being read. It is planned now
   * and starts when the last copy ends.
   */
  private fencePass(shape: PassShape, duration_ns: Nanos): void {
    for (const request of this.preemptedWhileCopying) if (this.copiesInFlight.has(request)) this.fencedBy.add(request);
    this.preemptedWhileCopying = [];
    this.fencedPass = { shape, duration_ns };
    if (this.fencedBy.size === 0) this.computeFencedPass();
  }

  private computeFencedPass(): void {
    const { shape, duration_ns } = this.fencedPass!;
    this.fencedPass = null;
    if (this.passObserver !== null) this.passObserver(this, this.observePass(this.kernel.now, shape, duration_ns));
    this.kernel.at(this.kernel.now + duration_ns, Phase.PassCompletion, this.rank_index, this.endPassAction);
  }

  /**
   * How many passes, from the one just planned, are the same decode-only pass: every running
   * request takes one decode step, none needs a new G1 block or has anything to write to G2, no
   * request waits, and no event is due. The run stops at the first pass that finishes a request.
   * Nothing from outside changes such passes but a request joining this rank (cutDecodeRun).
   */
  private decodeRunLength(): number {
    const count = this.planCount;
    if (count === 0 || count !== this.running.length || this.waiting.length > 0 || this.outbox.length > 0 || this.loadsDoneMidPass.length > 0) return 1;
    const B = this.settings.block_size;
    let passes = Number.MAX_SAFE_INTEGER;
    for (let i = 0; i < count; i++) {
      if (this.planWork[i] !== DECODE) return 1;
      const request = this.planRequests[i];
      if (this.host !== null && Math.min(Math.floor(request.computed_tokens / B), request.blockCount) > request.write_through_blocks) return 1;
      const untilFinished = request.output_length - request.output_tokens;
      // Pass p plans input + outputs + p − 1 tokens of KV: within the blocks held while p ≤ room + 1.
      const untilNewBlock = request.heldBlocks * B - (request.input_length + request.output_tokens) + 1;
      passes = Math.min(passes, untilFinished, untilNewBlock);
    }
    return Math.max(passes, 1);
  }

  /** Schedules only the end of a run of identical decode passes; each pass's tokens are stamped as if stepped. */
  private startDecodeRun(passes: number, shape: PassShape, firstDuration: Nanos): void {
    const ends = this.runEnds_ns;
    ends.length = passes;
    this.runContextTokens = shape.decode_context_tokens;
    let end = this.kernel.now + firstDuration;
    ends[0] = end;
    for (let p = 2; p <= passes; p++) {
      end += passDurationNs(this.settings.pass_time, this.decodeRunShape(p)) + plantedPassDelayNs(); // planted fault (src/fuzz/simulatorFaults.ts)
      ends[p - 1] = end;
    }
    this.runPasses = passes;
    this.runCompleted = 0;
    this.runStarted = 1;
    this.runEndHandle = this.kernel.at(ends[passes - 1], Phase.PassCompletion, this.rank_index, this.endDecodeRunAction);
  }

  /** The shape of pass p of the decode run (written into the reused shape object). */
  private decodeRunShape(p: number): PassShape {
    const shape = this.shape;
    const sequences = this.planCount;
    shape.has_prefill = false;
    shape.prefill_tokens = 0;
    shape.decode_sequences = sequences;
    shape.decode_context_tokens = this.runContextTokens + sequences * (p - 1);
    shape.context_tokens = shape.decode_context_tokens;
    return shape;
  }

  /** The run's last pass ends now: the passes before it are accounted, then it ends as any pass does. */
  private endDecodeRun(): void {
    this.advanceDecodeRun(this.runPasses - 1, this.runPasses);
    this.runPasses = 0;
    this.endPass();
  }

  /**
   * A request joins this rank during a decode run: the run is cut where stepping would have
   * changed course. Passes that ended before now are accounted; the pass under way (if one
   * started) becomes the run's last, and otherwise the next pass starts now as stepping would.
   */
  private cutDecodeRun(): void {
    if (this.runPasses === 0) return;
    const kernel = this.kernel;
    const ends = this.runEnds_ns;
    let completed = this.runCompleted;
    while (completed < this.runPasses && kernel.ranBefore(ends[completed], Phase.PassCompletion, this.rank_index)) completed++;
    if (completed >= this.runPasses) throw new InvariantError(`rank ${this.rank.worker_id}/${this.rank.dp_rank}: its decode run ended at ${ends[this.runPasses - 1]} ns but was still under way at ${kernel.now} ns`);
    const nextStarted = completed === 0 || kernel.ranBefore(ends[completed - 1], Phase.PassStart, this.rank_index);
    this.advanceDecodeRun(completed, nextStarted ? completed + 1 : completed);
    kernel.cancel(this.runEndHandle);
    if (nextStarted) {
      this.runPasses = completed + 1;
      this.runEndHandle = kernel.at(ends[completed], Phase.PassCompletion, this.rank_index, this.endDecodeRunAction);
      return;
    }
    // Stepping ended pass `completed` at this instant and asked for the next pass to start now.
    this.runPasses = 0;
    this.planCount = 0;
    this.busy = false;
    this.kick();
  }

  /** Accounts the run's passes up to `completed` (their tokens) and `started` (observed). */
  private advanceDecodeRun(completed: number, started: number): void {
    const ends = this.runEnds_ns;
    const observer = this.passObserver;
    for (let p = this.runStarted + 1; observer !== null && p <= started; p++) {
      const start = ends[p - 2];
      observer(this, this.observePass(start, this.decodeRunShape(p), ends[p - 1] - start));
    }
    this.runStarted = Math.max(this.runStarted, started);
    for (let p = this.runCompleted + 1; p <= completed; p++) {
      const end = ends[p - 1];
      for (let i = 0; i < this.planCount; i++) this.stampTokenAt(this.planRequests[i], end);
    }
    this.runCompleted = Math.max(this.runCompleted, completed);
  }

  /** What the planned pass computes (its duration depends on nothing else). */
  private passShape(): PassShape {
    const shape = this.shape;
    shape.has_prefill = false;
    shape.prefill_tokens = 0;
    shape.decode_sequences = 0;
    shape.context_tokens = 0;
    shape.decode_context_tokens = 0;
    for (let i = 0; i < this.planCount; i++) {
      const request = this.planRequests[i];
      const work = this.planWork[i];
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

  private observePass(time_ns: Nanos, shape: PassShape, duration_ns: Nanos): PassObservation {
    let scheduled_tokens = 0;
    for (let i = 0; i < this.planCount; i++) scheduled_tokens += this.planWork[i] === DECODE ? 1 : this.planWork[i];
    return {
      time_ns,
      running_requests: this.running.length,
      scheduled_tokens,
      g1_occupied_blocks: this.settings.num_gpu_blocks - this.g1.freeBlocks,
      host_used_blocks: this.host === null ? null : this.host.pool.usedBlocks,
      shape: { ...shape },
      duration_ns,
    };
  }

  /**
   * ENG-1: running requests first, then (as vLLM does) requests whose G2 load has finished, then
   * waiting ones in FCFS order under the caps (into planRequests / planWork). As in vLLM, a restore
   * starts only while a running slot is free, but takes none while it loads (max_num_seqs caps the
   * running requests); once loaded it waits for a slot, ahead of the ordinary queue.
   */
  private plan(): void {
    let budget = this.settings.max_num_batched_tokens;
    this.planCount = 0;
    const preemptionsAtStart = this.preemptionCount;
    for (let i = 0; i < this.running.length && budget > 0; i++) {
      const request = this.running[i];
      const work = this.continueRunning(request, budget);
      if (work === null) {
        if (this.running[i] !== request) i--;
        continue;
      }
      this.addToPlan(request, work);
      budget -= work === DECODE ? 1 : work;
    }
    // As vLLM does, a pass that had to preempt admits nothing new; but when the preemptions left
    // nothing to run, this is vLLM's next (immediate) step, which admits as usual.
    if (this.preemptionCount !== preemptionsAtStart && this.planCount > 0) return;
    budget = this.admitLoadedRequests(budget);
    for (let i = 0; i < this.waiting.length && budget > 0 && this.running.length < this.settings.max_num_seqs; ) {
      const request = this.waiting[i];
      if (request.state === 'loading' || request.state === 'loaded') {
        i++;
        continue;
      }
      const work = this.tryAdmit(request, budget);
      if (work === 'stop') break;
      if (work === 'failed') continue;
      if (work === null) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.startRunning(request);
      this.addToPlan(request, work);
      budget -= work === DECODE ? 1 : work;
    }
  }

  /** An admitted request takes a running slot (and says so in its state, as a stalled run's report shows it). */
  private startRunning(request: SimRequest): void {
    this.running.push(request);
    request.state = 'running';
  }

  /** Requests whose G2 load has finished are scheduled ahead of the ordinary waiting queue, in queue order. */
  private admitLoadedRequests(budget: number): number {
    for (let i = 0; i < this.waiting.length && budget > 0 && this.restoresInFlight > 0 && this.running.length < this.settings.max_num_seqs; ) {
      const request = this.waiting[i];
      if (request.state !== 'loaded') {
        i++;
        continue;
      }
      const work = request.kv_from_prefill ? this.admitPulled(request) : this.admitLoaded(request, budget);
      this.waiting.splice(i, 1);
      this.restoresInFlight--;
      this.startRunning(request);
      this.addToPlan(request, work);
      budget -= work === DECODE ? 1 : work;
    }
    return budget;
  }

  private addToPlan(request: SimRequest, work: PlannedWork): void {
    this.planRequests[this.planCount] = request;
    this.planWork[this.planCount] = work;
    this.planCount++;
  }

  private continueRunning(request: SimRequest, budget: number): PlannedWork | null {
    const prefill = !request.prefillDone;
    const chunk = prefill ? Math.min(request.prefill_target_tokens - request.computed_tokens, budget) : 0;
    const tokens = prefill ? request.computed_tokens + chunk : request.input_length + request.output_tokens;
    if (!this.makeRoom(request, tokens)) return null;
    return prefill ? chunk : DECODE;
  }

  /**
   * Gets G1 blocks for a running request, preempting the most recently admitted running requests
   * (vLLM's recompute preemption) until they fit. False when the request itself was preempted: as
   * vLLM does with the last one left, it waits until blocks are free (held by other requests,
   * waiting or ended: an ended request's blocks stay held until its D2H copies or handoff are done).
   */
  private makeRoom(request: SimRequest, tokens: number): boolean {
    while (!this.ensureBlocks(request, tokens)) {
      const victim = this.running[this.running.length - 1];
      if (victim === request) this.checkFitsAlone(request, tokens);
      this.preempt(victim);
      if (victim === request) return false;
    }
    return true;
  }

  /** Admission refuses a request that needs more G1 blocks than the rank has (tryAdmit): one admitted always fits alone, or it would be preempted forever. */
  private checkFitsAlone(request: SimRequest, tokens: number): void {
    const needed = Math.ceil(tokens / this.settings.block_size);
    if (needed > this.settings.num_gpu_blocks) {
      throw new InvariantError(`request ${request.request_id} on ${this.rank.worker_id}/${this.rank.dp_rank} needs ${needed} G1 blocks and the rank has ${this.settings.num_gpu_blocks}, past admission's check`);
    }
  }

  /** Recompute preemption: the request lets go of its G1 blocks and waits at the head of the queue. */
  private preempt(request: SimRequest): void {
    this.running.splice(this.running.indexOf(request), 1);
    this.g1.releaseSlots(request.entry_slots, request.private_blocks);
    request.clearEntries();
    request.private_blocks = 0;
    request.computed_tokens = 0;
    request.recompute_output_tokens = request.output_tokens;
    request.preemptions++;
    this.preemptionCount++;
    if (this.copiesInFlight.has(request)) this.preemptedWhileCopying.push(request);
    request.state = 'waiting';
    this.waiting.unshift(request);
    this.listener.preempted(this, request);
  }

  private fail(request: SimRequest, reason: string): void {
    const index = this.running.indexOf(request);
    if (index >= 0) this.running.splice(index, 1);
    this.g1.releaseSlots(request.entry_slots, request.private_blocks);
    request.clearEntries();
    request.private_blocks = 0;
    request.state = 'failed';
    request.failure_reason = reason;
    this.listener.finished(request);
  }

  /** Blocks needed to hold `tokens` tokens of KV, allocated now if missing. */
  private ensureBlocks(request: SimRequest, tokens: number): boolean {
    const needed = Math.ceil(tokens / this.settings.block_size) - request.heldBlocks;
    if (needed <= 0) return true;
    if (!this.g1.allocate(needed)) return false;
    request.private_blocks += needed;
    return true;
  }

  /** ENG-4: how many prompt blocks may be reused at most. */
  private reusableBlocks(request: SimRequest): number {
    const tokens = request.output_length > 0 ? request.input_length - 1 : request.input_length;
    return Math.min(Math.floor(Math.max(tokens, 0) / this.settings.block_size), request.blockCount);
  }

  /**
   * G2-6 admission: G1 prefix first, then consecutive G2 keys. A G2 hit starts the H2D load and
   * admits only when it completes; pending or contended keys defer the request.
   * Returns the first work, null to skip this request for now, 'stop' to stop admitting, or
   * 'failed' when it can never fit in G1 (it has left the queue).
   */
  private tryAdmit(request: SimRequest, budget: number): PlannedWork | null | 'stop' | 'failed' {
    // The last output token's KV is never computed: input + output − 1 tokens need KV at most. A
    // prefill worker computes the prompt only: the outputs are decoded (and their KV made) elsewhere.
    const decodedHere = this.role === 'prefill' ? 0 : Math.max(request.output_length - 1, 0);
    const neededBlocks = Math.ceil((request.input_length + decodedHere) / this.settings.block_size);
    if (neededBlocks > this.settings.num_gpu_blocks) {
      this.waiting.splice(this.waiting.indexOf(request), 1);
      const where = request.kv_from_prefill ? ' (decode worker)' : this.role === 'prefill' ? ' (prefill worker)' : '';
      const what = this.role === 'prefill' ? 'its prompt' : 'its prompt and output';
      this.fail(request, `needs ${neededBlocks} G1 blocks for ${what}; the rank${where} has ${this.settings.num_gpu_blocks}`);
      // Its KV never moved: the prefill worker lets its blocks go.
      if (request.kv_from_prefill) this.listener.pullAbandoned(request);
      return 'failed';
    }
    if (request.kv_from_prefill) return this.startPull(request);
    const limit = faultPlanted('reuse') ? 0 : this.reusableBlocks(request); // planted fault (src/fuzz/simulatorFaults.ts)
    const g1Blocks = Math.min(this.g1.prefixLength(request.block_ids), limit);
    // G2 is looked up with prefix caching off too (no G1 prefix then): vLLM hashes a prompt's blocks
    // whenever a KV connector is configured, and its offloading connector looks up and loads CPU
    // blocks without consulting the prefix-caching setting (docs/model.md, Engine).
    const lookup = this.host && !faultPlanted('g2-off') ? this.host.pool.lookup(request.block_ids, g1Blocks, limit, this.rank_index) : null;
    if (this.host) this.host.pool.touch(request.block_ids); // (G2 lookup above: planted fault 'g2-off', src/fuzz/simulatorFaults.ts)
    if (lookup && lookup.outcome === 'deferred') {
      this.recordAttempt(request, 'deferred', g1Blocks, lookup.blocks, `G2 block ${lookup.reason === 'pending' ? 'still being stored' : 'being loaded by another request on this rank'}`);
      return null;
    }
    const hostBlocks = lookup ? lookup.blocks : 0;
    const g1Ids = request.block_ids.subarray(0, g1Blocks);
    request.setEntries(this.g1.acquireSlots(g1Ids));
    if (hostBlocks > 0) return this.startRestore(request, g1Blocks, hostBlocks);
    request.computed_tokens = g1Blocks * this.settings.block_size;
    const chunk = Math.min(request.prefill_target_tokens - request.computed_tokens, budget);
    if (!this.ensureBlocks(request, request.computed_tokens + chunk)) {
      this.undoAcquire(request);
      this.recordAttempt(request, 'no-blocks', g1Blocks, 0, 'not enough free G1 blocks');
      return 'stop';
    }
    this.attributeReuse(request, g1Blocks, 0);
    this.recordAttempt(request, 'admitted', g1Blocks, 0, null);
    return chunk;
  }

  /** The admission did not happen: its G1 prefix goes back as it was, LRU order included (no touch). */
  private undoAcquire(request: SimRequest): void {
    this.g1.undoAcquire(request.entry_slots);
    request.clearEntries();
  }

  /**
   * Starts a restore only when the whole prompt can be admitted once it is loaded: it reserves G1
   * room for every prefill token now (so a loaded request never waits for blocks), pins the G2
   * entries and starts the H2D load. Its load takes no running slot (as in vLLM); once loaded it waits
   * for one, ahead of the ordinary queue (admitLoadedRequests).
   */
  private startRestore(request: SimRequest, g1Blocks: number, hostBlocks: number): PlannedWork | null | 'stop' {
    const host = this.host!;
    const room = Math.max(Math.ceil(request.prefill_target_tokens / this.settings.block_size), g1Blocks + hostBlocks) - g1Blocks;
    if (!this.g1.allocate(room)) {
      this.undoAcquire(request);
      this.recordAttempt(request, 'no-blocks', g1Blocks, hostBlocks, 'not enough free G1 blocks for the restore and the rest of the prompt');
      return 'stop';
    }
    request.private_blocks += room;
    this.restoresInFlight++;
    const ids = request.block_ids.slice(g1Blocks, g1Blocks + hostBlocks);
    host.pool.pin(ids, this.rank_index);
    // G2-6: like the reuse, the restore's sources and H2D wait are those of the first admission's
    // restore; a later one (a readmission after preemption, on a decode rank too) replaced them, so
    // a record told of one restore's reuse and another's wait (found by an outside audit).
    if (request.first_admission_ns === null) {
      request.host_restore_sources = host.pool.originsOf(ids);
      request.h2d_started_ns = this.kernel.now;
    }
    request.pinned_host_ids = ids;
    request.restore = { g1_blocks: g1Blocks, host_blocks: hostBlocks };
    request.state = 'loading';
    this.attributeReuse(request, g1Blocks, hostBlocks);
    this.recordAttempt(request, 'loading', g1Blocks, hostBlocks, null);
    host.transfers.submit({
      direction: 'h2d',
      rank_index: this.rank_index,
      worker_id: this.rank.worker_id,
      dp_rank: this.rank.dp_rank,
      bytes: hostBlocks * this.block_bytes,
      blocks: hostBlocks,
      request_id: request.request_id,
      onComplete: () => this.restoreDone(request),
    });
    return null;
  }

  /** G2-6: a load finishing mid-pass takes effect at that pass's end. */
  private restoreDone(request: SimRequest): void {
    if (this.busy) this.loadsDoneMidPass.push(request);
    else this.markLoaded(request);
  }

  /** A load (a G2 restore, or a KV pull from a prefill worker) has landed: the request may be admitted. */
  private markLoaded(request: SimRequest): void {
    if (!request.kv_from_prefill) this.endHostLoad(request);
    request.state = 'loaded';
    this.kick();
  }

  /** A G2 restore's entries are no longer pinned (other ranks of a shared pool may evict them again); its H2D wait is known. */
  private endHostLoad(request: SimRequest): void {
    this.host!.pool.unpin(request.pinned_host_ids, this.rank_index);
    for (const subscriber of this.host!.subscribers) if (subscriber !== this) subscriber.kick();
    if (request.first_admission_ns === null) request.h2d_wait_ns = this.kernel.now - request.h2d_started_ns!;
  }

  /** A restored request is admitted: its loaded blocks become G1 cache entries; its G1 room was reserved when the restore started. */
  private admitLoaded(request: SimRequest, budget: number): number {
    const B = this.settings.block_size;
    const { g1_blocks, host_blocks } = request.restore!;
    if (request.pinned_host_ids.length > 0) this.storeBlocks(request, g1_blocks, g1_blocks + host_blocks);
    request.pinned_host_ids = [];
    request.computed_tokens = (g1_blocks + host_blocks) * B;
    const chunk = Math.min(request.prefill_target_tokens - request.computed_tokens, budget);
    if (!this.ensureBlocks(request, request.computed_tokens + chunk)) {
      throw new InvariantError(`request ${request.request_id} on ${this.rank.worker_id}/${this.rank.dp_rank}: a loaded restore lacks the G1 room reserved for it`);
    }
    request.restore = null;
    this.recordAttempt(request, 'admitted', g1_blocks, host_blocks, null);
    return chunk;
  }

  /**
   * PD-1, as vLLM's decode side does: G1 room for the prompt's KV (and the first token's) is reserved
   * before the KV is pulled from the prefill worker; the request then waits for it like a G2 restore,
   * holding that room but no running slot, and is admitted ahead of the queue once it has landed.
   */
  private startPull(request: SimRequest): null | 'stop' {
    if (!this.ensureBlocks(request, request.input_length + request.output_tokens)) {
      this.recordAttempt(request, 'no-blocks', 0, 0, 'not enough free G1 blocks for the KV from the prefill worker');
      return 'stop';
    }
    this.restoresInFlight++;
    request.state = 'loading';
    this.recordAttempt(request, 'loading', 0, 0, 'KV moving from the prefill worker');
    this.listener.pullKv(request, () => this.restoreDone(request));
    return null;
  }

  /** A pulled request whose KV has landed: the decode half starts with the whole prompt's KV in place, its blocks become G1 entries. */
  private admitPulled(request: SimRequest): PlannedWork {
    request.kv_from_prefill = false;
    request.computed_tokens = request.input_length;
    this.storeBlocks(request, 0, request.blockCount);
    this.recordAttempt(request, 'admitted', 0, 0, 'KV transferred from the prefill worker');
    return DECODE;
  }

  /** G2-6: reuse is attributed at first admission only. */
  private attributeReuse(request: SimRequest, g1Blocks: number, hostBlocks: number): void {
    if (request.first_admission_ns !== null) return;
    request.g1_reused_tokens = g1Blocks * this.settings.block_size;
    request.host_reused_tokens = hostBlocks * this.settings.block_size;
  }

  private recordAttempt(request: SimRequest, outcome: 'admitted' | 'deferred' | 'loading' | 'no-blocks', g1: number, host: number, reason: string | null): void {
    if (outcome === 'admitted' && request.first_admission_ns === null) request.first_admission_ns = this.kernel.now;
    request.addAttempt({ time_ns: this.kernel.now, ...this.rank, outcome, g1_blocks: g1, host_blocks: host, reason });
  }

  /**
   * Turns a private block into a cache entry if it is new (true: a Device Stored is then due), or
   * makes the request use the entry another request already stored for it (its copy is freed).
   */
  private promoteBlock(request: SimRequest, id: BlockId): boolean {
    const made = this.g1.promoteToSlot(id);
    if (made !== NO_SLOT) {
      request.private_blocks--;
      request.addEntry(made);
      return true;
    }
    const adopted = this.g1.adoptSlot(id);
    if (adopted !== NO_SLOT) {
      request.private_blocks--;
      request.addEntry(adopted);
    }
    return false;
  }

  private endPass(): void {
    const requests = this.planRequests;
    const work = this.planWork;
    const count = this.planCount;
    for (let i = 0; i < count; i++) {
      if (work[i] === DECODE) this.finishDecodeStep(requests[i]);
      else this.finishPrefillChunk(requests[i], work[i]);
    }
    for (let i = 0; i < count; i++) this.writeThrough(requests[i]);
    for (let i = 0; i < count; i++) if (this.isComplete(requests[i])) this.finish(requests[i]);
    this.planCount = 0;
    this.flushOutbox();
    this.busy = false;
    if (this.loadsDoneMidPass.length > 0) for (const request of this.loadsDoneMidPass.splice(0)) this.markLoaded(request);
    this.kick();
  }

  private finishPrefillChunk(request: SimRequest, tokens: number): void {
    const B = this.settings.block_size;
    const before = Math.floor(request.computed_tokens / B);
    request.computed_tokens += tokens;
    const after = Math.min(Math.floor(request.computed_tokens / B), request.blockCount);
    this.storeBlocks(request, before, after);
    if (!request.prefillDone) return;
    if (request.first_token_ns === null) this.listener.prefillComplete(request);
    if (request.output_tokens < request.output_length) this.stampToken(request);
  }

  private finishDecodeStep(request: SimRequest): void {
    this.stampToken(request);
  }

  private stampToken(request: SimRequest): void {
    this.stampTokenAt(request, this.kernel.now);
  }

  private stampTokenAt(request: SimRequest, now: Nanos): void {
    if (request.first_token_ns === null) request.first_token_ns = now;
    else {
      if (request.second_token_ns === null) request.second_token_ns = now;
      (request.token_gaps_ns ??= new ValueCounts()).add(now - request.last_token_ns!);
    }
    request.last_token_ns = now;
    request.output_tokens++;
  }

  /** Blocks [from, to) of the prompt became complete this pass: cache entries and Device Stored. */
  private storeBlocks(request: SimRequest, from: number, to: number): void {
    let runStart = from;
    let runLength = 0;
    for (let i = from; i < to; i++) {
      if (this.promoteBlock(request, request.block_ids[i])) {
        if (runLength === 0) runStart = i;
        runLength++;
      } else if (runLength > 0) {
        this.storedRun(request, runStart, runLength);
        runLength = 0;
      }
    }
    if (runLength > 0) this.storedRun(request, runStart, runLength);
  }

  /** A Device Stored is due for `length` new cache entries from prompt block `start`. */
  private storedRun(request: SimRequest, start: number, length: number): void {
    const data = this.storedData(request, start, start + length);
    this.outbox.push({ tier: 'Device', data });
  }

  /** A Stored of prompt blocks [from, to) of a request, holding their ids (and the parent's) until the router has it. */
  private storedData(request: SimRequest, from: number, to: number): StoredIds {
    const parent = from === 0 ? NO_BLOCK_ID : request.block_ids[from - 1];
    if (!this.holdIdRuns) return new StoredIds(this.blockIds, request.block_ids.slice(from, to), request.tokenWordsView(from, to).slice(), parent, from);
    return new StoredIds(this.blockIds, request.block_ids.subarray(from, to), request.tokenWordsView(from, to), parent, from, request.heldIds);
  }

  /**
   * G2-2..4: the complete prompt blocks computed so far that G2 lacks form one store cohort. The
   * cohort reaches back over evicted blocks just before the new ones, so that every contiguous run
   * of it has its parent in G2; its HostPinned Stored goes out as one parent-linked event per run.
   * The store names the blocks from where the request's stores stopped (or from where the cohort
   * reaches back) to the last complete one; none of those G2 holds already is evicted to make room.
   */
  private writeThrough(request: SimRequest): void {
    if (!this.host) return;
    const complete = Math.min(Math.floor(request.computed_tokens / this.settings.block_size), request.blockCount);
    if (complete <= request.write_through_blocks) return;
    const pool = this.host.pool;
    const ids = request.block_ids;
    let firstIndex = request.write_through_blocks;
    while (firstIndex > 0 && !pool.contains(ids[firstIndex - 1])) firstIndex--;
    const cohortIndexes: number[] = [];
    for (let i = firstIndex; i < complete; i++) if (!pool.contains(ids[i])) cohortIndexes.push(i);
    const cohortSize = cohortIndexes.length;
    if (cohortSize === 0) {
      request.write_through_blocks = complete;
      return;
    }
    const cohort: BlockId[] = new Array(cohortSize);
    for (let n = 0; n < cohortSize; n++) cohort[n] = ids[cohortIndexes[n]];
    // The parent of each run is in the pool now; anchored, it stays there until the run's Stored is out.
    const parents: BlockId[] = [];
    for (let n = 0; n < cohortSize; n++) {
      const index = cohortIndexes[n];
      if (index > 0 && (n === 0 || cohortIndexes[n - 1] !== index - 1)) parents.push(ids[index - 1]);
    }
    for (const parent of parents) pool.anchor(parent);
    // Every block the store names, those G2 holds already included, is spared while room is made.
    const reservation = pool.reserve(cohort, request.identity.cache_id ?? request.request_id, ids, firstIndex, complete);
    if (!reservation) {
      for (const parent of parents) pool.unanchor(parent);
      return;
    }
    request.write_through_blocks = complete;
    // As vLLM's offloading connector (and AISimulate) do once a store is prepared, the request's
    // resident keys so far are touched, last to first, so its first block is the most recent.
    pool.touch(ids, complete);
    if (reservation.victims.length > 0) {
      // The reservation holds each victim once: the first subscriber's event takes those holds, and
      // every event holds the victims before any is emitted (an event emitted at once may be
      // delivered, and let go of its holds, before the next subscriber's is made).
      const victims = Int32Array.from(reservation.victims);
      const subscribers = this.host.subscribers;
      const removals = subscribers.map((_, n) => (n === 0 ? RemovedIds.takingHolds(this.blockIds, victims) : new RemovedIds(this.blockIds, victims)));
      subscribers.forEach((subscriber, n) => {
        const data = removals[n];
        if (subscriber === this) this.outbox.push({ tier: 'HostPinned', data });
        else subscriber.emitNow([subscriber.events.numbered('HostPinned', data)]);
      });
      if (subscribers.length === 0) this.blockIds.releaseAll(victims);
    }
    // The Stored events are described now (holding their blocks): the request may have finished when the copy completes.
    const runs = this.hostRuns(request, cohortIndexes);
    const host = this.host;
    const completeCohort = (): void => {
      // A parent still pending (a shared pool may finish copies out of order) goes out first.
      const pendingParent = parents.find((parent) => pool.isPending(parent));
      if (pendingParent !== undefined) {
        pool.whenComplete(pendingParent, completeCohort);
        return;
      }
      pool.complete(cohort, reservation.slots);
      for (const parent of parents) pool.unanchor(parent);
      for (const subscriber of host.subscribers) {
        subscriber.emitNow(runs.map((run) => subscriber.events.numbered('HostPinned', run.copy())));
        subscriber.kick();
      }
      for (const run of runs) run.release();
      pool.releaseWaiters(cohort);
    };
    this.copiesInFlight.set(request, (this.copiesInFlight.get(request) ?? 0) + 1);
    host.transfers.submit({
      direction: 'd2h',
      rank_index: this.rank_index,
      worker_id: this.rank.worker_id,
      dp_rank: this.rank.dp_rank,
      bytes: cohort.length * this.block_bytes,
      blocks: cohort.length,
      request_id: request.request_id,
      onComplete: () => {
        completeCohort();
        this.copyDone(request);
      },
    });
  }

  /** The contiguous runs of a cohort (prompt block indexes in order), each a Stored with its parent and start position. */
  private hostRuns(request: SimRequest, indexes: readonly number[]): StoredIds[] {
    const runs: StoredIds[] = [];
    for (let n = 0; n < indexes.length; ) {
      let end = n + 1;
      while (end < indexes.length && indexes[end] === indexes[end - 1] + 1) end++;
      runs.push(this.storedData(request, indexes[n], indexes[end - 1] + 1));
      n = end;
    }
    return runs;
  }

  private isComplete(request: SimRequest): boolean {
    if (!request.prefillDone) return false;
    return request.stage === 'prefill' || request.output_tokens >= request.output_length;
  }

  private finish(request: SimRequest): void {
    const index = this.running.indexOf(request);
    if (index < 0) throw new InvariantError(`finishing request ${request.request_id} that is not running on ${this.rank.worker_id}/${this.rank.dp_rank}`);
    this.running.splice(index, 1);
    const handingOff = request.stage === 'prefill' && request.output_tokens < request.output_length;
    const waits = (handingOff ? 1 : 0) + (this.copiesInFlight.has(request) ? 1 : 0);
    if (waits > 0) this.blockHolds.set(request, { slots: Int32Array.from(request.entry_slots), private_blocks: request.private_blocks, waits });
    else this.g1.releaseSlots(request.entry_slots, request.private_blocks);
    request.clearEntries();
    request.private_blocks = 0;
    if (handingOff) {
      request.state = 'transferring';
      this.listener.handoff(request);
      return;
    }
    request.state = 'finished';
    request.finished_ns = this.kernel.now;
    this.listener.finished(request);
  }

  /** Emits the pass's events as one batch; consecutive evictions go out as one Device Removed of all their blocks. */
  private flushOutbox(): void {
    if (this.outbox.length === 0) return;
    const drafts = this.outbox;
    this.outbox = [];
    const events: KvEvent[] = [];
    for (let i = 0; i < drafts.length; ) {
      const draft = drafts[i];
      if (typeof draft !== 'number') {
        events.push(this.events.numbered(draft.tier, draft.data));
        i++;
        continue;
      }
      let end = i + 1;
      while (end < drafts.length && typeof drafts[end] === 'number') end++;
      const ids = new Int32Array(end - i);
      for (let k = 0; k < ids.length; k++) ids[k] = drafts[i + k] as BlockId;
      // The outbox held each evicted id once: the event takes those holds.
      events.push(this.events.numbered('Device', RemovedIds.takingHolds(this.blockIds, ids)));
      i = end;
    }
    this.listener.emit(this, events);
  }
}
