// One vLLM-style engine rank (ENG-1..4, G2-5..7, PD-1): its state (waiting and running queues, G1,
// the pass being planned or run, the blocks still read after their request ended) and what the
// cluster calls it for: a request joining its queue, a handoff done, a pass asked for. Each part of
// its work is a module of free functions over that state: starting a pass and planning it
// (passStart.ts), keeping running requests going and preempting them (preemption.ts), admitting
// waiting ones, with G2 restores and KV pulled from a prefill worker (admission.ts), a request's G1
// blocks and the entries its prompt blocks become (rankBlocks.ts), ending a pass and finishing
// requests (passEnd.ts), blocks held while copies and handoffs read them and the pass they fence
// (blockHolds.ts), and what it shows without changing (rankView.ts). Its other parts: the pass plan
// (passPlan.ts), runs of identical decode passes taken as one kernel action (decodeRun.ts), G2
// write-through (hostWriter.ts), the pass's KV events (rankOutbox.ts), and what it is given and
// tells (rankInterfaces.ts).
import { Kernel, Phase } from '../kernel';
import type { BlockId, BlockIds } from '../collections/blockIds';
import type { KvEvent, RankRef } from '../events/model';
import { RankEventStream } from '../events/model';
import type { Nanos } from '../time';
import { DeviceCache } from './deviceCache';
import type { EngineTruth, SimRequest } from './request';
import type { PassShape } from './passTime';
import type { EngineSettings, HostDomain, PassObservation, RankListener } from './rankInterfaces';
import { RankOutbox } from './rankOutbox';
import { PassPlan } from './passPlan';
import { DecodeRun } from './decodeRun';
import { HostWriter } from './hostWriter';
import { startPass as importedStartPass } from './passStart';
import { endPass as importedEndPass } from './passEnd';
import { storedData as importedStoredData } from './rankBlocks';
import { copyDone as importedCopyDone, copyStarted as importedCopyStarted, handoffDone as importedHandoffDone } from './blockHolds';
import { observePass as importedObservePass, truthOverlap as importedTruthOverlap, whereIs as importedWhereIs } from './rankView';
export type { EngineSettings, HostDomain, PassObservation, RankListener } from './rankInterfaces';
// Read per pass, per placement or per G2 store: copied into this module once (run through tsx,
// every read of an imported binding is a getter call, esbuild's live bindings).
const startPass = importedStartPass;
const endPass = importedEndPass;
const storedData = importedStoredData;
const copyStarted = importedCopyStarted;
const copyDone = importedCopyDone;
const handoffDone = importedHandoffDone;
const observePass = importedObservePass;
const truthOverlap = importedTruthOverlap;
const whereIs = importedWhereIs;

export class RankEngine {
  readonly g1: DeviceCache;
  readonly events: RankEventStream;
  private hostDomain: HostDomain | null = null;
  preemptionCount = 0;
  /** Told of every non-empty pass once it is planned (the fuzzer's capacity checks); observing never changes the run. */
  passObserver: ((rank: RankEngine, pass: PassObservation) => void) | null = null;
  /**
   * Runs of identical decode-only passes go through the kernel as one action (see DecodeRun);
   * false steps every pass through the kernel. Both give the same run, to the nanosecond.
   */
  batchDecodeRuns = true;
  /**
   * A Stored of a request's prompt blocks holds the request's run of ids with one count (IdRun);
   * false holds each id it names. Both give the same run.
   */
  holdIdRuns = true;

