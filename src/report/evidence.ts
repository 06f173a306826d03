// Scenario evidence: a plain, serialisable record of what one scenario's simulation did — its
// seed, the canonical digest of the run (DET-1), a timeline (arrivals, KV event emissions and the
// instant each batch became visible, placements in plain words, H2D/D2H transfers), residency
// strips per rank (router view vs engine truth) and the numbers its steps measured. Built here
// from a router-level replay; other simulations (an engine cluster) produce the same type.
import type { Nanos } from '../time';
import { formatNs } from '../time';
import type { KvEvent, RankRef, Tier } from '../events/model';
import { TIERS } from '../events/model';
import { explainPlacement } from '../router/explain';
import type { Placement } from '../router/router';
import type { RouterReplay } from '../sim/routerReplay';
import type { ClusterResult } from '../sim/cluster';
import type { RunReport } from './report';
import { digestOf } from './canonical';
import { compareText } from '../order';
import type { SloChart } from './sloChart';

/** Media type of the evidence attachment in cucumber's message stream. */
export const EVIDENCE_MEDIA_TYPE = 'application/vnd.kvqual.evidence+json';
export const EVIDENCE_FORMAT = 'kvqual-evidence/1';
/** File names of the attachments the scenario hooks make beside the evidence (reports skip them). */
export const HOOK_ATTACHMENT_FILES = { decisions: 'decisions.txt', replay: 'replay.txt', figure: 'figure.svg', perturbation: 'perturbation.txt' } as const;

/** A number a step asserted, as measured (recorded before the assertion, so failures show it). */
export interface Measurement {
  label: string;
  value: number;
  unit: string;
  /** The sentence a reviewer reads, e.g. "H2D wait 4 ms = 2 × 2 ms solo". */
  text: string;
  /**
   * False when the step that recorded it made no assertion on this number (steps/support/measured.ts):
   * the sign-off then shows it as recorded, not as measured. Absent in evidence made before it was recorded.
   */
  asserted?: boolean;
}

export interface Arrival {
  request_id: string;
  at_ns: Nanos;
}

/** One batch of KV events a rank emitted, and when (whether) the router saw it. */
export interface Emission extends RankRef {
  at_ns: Nanos;
  tier: Tier;
  /** "Stored 4 blocks", "Removed 2 blocks", "Cleared". */
  events: string[];
  event_ids: number[];
  visible_ns: Nanos | null;
  fate: 'applied' | 'lost' | 'pending';
}

export interface PlacementMark extends RankRef {
  request_id: string;
  at_ns: Nanos;
  /** The decision in plain words, built from the placement's breakdown. */
  sentence: string;
}

export interface Transfer extends RankRef {
  direction: 'H2D' | 'D2H';
  start_ns: Nanos;
  end_ns: Nanos;
  blocks: number;
  request_id: string | null;
}

export interface MembershipMark {
  worker_id: number;
  at_ns: Nanos;
  change: 'left' | 'joined';
}

export interface Timeline {
  arrivals: Arrival[];
  emissions: Emission[];
  placements: PlacementMark[];
  transfers: Transfer[];
  membership: MembershipMark[];
  failure: { at_ns: Nanos; message: string } | null;
}

/** A time span during which one view of a rank held `blocks` blocks of a tier (`to_ns` null: to the end). */
export interface ResidencySpan extends RankRef {
  view: 'engine' | 'router';
  tier: Tier;
  from_ns: Nanos;
  to_ns: Nanos | null;
  blocks: number;
}

export interface ScenarioEvidence {
  format: typeof EVIDENCE_FORMAT;
  /**
   * Which simulation produced it: "router-replay", "cluster", "setup" (a configuration was only
   * validated and set up, or rejected, without running), what a scenario computed without
   * simulating ("blocks", "config": see evidenceFromComputation), or "none" when nothing ran.
   */
  simulation: string;
  seed: number;
  /** Canonical digest of what the simulation did (for "setup": the configuration and its verdict); null when nothing ran. */
  digest: string | null;
  /** A cluster run's pass-time fidelity ("functional", "calibrated: <source>", …); absent for other simulations. */
  pass_times?: string;
  ranks: RankRef[];
  /** The last instant the simulation reached. */
  end_ns: Nanos;
  timeline: Timeline;
  residency: ResidencySpan[];
  measurements: Measurement[];
  /**
   * The other runs this scenario compares its run with ("twice the solo time", "double with 2
   * lanes"), each with a label; its figure shows them all. Absent when it ran once.
   */
  compared?: { label: string; evidence: ScenarioEvidence }[];
  /** What to call this run beside the compared ones ("Run 2 of 2"). */
  run_label?: string;
  /** An SLO scenario's claims (features/slo/): each in one line, and the CDFs its card draws (sloChart.ts). Absent elsewhere. */
  slo?: SloChart[];
}

