// One vLLM-style engine rank (ENG-1..4, G2-5..7): waiting and running queues, planning passes
// under a token budget and a sequence cap with chunked prefill, admission (the G1 prefix, G2
// lookups and restores, KV pulled from a prefill worker), preemption, and the G1 entries a pass's
// prompt blocks become. Its parts: the pass plan (passPlan.ts), runs of identical decode passes
// taken as one kernel action (decodeRun.ts), G2 write-through (hostWriter.ts), the pass's KV
// events (rankOutbox.ts) and what it is given and tells (rankInterfaces.ts).
import { InvariantError, Kernel, Phase } from '../kernel';
import type { BlockId, BlockIds } from '../collections/blockIds';
import { NO_BLOCK_ID as IMPORTED_NO_BLOCK_ID } from '../collections/blockIds';
import { NO_SLOT as IMPORTED_NO_SLOT } from '../collections/blockSlots';
import type { KvEvent, RankRef } from '../events/model';
import { RankEventStream, StoredIds as ImportedStoredIds } from '../events/model';
import type { Nanos } from '../time';
import { DeviceCache } from './deviceCache';
import type { EngineTruth, SimRequest } from './request';
import { passDurationNs, PassShape } from './passTime';
import * as simulatorFaults from '../fuzz/simulatorFaults';
import type { EngineSettings, HostDomain, PassObservation } from './rankInterfaces';
import { RankOutbox } from './rankOutbox';
import { DECODE as IMPORTED_DECODE, PassPlan, type PlannedWork } from './passPlan';
import { DecodeRun } from './decodeRun';
import { HostWriter } from './hostWriter';
export type { EngineSettings, HostDomain, PassObservation } from './rankInterfaces';
// Constants read per block are copied into this module once: run through tsx, every read of an
// imported binding is a getter call (esbuild's live bindings), about a tenth of a replay's time.
// The planted-fault hooks are read per pass and per admission: copied too.
const NO_BLOCK_ID = IMPORTED_NO_BLOCK_ID;
const NO_SLOT = IMPORTED_NO_SLOT;
const DECODE = IMPORTED_DECODE;
const faultPlanted = simulatorFaults.faultPlanted;
const plantedPassDelayNs = simulatorFaults.plantedPassDelayNs;
/** Made per Stored: copied too. */
const StoredIds = ImportedStoredIds;
type StoredIds = ImportedStoredIds;

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

