// What one engine rank holds: its G1, its event stream and the events due at the pass end, its
// waiting and running queues, the pass being planned or run, the loads under way, and the G1 blocks
// still read after their request left the running queue. The rank's modules are free functions over
// it (passStart.ts, preemption.ts, admission.ts, rankBlocks.ts, passEnd.ts, blockHolds.ts,
// rankView.ts); RankEngine (rank.ts) is the one kind of it, and gives it what needs the whole rank
// (kick, flushOutbox, emitNow, showPass, tellPreempted, the pass-end action). Outside src/engine/
// the cluster and the fuzzer read its identity, settings, G1, event stream and preemption count
// and set batchDecodeRuns and holdIdRuns; the rest is the rank's own.
import type { Kernel } from '../kernel';
import type { BlockIds } from '../collections/blockIds';
import type { KvEvent, RankRef } from '../events/model';
import { RankEventStream } from '../events/model';
import type { Nanos } from '../time';
import { DeviceCache } from './deviceCache';
import type { SimRequest } from './request';
import type { PassShape } from './passTime';
import type { EngineSettings, HostDomain, HostSubscriber, RequestListener } from './rankInterfaces';
import { RankOutbox } from './rankOutbox';
import { PassPlan } from './passPlan';
import type { DecodeRun } from './decodeRun';
import type { HostWriter } from './hostWriter';

export abstract class RankState implements HostSubscriber {
  readonly g1: DeviceCache;
  readonly events: RankEventStream;
  /** Events due at the end of the pass. */
  readonly outbox: RankOutbox;
  /** The G2 write-through (with a G2 side only). */
  writer: HostWriter | null = null;
  readonly waiting: SimRequest[] = [];
  readonly running: SimRequest[] = [];
  /** A pass is under way (planned and not yet ended). */
  busy = false;
  /** A pass start is queued in the kernel for this instant. */
  startScheduled = false;
  /** Requests whose load landed during the pass under way: they are marked loaded at its end (G2-6). */
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
  preemptionCount = 0;
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
  abstract readonly decodeRun: DecodeRun;
  /** The pass-completion action, scheduled at a pass's end. */
  abstract readonly endPassAction: () => void;

  constructor(
    readonly rank: RankRef,
    readonly rank_index: number,
    readonly role: 'aggregated' | 'prefill' | 'decode',
    readonly settings: EngineSettings,
    readonly kernel: Kernel,
    readonly listener: RequestListener,
    /** The run's block id table, shared with the router's mirror. */
    readonly blockIds: BlockIds,
  ) {
    this.events = new RankEventStream(rank);
    const outbox = new RankOutbox(blockIds);
    this.outbox = outbox;
    this.g1 = new DeviceCache(settings.num_gpu_blocks, settings.enable_prefix_caching, (id) => outbox.evicted(id), blockIds);
  }

  /** The rank's G2 side (null without one). */
  abstract get host(): HostDomain | null;

  get block_bytes(): number {
    return this.settings.block_size * this.settings.kv_cache_bytes_per_token;
  }

  /** Asks for a pass to start at this instant, in the pass-start phase, if none is running. */
  abstract kick(): void;
  /** Emits the pass's events as one batch. */
  abstract flushOutbox(): void;
  /** Emits events on the rank's stream now (its G2 pool's changes). */
  abstract emitNow(events: KvEvent[]): void;
  /** Shows a pass starting at `time_ns` to the pass observer; false when there is none. */
  abstract showPass(time_ns: Nanos, shape: PassShape, duration_ns: Nanos): boolean;
  /** Tells the cluster the request was just preempted (its `preemptions` counts this one). */
  abstract tellPreempted(request: SimRequest): void;
}