function numberText(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
}

/** A measurement; its text defaults to "label = value unit". */
export function measurement(label: string, value: number, unit = '', text?: string): Measurement {
  if (!Number.isFinite(value)) throw new RangeError(`measurement "${label}": ${value} is not a finite number`);
  // "problem(s)" reads "1 problem", "2 problems".
  const shown = unit.replace(/\(s\)$/, value === 1 ? '' : 's');
  return { label, value, unit: shown, text: text ?? `${label} = ${numberText(value)}${shown ? ` ${shown}` : ''}` };
}

/** Evidence of a scenario in which no simulation ran (e.g. it stopped at an undefined step). */
export function emptyEvidence(seed: number, measurements: Measurement[] = []): ScenarioEvidence {
  return {
    format: EVIDENCE_FORMAT,
    simulation: 'none',
    seed,
    digest: null,
    ranks: [],
    end_ns: 0,
    timeline: { arrivals: [], emissions: [], placements: [], transfers: [], membership: [], failure: null },
    residency: [],
    measurements: [...measurements],
  };
}

/**
 * Evidence of a scenario whose claim compares runs ("twice the solo time", "double with 2 lanes"):
 * the last run's evidence, with the others beside it for the figure, and one digest over every
 * run in order, so the determinism check covers them all.
 */
export function evidenceComparing(
  main: { label: string; evidence: ScenarioEvidence },
  others: { label: string; evidence: ScenarioEvidence }[],
): ScenarioEvidence {
  if (others.length === 0) return main.evidence;
  const digest = digestOf({ runs: [...others, main].map((run) => ({ label: run.label, digest: run.evidence.digest })) });
  return { ...main.evidence, digest, run_label: main.label, compared: others.map((o) => ({ label: o.label, evidence: { ...o.evidence, measurements: [] } })) };
}

/**
 * Evidence of a scenario that only validated and set up a configuration, or saw it rejected: its
 * digest covers the configuration and the rejection (problems by path), so two runs that built a
 * different configuration or decided differently are told apart.
 */
export function evidenceFromSetup(
  config: unknown,
  rejected: { path: string; message: string }[] | null,
  seed: number,
  measurements: Measurement[] = [],
): ScenarioEvidence {
  return { ...emptyEvidence(seed, measurements), simulation: 'setup', digest: digestOf({ config, rejected }) };
}

/**
 * Evidence of a scenario that computes without simulating (prompts cut into blocks and hashed, a
 * configuration's times read): `kind` names what it computed, and the digest covers the record of
 * what it computed, so two runs that computed anything differently are told apart.
 */
export function evidenceFromComputation(kind: string, record: unknown, seed: number, measurements: Measurement[] = []): ScenarioEvidence {
  return { ...emptyEvidence(seed, measurements), simulation: kind, digest: digestOf(record) };
}

// ── residency strips ────────────────────────────────────────────────────────────────────────

/** One change to a view's residency, applied at an instant; `order` breaks ties within it. */
export type ResidencyOp = RankRef & { view: 'engine' | 'router'; at_ns: Nanos; order: number } & (
    | { op: 'store' | 'remove'; tier: Tier; blocks: string[] }
    | { op: 'clear' }
    | { op: 'drop' }
  );

function rankKey(rank: RankRef): string {
  return `${rank.worker_id}/${rank.dp_rank}`;
}

function compareRanks(a: RankRef, b: RankRef): number {
  return a.worker_id - b.worker_id || a.dp_rank - b.dp_rank;
}

/**
 * Turns residency changes into spans of constant block counts per (rank, view, tier). Changes at
 * one instant are applied together; a count of zero draws nothing. Sets are lenient on purpose:
 * the strips show what each side believed, the strict checks live in the router.
 */
