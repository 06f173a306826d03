// Runs an agentic workload against a cluster (AGX-1..5): lanes that play source plays one after
// another, play instances with their own play_id, cache_id and token namespace, nodes released
// when their authored floor and every dependency (plus its delay) have passed, and failure that
// skips what a play has not sent yet.
import { Kernel, Phase } from '../kernel';
import type { Nanos } from '../time';
import type { Cluster } from '../sim/cluster';
import type { SimRequest } from '../engine/request';
import { tracePrompt } from '../prompt';
import type { AgenticNode, AgenticTrace, Dependency, SourcePlay } from './trace';

export type LaneAssignment = 'stride' | 'snapshot';

export interface AgenticSettings {
  /** Trajectories that run at once (agentic_lanes). */
  lanes: number;
  /** stride: play i goes to lane i mod lanes; snapshot: every lane replays every play. */
  assignment: LaneAssignment;
  /** How many times each lane goes through its plays; later passes recycle plays with fresh identities. */
  iterations: number;
}

interface NodeState {
  node: AgenticNode;
  waitingFor: number;
  readyAt: Nanos;
  request: SimRequest | null;
  done: boolean;
  skipped: boolean;
}

interface PlayInstance {
  lane: number;
  ordinal: number;
  source: SourcePlay;
  play_id: string;
  cache_id: string;
  start_ns: Nanos;
  nodes: Map<string, NodeState>;
  /** Per predecessor, the nodes that wait for it with the dependency, in node then dependency order. */
  successors: Map<string, { state: NodeState; dependency: Dependency }[]>;
  /** Nodes neither finished nor skipped: the play ends when none is left. */
  open: number;
  record: PlayRecord;
  failed: boolean;
}

export interface PlayRecord {
  play_id: string;
  cache_id: string;
  source_play_id: string;
  lane: number;
  ordinal: number;
  start_ns: Nanos;
  end_ns: Nanos | null;
  failed: boolean;
}

export class AgenticDriver {
  private nextOrdinal: number;
  private readonly queues: SourcePlay[][] = [];
  private readonly byRequest = new Map<SimRequest, { play: PlayInstance; state: NodeState }>();
  readonly plays: PlayRecord[] = [];

  constructor(
    private readonly cluster: Cluster,
    private readonly trace: AgenticTrace,
    private readonly settings: AgenticSettings,
    firstOrdinal = 0,
  ) {
    if (!Number.isInteger(settings.lanes) || settings.lanes <= 0) throw new RangeError(`agentic lanes ${settings.lanes} must be a positive whole number`);
    if (!Number.isInteger(settings.iterations) || settings.iterations <= 0) throw new RangeError(`agentic iterations ${settings.iterations} must be a positive whole number`);
    this.nextOrdinal = firstOrdinal;
    for (let lane = 0; lane < settings.lanes; lane++) {
      const mine = settings.assignment === 'snapshot' ? trace.plays : trace.plays.filter((_, i) => i % settings.lanes === lane);
      const queue: SourcePlay[] = [];
      for (let pass = 0; pass < settings.iterations; pass++) queue.push(...mine);
      this.queues.push(queue);
    }
    cluster.onDispatched = (request) => this.dispatched(request);
    cluster.onFinished = (request) => this.finished(request);
  }

  private get kernel(): Kernel {
    return this.cluster.kernel;
  }

  /** Schedules every lane's first play at time zero. */
  start(): void {
    this.queues.forEach((_, lane) => this.kernel.at(0, Phase.Arrival, -1 - this.settings.lanes + lane, () => this.startNext(lane, 0)));
  }

