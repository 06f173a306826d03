// A router-level replay: KV events injected at given instants from given ranks, carried by the
// lagged transport (optionally through a faulty link), and arrivals placed by the router, all
// on the deterministic kernel. No engine: this is what the router-level claims qualify.
import { Kernel, Phase } from '../kernel';
import { RandomStreams } from '../random';
import type { Nanos } from '../time';
import { EventTransport } from '../events/transport';
import type { KvEvent, KvEventBatch, RankRef, Tier } from '../events/model';
import { RankEventStream } from '../events/model';
import { EventStreamError } from '../router/mirror';
import { Placement, RouteRequest, Router, RouterSettings } from '../router/router';
import { faultPlanted, plantedDriftNs } from '../fuzz/simulatorFaults';

export interface RouterReplayOptions {
  seed: number;
  lag_ns: Nanos;
  router: RouterSettings;
}

/** A batch as the replay saw it: emitted, then visible to the router (or lost). */
export interface BatchTrace {
  rank: RankRef;
  emitted_ns: Nanos;
  visible_ns: Nanos | null;
  event_ids: number[];
  tier: Tier;
  fate: 'applied' | 'lost' | 'pending';
}

/** A worker leaving or rejoining the cluster at an instant (MIR-3), for reports. */
export interface MembershipChange {
  at_ns: Nanos;
  worker_id: number;
  change: 'left' | 'joined';
}

type LinkFault = { kind: 'lose'; rank: RankRef; emitted_ns: Nanos } | { kind: 'swap'; rank: RankRef; first_ns: Nanos; second_ns: Nanos } | { kind: 'duplicate'; rank: RankRef; emitted_ns: Nanos };

export class RouterReplay {
  readonly kernel = new Kernel();
  readonly random: RandomStreams;
  readonly router: Router;
  readonly transport: EventTransport;
  readonly placements: Placement[] = [];
  readonly batches: BatchTrace[] = [];
  readonly membership: MembershipChange[] = [];
  failure: EventStreamError | null = null;
  private readonly streams = new Map<string, RankEventStream>();
  private readonly faults: LinkFault[] = [];
  private readonly held = new Map<string, KvEventBatch>();
  private ordinal = 0;

  /** 0, or how much later the planted 'drift' fault starts this replay's requests (src/fuzz/simulatorFaults.ts). */
  private readonly drift_ns = plantedDriftNs();

  constructor(options: RouterReplayOptions) {
    this.random = new RandomStreams(options.seed);
    this.router = new Router({ kept_scores: 'all', ...options.router }, this.random.stream('router.tie_break'));
    this.transport = new EventTransport(this.kernel, options.lag_ns, (batch) => this.receive(batch));
  }

  addWorker(worker_id: number, dp_size = 1): void {
    this.router.addWorker(worker_id, dp_size);
    for (let dp_rank = 0; dp_rank < dp_size; dp_rank++) {
      this.streams.set(rankKey({ worker_id, dp_rank }), new RankEventStream({ worker_id, dp_rank }));
    }
  }

  /** Emits events built from the rank's own numbering at an instant (Device in the pass phase, HostPinned as a transfer). */
  emitAt(at: Nanos, rank: RankRef, tier: Tier, build: (stream: RankEventStream) => KvEvent[]): void {
    const phase = tier === 'HostPinned' ? Phase.TransferCompletion : Phase.PassCompletion;
    this.kernel.at(at, phase, rank.worker_id * 1024 + rank.dp_rank, () => {
      const stream = this.streamOf(rank);
      const events = build(stream);
      const batch: KvEventBatch = { ...rank, emitted_ns: this.kernel.now, events };
      this.batches.push({ rank, emitted_ns: at, visible_ns: null, event_ids: events.map((e) => e.event_id), tier, fate: 'pending' });
      this.transport.emit(batch);
    });
  }

  /** Removes a worker at an instant: its ranks leave the router (MIR-3); a new stream starts if it returns. */
  removeWorkerAt(at: Nanos, worker_id: number): void {
    this.kernel.at(at, Phase.EventVisibility, -1, () => {
      this.router.removeWorker(worker_id);
      this.membership.push({ at_ns: this.kernel.now, worker_id, change: 'left' });
      for (const key of [...this.streams.keys()]) if (key.startsWith(`${worker_id}/`)) this.streams.delete(key);
    });
  }