export function residencySpans(ops: ResidencyOp[]): ResidencySpan[] {
  const sorted = [...ops].sort((a, b) => a.at_ns - b.at_ns || a.order - b.order);
  const state = new Map<string, { rank: RankRef; view: 'engine' | 'router'; tiers: Record<Tier, Set<string>> }>();
  const open = new Map<string, ResidencySpan>();
  const spans: ResidencySpan[] = [];
  const stateOf = (op: ResidencyOp) => {
    const key = `${op.view}|${rankKey(op)}`;
    let entry = state.get(key);
    if (!entry) {
      entry = { rank: { worker_id: op.worker_id, dp_rank: op.dp_rank }, view: op.view, tiers: { Device: new Set(), HostPinned: new Set() } };
      state.set(key, entry);
    }
    return entry;
  };
  const settle = (at_ns: Nanos) => {
    for (const [key, entry] of state) {
      for (const tier of TIERS) {
        const spanKey = `${key}|${tier}`;
        const blocks = entry.tiers[tier].size;
        const current = open.get(spanKey);
        if (current && current.blocks === blocks) continue;
        if (current) {
          current.to_ns = at_ns;
          open.delete(spanKey);
        }
        if (blocks > 0) {
          const span: ResidencySpan = { ...entry.rank, view: entry.view, tier, from_ns: at_ns, to_ns: null, blocks };
          spans.push(span);
          open.set(spanKey, span);
        }
      }
    }
  };
  for (let i = 0; i < sorted.length; i++) {
    const op = sorted[i];
    const entry = stateOf(op);
    if (op.op === 'store') for (const block of op.blocks) entry.tiers[op.tier].add(block);
    else if (op.op === 'remove') for (const block of op.blocks) entry.tiers[op.tier].delete(block);
    else for (const tier of TIERS) entry.tiers[tier].clear();
    if (i + 1 === sorted.length || sorted[i + 1].at_ns !== op.at_ns) settle(op.at_ns);
  }
  return spans.sort(
    (a, b) => compareRanks(a, b) || compareText(a.view, b.view) || compareText(a.tier, b.tier) || a.from_ns - b.from_ns,
  );
}

function eventOps(events: KvEvent[]): ({ op: 'store' | 'remove'; tier: Tier; blocks: string[] } | { op: 'clear' })[] {
  return events.map((event) => {
    switch (event.data.type) {
      case 'Stored':
        return { op: 'store' as const, tier: event.tier, blocks: event.data.blocks.map((block) => block.block_hash.toString()) };
      case 'Removed':
        return { op: 'remove' as const, tier: event.tier, blocks: event.data.block_hashes.map(String) };
      case 'Cleared':
        return { op: 'clear' as const };
    }
  });
}

function describeEvents(events: KvEvent[]): string[] {
  return events.map((event) => {
    switch (event.data.type) {
      case 'Stored':
        return `Stored ${event.data.blocks.length} block${event.data.blocks.length === 1 ? '' : 's'}`;
      case 'Removed':
        return `Removed ${event.data.block_hashes.length} block${event.data.block_hashes.length === 1 ? '' : 's'}`;
      case 'Cleared':
        return 'Cleared';
    }
  });
}

// ── plain-words decisions ───────────────────────────────────────────────────────────────────

const TIER_WORDS: Record<Tier, string> = { Device: 'GPU', HostPinned: 'host' };

/**
 * The placement sentence of src/router/explain.ts, plus since when the router could see the
 * blocks it credited on the chosen rank (and when they were emitted): that is the "why" of a lag.
 */
export function decisionSentence(placement: Placement, residency: ResidencySpan[], emissions: Emission[]): string {
  const clauses: string[] = [];
  for (const tier of TIERS) {
    const credited = tier === 'Device' ? placement.device_blocks : placement.host_blocks;
    if (credited === 0) continue;
    const spans = residency.filter(
      (s) => s.view === 'router' && s.tier === tier && s.worker_id === placement.worker_id && s.dp_rank === placement.dp_rank,
    );
    let index = spans.findIndex((s) => s.from_ns <= placement.time_ns && (s.to_ns === null || s.to_ns > placement.time_ns));
    if (index < 0 || spans[index].blocks < credited) continue;
    while (index > 0 && spans[index - 1].to_ns === spans[index].from_ns && spans[index - 1].blocks >= credited) index--;
    const since = spans[index].from_ns;
    const batch = emissions.find(
      (e) => e.visible_ns === since && e.tier === tier && e.worker_id === placement.worker_id && e.dp_rank === placement.dp_rank,
    );
    const emitted = batch && batch.at_ns !== since ? ` (emitted at ${formatNs(batch.at_ns)})` : '';
    clauses.push(`${TIER_WORDS[tier]} blocks visible to the router since ${formatNs(since)}${emitted}`);
  }
  const base = explainPlacement(placement);
  return clauses.length === 0 ? base : `${base} — ${clauses.join('; ')}`;
}