  // The rank's own state below is read and changed only by this module and the rank's modules
  // named above, never by the rest of the simulator.
  /** The G2 write-through (with a G2 side only). */
  writer: HostWriter | null = null;
  readonly waiting: SimRequest[] = [];
  readonly running: SimRequest[] = [];
  /** Events due at the end of the pass. */
  readonly outbox: RankOutbox;
  busy = false;
  startScheduled = false;
  loadsDoneMidPass: SimRequest[] = [];
  /**
   * The G1 blocks of ended requests that are still being read: by the KV handoff to a decode worker
   * (PD-1) and by D2H copies to G2 this rank started. vLLM's KV connectors free a finished request's
   * blocks only once those copies are done; `waits` counts what is still under way (the handoff,
   * the copies as one).
   */
  readonly blockHolds = new Map<SimRequest, { slots: Int32Array; private_blocks: number; waits: number }>();
  /** D2H copies (G2 store cohorts) this rank started for each request that are not done yet. */
  readonly copiesInFlight = new Map<SimRequest, number>();
  /**
   * Requests the pass being planned preempted while a D2H copy of theirs still reads their G1
   * blocks; then the requests whose copies the planned pass waits for before it computes (vLLM's
   * handle_preemptions waits for a preempted request's stores before its blocks are written again).
   */
  preemptedWhileCopying: SimRequest[] = [];
  fencedBy = new Set<SimRequest>();
  fencedPass: { shape: PassShape; duration_ns: Nanos } | null = null;
  /** Waiting requests whose G2 restore, or whose KV from a prefill worker (PD-1), is loading or loaded: each holds its G1 room, but no running slot (as in vLLM). */
  restoresInFlight = 0;
  /** The pass being planned or run. */
  readonly planned = new PassPlan();
  private readonly startPassAction = () => startPass(this);
  readonly endPassAction = () => endPass(this);
  /** The run of identical decode passes under way, if any. */
  readonly decodeRun: DecodeRun;

  constructor(
    readonly rank: RankRef,
    readonly rank_index: number,
    readonly role: 'aggregated' | 'prefill' | 'decode',
    readonly settings: EngineSettings,
    readonly kernel: Kernel,
    readonly listener: RankListener,
    /** The run's block id table, shared with the router's mirror. */
    readonly blockIds: BlockIds,
  ) {
    this.events = new RankEventStream(rank);
    const outbox = new RankOutbox(blockIds);
    this.outbox = outbox;
    this.g1 = new DeviceCache(settings.num_gpu_blocks, settings.enable_prefix_caching, (id) => outbox.evicted(id), blockIds);
    this.decodeRun = new DecodeRun(
      {
        rank_index,
        showPass: (time_ns, shape, duration_ns) => {
          if (this.passObserver === null) return false;
          this.passObserver(this, observePass(this, time_ns, shape, duration_ns));
          return true;
        },
        endPass: () => endPass(this),
        stepOn: () => {
          this.planned.clear();
          this.busy = false;
          this.kick();
        },
        name: () => `${this.rank.worker_id}/${this.rank.dp_rank}`,
      },
      kernel,
      settings.pass_time,
      this.planned,
    );
  }

  get host(): HostDomain | null {
    return this.hostDomain;
  }
  /** The rank's G2 side (set once the cluster has made its pool). */
  set host(domain: HostDomain | null) {
    this.hostDomain = domain;
    this.writer = domain === null ? null : new HostWriter(this.writerSide(), domain, this.blockIds);
  }

  /** What the G2 write-through sees of this rank. */
  private writerSide() {
    return {
      rank_index: this.rank_index,
      rank: this.rank,
      block_size: this.settings.block_size,
      block_bytes: this.block_bytes,
      outbox: this.outbox,
      storedData: (request: SimRequest, from: number, to: number) => storedData(this, request, from, to),
      copyStarted: (request: SimRequest) => copyStarted(this, request),
      copyDone: (request: SimRequest) => copyDone(this, request),
    };
  }

  get block_bytes(): number {
    return this.settings.block_size * this.settings.kv_cache_bytes_per_token;
  }

  /** Engine truth for a prompt, as the rank's events have told it so far (LAG-3; see rankView.ts). */
  truthOverlap(ids: ArrayLike<BlockId>): EngineTruth {
    return truthOverlap(this, ids);
  }

  /** Where an unfinished request is held on this rank, in words ("waiting at position 2 of 3 in the queue"). */
  whereIs(request: SimRequest): string {
    return whereIs(this, request);
  }

  /** A request routed here joins the waiting queue (FCFS). */
  enqueue(request: SimRequest): void {
    this.decodeRun.cut();
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
    this.decodeRun.cut();
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
    handoffDone(this, request);
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

  /** Emits the pass's events as one batch; consecutive evictions go out as one Device Removed of all their blocks. */
  flushOutbox(): void {
    if (this.outbox.isEmpty) return;
    this.listener.emit(this, this.outbox.flush(this.events));
  }
}
