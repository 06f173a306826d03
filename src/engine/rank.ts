// One vLLM-style engine rank (ENG-1..4, G2-5..7, PD-1): what the cluster calls it for (a request
// joining its queue, a handoff done, a pass asked for, its engine truth) and what it tells the
// cluster (RankListener). It coordinates; the work is done by free functions over its state
// (rankState.ts): starting a pass and planning it (passStart.ts), keeping running requests going and
// preempting them (preemption.ts), admitting waiting ones, with G2 restores and KV pulled from a
// prefill worker (admission.ts), a request's G1 blocks and the entries its prompt blocks become
// (rankBlocks.ts), ending a pass and finishing requests (passEnd.ts), blocks held while copies and
// handoffs read them and the pass they fence (blockHolds.ts), and what it shows without changing
// (rankView.ts). Its other parts: the pass plan (passPlan.ts), runs of identical decode passes
// taken as one kernel action (decodeRun.ts), G2 write-through (hostWriter.ts), the pass's KV events
// (rankOutbox.ts), and what it is given and shows (rankInterfaces.ts).
import { Kernel, Phase } from '../kernel';
import type { BlockId, BlockIds } from '../collections/blockIds';
import type { KvEvent, RankRef } from '../events/model';
import type { Nanos } from '../time';
import type { EngineTruth, SimRequest } from './request';
import type { PassShape } from './passTime';
import type { EngineSettings, HostDomain, PassObservation, RequestListener } from './rankInterfaces';
import { RankState } from './rankState';
import { DecodeRun } from './decodeRun';
import { HostWriter } from './hostWriter';
import { startPass as importedStartPass } from './passStart';
import { endPass as importedEndPass } from './passEnd';
import { storedData as importedStoredData } from './rankBlocks';
import { copyDone as importedCopyDone, copyStarted as importedCopyStarted, handoffDone as importedHandoffDone } from './blockHolds';
import { observePass as importedObservePass, truthOverlap as importedTruthOverlap, whereIs as importedWhereIs } from './rankView';
export type { EngineSettings, HostDomain, PassObservation } from './rankInterfaces';
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

/** What a rank tells the rest of the cluster: its requests' progress, its events and its preemptions. */
export interface RankListener extends RequestListener {
  emit(rank: RankEngine, events: KvEvent[]): void;
  /** The request was just preempted (its `preemptions` counts this one). */
  preempted(rank: RankEngine, request: SimRequest): void;
}

export class RankEngine extends RankState {
  declare readonly listener: RankListener;
  private hostDomain: HostDomain | null = null;
  /** Told of every non-empty pass once it is planned (the fuzzer's capacity checks); observing never changes the run. */
  passObserver: ((rank: RankEngine, pass: PassObservation) => void) | null = null;
  private readonly startPassAction = () => startPass(this);
  readonly endPassAction = () => endPass(this);
  readonly decodeRun: DecodeRun;

  constructor(rank: RankRef, rank_index: number, role: 'aggregated' | 'prefill' | 'decode', settings: EngineSettings, kernel: Kernel, listener: RankListener, blockIds: BlockIds) {
    super(rank, rank_index, role, settings, kernel, listener, blockIds);
    this.decodeRun = new DecodeRun(
      {
        rank_index,
        showPass: (time_ns, shape, duration_ns) => this.showPass(time_ns, shape, duration_ns),
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

  showPass(time_ns: Nanos, shape: PassShape, duration_ns: Nanos): boolean {
    if (this.passObserver === null) return false;
    this.passObserver(this, observePass(this, time_ns, shape, duration_ns));
    return true;
  }

  tellPreempted(request: SimRequest): void {
    this.listener.preempted(this, request);
  }
}