// ── from a router-level replay ──────────────────────────────────────────────────────────────

/** The canonical record of what a router-level replay did; its digest identifies the run. */
export function routerReplayRecord(replay: RouterReplay): unknown {
  return {
    simulation: 'router-replay',
    placements: replay.placements,
    batches: replay.batches,
    delivered: replay.transport.delivered.map((d) => ({ visible_ns: d.visible_ns, batch: d.batch })),
    membership: replay.membership,
    failure: replay.failure ? { detail: replay.failure.detail, message: replay.failure.message } : null,
    end_ns: replay.kernel.now,
  };
}

/**
 * Evidence of a router-level replay (after it ran). Engine truth is what each rank emitted,
 * applied at emission time; the router view is what the router applied, after lag, until the
 * replay stopped. Transfers are empty: there is no engine at this level. A batch still in flight
 * when a replay stopped on a stream error has no known content and changes neither strip.
 */
export function evidenceFromRouterReplay(replay: RouterReplay, seed: number, measurements: Measurement[] = []): ScenarioEvidence {
  const delivered = replay.transport.delivered;
  const contentOf = (trace: RouterReplay['batches'][number]) =>
    delivered.find(
      (d) =>
        d.batch.emitted_ns === trace.emitted_ns &&
        d.batch.worker_id === trace.rank.worker_id &&
        d.batch.dp_rank === trace.rank.dp_rank &&
        d.batch.events[0]?.event_id === trace.event_ids[0],
    )?.batch.events;

  const emissions: Emission[] = replay.batches.map((trace) => ({
    worker_id: trace.rank.worker_id,
    dp_rank: trace.rank.dp_rank,
    at_ns: trace.emitted_ns,
    tier: trace.tier,
    events: describeEvents(contentOf(trace) ?? []),
    event_ids: [...trace.event_ids],
    visible_ns: trace.visible_ns,
    fate: trace.fate,
  }));

  const ops: ResidencyOp[] = [];
  const dropOps = (view: 'engine' | 'router', worker_id: number, at_ns: Nanos, order: number, ranks: RankRef[]) => {
    for (const rank of ranks.filter((r) => r.worker_id === worker_id)) ops.push({ ...rank, view, at_ns, order, op: 'drop' });
  };
  const ranks = collectRanks(replay);
  replay.membership.forEach((change, i) => {
    if (change.change !== 'left') return;
    dropOps('engine', change.worker_id, change.at_ns, i, ranks);
    dropOps('router', change.worker_id, change.at_ns, i, ranks);
  });
  const base = replay.membership.length;
  replay.batches.forEach((trace, i) => {
    const events = contentOf(trace);
    if (!events) return;
    for (const op of eventOps(events)) {
      ops.push({ ...trace.rank, view: 'engine', at_ns: trace.emitted_ns, order: base + i, ...op });
      if (trace.fate === 'applied' && trace.visible_ns !== null) {
        ops.push({ ...trace.rank, view: 'router', at_ns: trace.visible_ns, order: base + i, ...op });
      }
    }
  });
  const residency = residencySpans(ops);

  const placements: PlacementMark[] = replay.placements.map((p) => ({
    worker_id: p.worker_id,
    dp_rank: p.dp_rank,
    request_id: p.request_id,
    at_ns: p.time_ns,
    sentence: decisionSentence(p, residency, emissions),
  }));

  return {
    format: EVIDENCE_FORMAT,
    simulation: 'router-replay',
    seed,
    digest: digestOf(routerReplayRecord(replay)),
    ranks,
    end_ns: replay.kernel.now,
    timeline: {
      arrivals: replay.placements.map((p) => ({ request_id: p.request_id, at_ns: p.time_ns })),
      emissions,
      placements,
      transfers: [],
      membership: replay.membership.map((m) => ({ ...m })),
      failure: replay.failure ? { at_ns: replay.kernel.now, message: replay.failure.message } : null,
    },
    residency,
    measurements: [...measurements],
  };
}