export class RankEngine {
  readonly g1: DeviceCache;
  readonly events: RankEventStream;
  private hostDomain: HostDomain | null = null;
  /** The G2 write-through (with a G2 side only). */
  private writer: HostWriter | null = null;
  private readonly waiting: SimRequest[] = [];
  private readonly running: SimRequest[] = [];
  /** Events due at the end of the pass. */
  private readonly outbox: RankOutbox;
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
  /** The pass being planned or run. */
  private readonly planned = new PassPlan();
  private readonly startPassAction = () => this.startPass();
  private readonly endPassAction = () => this.endPass();
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
  /** The run of identical decode passes under way, if any. */
  private readonly decodeRun: DecodeRun;

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
    const outbox = new RankOutbox(blockIds);
    this.outbox = outbox;
    this.g1 = new DeviceCache(settings.num_gpu_blocks, settings.enable_prefix_caching, (id) => outbox.evicted(id), blockIds);
    this.decodeRun = new DecodeRun(
      {
        rank_index,
        showPass: (time_ns, shape, duration_ns) => {
          if (this.passObserver === null) return false;
          this.passObserver(this, this.observePass(time_ns, shape, duration_ns));
          return true;
        },
        endPass: () => this.endPass(),
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
      storedData: (request: SimRequest, from: number, to: number) => this.storedData(request, from, to),
      copyStarted: (request: SimRequest) => this.copiesInFlight.set(request, (this.copiesInFlight.get(request) ?? 0) + 1),
      copyDone: (request: SimRequest) => this.copyDone(request),
    };
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
    const pending = this.outbox.pendingDeviceChanges();
    if (pending === null) return this.g1.prefixLength(ids);
    let length = 0;
    while (length < ids.length && (pending.get(ids[length]) ?? this.g1.has(ids[length]))) length++;
    return length;
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
    this.decodeRun.cut();
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
    const count = this.planned.count;
    if (count === 0) {
      this.flushOutbox();
      return;
    }
    this.busy = true;
    const shape = this.planned.passShape();
    const duration = passDurationNs(this.settings.pass_time, shape) + plantedPassDelayNs(); // planted fault (src/fuzz/simulatorFaults.ts)
    if (this.preemptedWhileCopying.length > 0) {
      this.fencePass(shape, duration);
      return;
    }
    if (this.passObserver !== null) this.passObserver(this, this.observePass(this.kernel.now, shape, duration));
    const runPasses = this.batchDecodeRuns ? this.decodeRunLength() : 1;
    if (runPasses > 1) this.decodeRun.start(runPasses, shape, duration);
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
   * Nothing from outside changes such passes but a request joining this rank (DecodeRun.cut).
   */
  private decodeRunLength(): number {
    const plan = this.planned;
    const count = plan.count;
    if (count === 0 || count !== this.running.length || this.waiting.length > 0 || !this.outbox.isEmpty || this.loadsDoneMidPass.length > 0) return 1;
    const B = this.settings.block_size;
    let passes = Number.MAX_SAFE_INTEGER;
    for (let i = 0; i < count; i++) {
      if (plan.work[i] !== DECODE) return 1;
      const request = plan.requests[i];
      if (this.host !== null && Math.min(Math.floor(request.computed_tokens / B), request.blockCount) > request.write_through_blocks) return 1;
      const untilFinished = request.output_length - request.output_tokens;
      // Pass p plans input + outputs + p − 1 tokens of KV: within the blocks held while p ≤ room + 1.
      const untilNewBlock = request.heldBlocks * B - (request.input_length + request.output_tokens) + 1;
      passes = Math.min(passes, untilFinished, untilNewBlock);
    }
    return Math.max(passes, 1);
  }

  private observePass(time_ns: Nanos, shape: PassShape, duration_ns: Nanos): PassObservation {
    return {
      time_ns,
      running_requests: this.running.length,
      scheduled_tokens: this.planned.scheduledTokens(),
      g1_occupied_blocks: this.settings.num_gpu_blocks - this.g1.freeBlocks,
      host_used_blocks: this.host === null ? null : this.host.pool.usedBlocks,
      shape: { ...shape },
      duration_ns,
    };
  }

  /**
   * ENG-1: running requests first, then (as vLLM does) requests whose G2 load has finished, then
   * waiting ones in FCFS order under the caps (into the pass plan). As in vLLM, a restore
   * starts only while a running slot is free, but takes none while it loads (max_num_seqs caps the
   * running requests); once loaded it waits for a slot, ahead of the ordinary queue.
   */
  private plan(): void {
    let budget = this.settings.max_num_batched_tokens;
    this.planned.clear();
    const preemptionsAtStart = this.preemptionCount;
    for (let i = 0; i < this.running.length && budget > 0; i++) {
      const request = this.running[i];
      const work = this.continueRunning(request, budget);
      if (work === null) {
        if (this.running[i] !== request) i--;
        continue;
      }
      this.planned.add(request, work);
      budget -= work === DECODE ? 1 : work;
    }
    // As vLLM does, a pass that had to preempt admits nothing new; but when the preemptions left
    // nothing to run, this is vLLM's next (immediate) step, which admits as usual.
    if (this.preemptionCount !== preemptionsAtStart && this.planned.count > 0) return;
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
      this.planned.add(request, work);
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
      this.planned.add(request, work);
      budget -= work === DECODE ? 1 : work;
    }
    return budget;
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
    const plan = this.planned;
    const requests = plan.requests;
    const work = plan.work;
    const count = plan.count;
    for (let i = 0; i < count; i++) {
      if (work[i] === DECODE) this.finishDecodeStep(requests[i]);
      else this.finishPrefillChunk(requests[i], work[i]);
    }
    for (let i = 0; i < count; i++) this.writeThrough(requests[i]);
    for (let i = 0; i < count; i++) if (this.isComplete(requests[i])) this.finish(requests[i]);
    plan.clear();
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
    request.stampToken(this.kernel.now);
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
    this.outbox.add('Device', data);
  }

  /** A Stored of prompt blocks [from, to) of a request, holding their ids (and the parent's) until the router has it. */
  private storedData(request: SimRequest, from: number, to: number): StoredIds {
    const parent = from === 0 ? NO_BLOCK_ID : request.block_ids[from - 1];
    if (!this.holdIdRuns) return new StoredIds(this.blockIds, request.block_ids.slice(from, to), request.tokenWordsView(from, to).slice(), parent, from);
    return new StoredIds(this.blockIds, request.block_ids.subarray(from, to), request.tokenWordsView(from, to), parent, from, request.heldIds);
  }

  /** G2-2..4: the request's complete prompt blocks G2 lacks are stored (see HostWriter). */
  private writeThrough(request: SimRequest): void {
    if (this.writer !== null) this.writer.writeThrough(request);
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
    if (this.outbox.isEmpty) return;
    this.listener.emit(this, this.outbox.flush(this.events));
  }
}