  private startNext(lane: number, ordinal: number): void {
    const source = this.queues[lane].shift();
    if (!source) return;
    const play_id = `${source.play_id}@lane${lane}.${ordinal}`;
    const cache_id = `${play_id}:cache`;
    const record: PlayRecord = { play_id, cache_id, source_play_id: source.play_id, lane, ordinal, start_ns: this.kernel.now, end_ns: null, failed: false };
    const play: PlayInstance = {
      lane,
      ordinal,
      source,
      play_id,
      cache_id,
      start_ns: this.kernel.now,
      nodes: new Map(),
      successors: new Map(),
      open: source.nodes.length,
      record,
      failed: false,
    };
    this.plays.push(record);
    for (const node of source.nodes) {
      const state: NodeState = { node, waitingFor: node.dependencies.length, readyAt: play.start_ns + node.not_before_ns, request: null, done: false, skipped: false };
      play.nodes.set(node.request_id, state);
      for (const dependency of node.dependencies) {
        const waiting = play.successors.get(dependency.predecessor) ?? [];
        waiting.push({ state, dependency });
        play.successors.set(dependency.predecessor, waiting);
      }
    }
    for (const state of play.nodes.values()) if (state.waitingFor === 0) this.release(play, state);
  }

  /** AGX-1: a node is ready at max(play start + not_before, latest fired dependency + delay). */
  private release(play: PlayInstance, state: NodeState): void {
    const node = state.node;
    state.request = this.cluster.submit({
      identity: {
        request_id: `${play.play_id}/${node.request_id}`,
        ordinal: this.nextOrdinal++,
        session_id: `${play.play_id}/${node.session_id}`,
        play_id: play.play_id,
        cache_id: play.cache_id,
        lane: play.lane,
      },
      arrival_ns: Math.max(state.readyAt, this.kernel.now),
      prompt: tracePrompt(node.hash_ids, node.input_length, this.trace.block_size, play.cache_id),
      output_length: node.output_length,
    });
    this.byRequest.set(state.request, { play, state });
  }

  private fire(play: PlayInstance, predecessor: string, trigger: 'dispatch' | 'completion'): void {
    if (play.failed) return;
    for (const { state, dependency } of play.successors.get(predecessor) ?? []) {
      if (dependency.trigger !== trigger) continue;
      state.readyAt = Math.max(state.readyAt, this.kernel.now + dependency.delay_ns);
      state.waitingFor--;
      if (state.waitingFor === 0) this.release(play, state);
    }
  }

  private dispatched(request: SimRequest): void {
    const owner = this.byRequest.get(request);
    if (owner) this.fire(owner.play, owner.state.node.request_id, 'dispatch');
  }

  private finished(request: SimRequest): void {
    const owner = this.byRequest.get(request);
    if (!owner) return;
    const { play, state } = owner;
    state.done = true;
    play.open--;
    if (request.state === 'failed' && !play.failed) this.failPlay(play, `play ${play.play_id} failed: request ${request.request_id} failed (${request.failure_reason})`);
    else this.fire(play, state.node.request_id, 'completion');
    this.maybeFinishPlay(play);
  }

  /**
   * AGX-2: the rest of the play is skipped: every request that has not arrived yet, including one
   * released for a later arrival (a tool delay or an authored floor). What already arrived still finishes.
   */
  private failPlay(play: PlayInstance, reason: string): void {
    play.failed = true;
    play.record.failed = true;
    for (const state of play.nodes.values()) {
      if (state.request !== null) {
        if (this.cluster.withdraw(state.request, reason)) {
          state.skipped = true;
          play.open--;
        }
        continue;
      }
      state.skipped = true;
      play.open--;
      this.cluster.recordSkipped({
        request_id: `${play.play_id}/${state.node.request_id}`,
        ordinal: this.nextOrdinal++,
        session_id: `${play.play_id}/${state.node.session_id}`,
        play_id: play.play_id,
        cache_id: play.cache_id,
        lane: play.lane,
      }, state.node.input_length, state.node.output_length, reason);
    }
  }

  /** AGX-3: a lane moves on when every request its play sent has finished client-side. */
  private maybeFinishPlay(play: PlayInstance): void {
    if (play.open > 0) return;
    play.record.end_ns = this.kernel.now;
    this.startNext(play.lane, play.ordinal + 1);
  }
}