  /** Re-registers a worker at an instant with fresh event streams. */
  addWorkerAt(at: Nanos, worker_id: number, dp_size = 1): void {
    this.kernel.at(at, Phase.EventVisibility, -1, () => {
      this.addWorker(worker_id, dp_size);
      this.membership.push({ at_ns: this.kernel.now, worker_id, change: 'joined' });
    });
  }

  /** Puts a request on a rank at time zero without routing: that rank is already busy. */
  busy(rank: RankRef, request: Omit<RouteRequest, 'ordinal'>): void {
    this.router.assign({ ...request, ordinal: this.ordinal++ }, rank);
  }

  /** Schedules an arrival; the router places it in the arrival phase of that instant. */
  arriveAt(at: Nanos, request: Omit<RouteRequest, 'ordinal'>): void {
    const ordinal = this.ordinal++;
    this.kernel.at(at + (faultPlanted('time') ? 1_000_000 : 0) + this.drift_ns, Phase.Arrival, ordinal, () => { // planted fault (src/fuzz/simulatorFaults.ts)
      this.placements.push(this.router.place({ ...request, ordinal }, this.kernel.now));
    });
  }

  loseBatch(rank: RankRef, emitted_ns: Nanos): void {
    this.faults.push({ kind: 'lose', rank, emitted_ns });
  }
  swapBatches(rank: RankRef, first_ns: Nanos, second_ns: Nanos): void {
    this.faults.push({ kind: 'swap', rank, first_ns, second_ns });
  }
  duplicateBatch(rank: RankRef, emitted_ns: Nanos): void {
    this.faults.push({ kind: 'duplicate', rank, emitted_ns });
  }

  /** Runs to completion. An impossible event stream stops the replay and is kept as `failure`. */
  run(): void {
    try {
      this.kernel.run();
    } catch (error) {
      if (!(error instanceof EventStreamError)) throw error;
      if (!faultPlanted('mirror-off')) this.failure = error; // planted fault (src/fuzz/simulatorFaults.ts)
    }
  }

  placementOf(request_id: string): Placement | undefined {
    return this.placements.find((placement) => placement.request_id === request_id);
  }

  private streamOf(rank: RankRef): RankEventStream {
    const stream = this.streams.get(rankKey(rank));
    if (!stream) throw new Error(`worker ${rank.worker_id} dp rank ${rank.dp_rank} is not part of this cluster`);
    return stream;
  }

  /** The link between transport and router, where injected faults act. */
  private receive(batch: KvEventBatch): void {
    const trace = this.batches.find((b) => b.emitted_ns === batch.emitted_ns && sameRank(b.rank, batch) && b.fate === 'pending');
    if (trace) trace.visible_ns = this.kernel.now;
    for (const fault of this.faults) {
      if (!sameRank(fault.rank, batch)) continue;
      if (fault.kind === 'lose' && fault.emitted_ns === batch.emitted_ns) {
        if (trace) trace.fate = 'lost';
        return;
      }
      if (fault.kind === 'swap' && fault.first_ns === batch.emitted_ns) {
        this.held.set(rankKey(batch), batch);
        return;
      }
      if (fault.kind === 'swap' && fault.second_ns === batch.emitted_ns) {
        this.apply(batch, trace);
        const first = this.held.get(rankKey(batch));
        this.held.delete(rankKey(batch));
        if (first) this.apply(first, this.batches.find((b) => b.emitted_ns === first.emitted_ns && sameRank(b.rank, first)));
        return;
      }
      if (fault.kind === 'duplicate' && fault.emitted_ns === batch.emitted_ns) {
        this.apply(batch, trace);
        this.apply(batch, trace);
        return;
      }
    }
    this.apply(batch, trace);
  }

  private apply(batch: KvEventBatch, trace: BatchTrace | undefined): void {
    this.router.applyBatch(batch);
    if (trace) trace.fate = 'applied';
  }
}

function rankKey(rank: RankRef): string {
  return `${rank.worker_id}/${rank.dp_rank}`;
}

function sameRank(a: RankRef, b: RankRef): boolean {
  return a.worker_id === b.worker_id && a.dp_rank === b.dp_rank;
}