// ── from an engine-level cluster run ───────────────────────────────────────────────────────

/**
 * Evidence of an engine-level cluster run: engine truth is what each rank emitted (at emission
 * time), the router view what the router applied (after lag); transfers are the real G1↔G2 copies;
 * the digest is the canonical report's. Decode workers' events never reach the router (EVT-4) and
 * are not drawn.
 */
export function evidenceFromCluster(outcome: { result: ClusterResult; report: RunReport }, seed: number, measurements: Measurement[] = []): ScenarioEvidence {
  const { result, report } = outcome;
  const emissions: Emission[] = result.batches.map(({ batch, visible_ns }) => ({
    worker_id: batch.worker_id,
    dp_rank: batch.dp_rank,
    at_ns: batch.emitted_ns,
    tier: batch.events[0]?.tier ?? 'Device',
    events: describeEvents(batch.events),
    event_ids: batch.events.map((event) => event.event_id),
    visible_ns,
    fate: 'applied',
  }));
  const ops: ResidencyOp[] = [];
  result.batches.forEach(({ batch, visible_ns }, i) => {
    for (const op of eventOps(batch.events)) {
      ops.push({ worker_id: batch.worker_id, dp_rank: batch.dp_rank, view: 'engine', at_ns: batch.emitted_ns, order: i, ...op });
      ops.push({ worker_id: batch.worker_id, dp_rank: batch.dp_rank, view: 'router', at_ns: visible_ns, order: i, ...op });
    }
  });
  const residency = residencySpans(ops);
  const placements: PlacementMark[] = result.requests.flatMap((request) =>
    request.routing_history.map((p) => ({ worker_id: p.worker_id, dp_rank: p.dp_rank, request_id: p.request_id, at_ns: p.time_ns, sentence: decisionSentence(p, residency, emissions) })),
  );
  const transfers: Transfer[] = result.transfers
    .filter((t) => t.direction !== 'p2d' && t.finished_ns !== null)
    .map((t) => ({
      worker_id: t.worker_id,
      dp_rank: t.dp_rank,
      direction: t.direction === 'd2h' ? ('D2H' as const) : ('H2D' as const),
      start_ns: t.started_ns,
      end_ns: t.finished_ns!,
      blocks: t.blocks,
      request_id: t.request_id,
    }));
  return {
    format: EVIDENCE_FORMAT,
    simulation: 'cluster',
    seed,
    digest: report.digest,
    pass_times: report.summary.fidelity,
    ranks: result.ranks.map((rank) => ({ ...rank.rank })).sort(compareRanks),
    end_ns: result.end_ns,
    timeline: {
      arrivals: result.requests.filter((r) => r.state !== 'skipped').map((r) => ({ request_id: r.request_id, at_ns: r.arrival_ns })),
      emissions,
      placements,
      transfers,
      membership: [],
      failure: result.failure ? { at_ns: result.end_ns, message: result.failure.message } : null,
    },
    residency,
    measurements: [...measurements],
  };
}

/** Every rank the replay knew at some point, in (worker, dp rank) order. */
function collectRanks(replay: RouterReplay): RankRef[] {
  const seen = new Map<string, RankRef>();
  const add = (rank: RankRef) => seen.set(rankKey(rank), { worker_id: rank.worker_id, dp_rank: rank.dp_rank });
  replay.router.ranks.forEach(add);
  replay.batches.forEach((trace) => add(trace.rank));
  replay.placements.forEach((p) => p.candidates.forEach(add));
  for (const change of replay.membership) {
    if (![...seen.values()].some((rank) => rank.worker_id === change.worker_id)) add({ worker_id: change.worker_id, dp_rank: 0 });
  }
  return [...seen.values()].sort(compareRanks);
}

/** Parses an evidence attachment; throws with a clear message when it is not kvqual evidence. */
export function parseEvidence(text: string): ScenarioEvidence {
  const value = JSON.parse(text) as ScenarioEvidence;
  if (value === null || typeof value !== 'object' || value.format !== EVIDENCE_FORMAT) {
    throw new Error(`not a ${EVIDENCE_FORMAT} attachment`);
  }
  return value;
}
