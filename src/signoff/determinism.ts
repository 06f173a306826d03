// The determinism proof (DET-1): the suite runs twice and each scenario's canonical digest (from
// its evidence) and result are compared. Any difference — a digest, a status, a seed, a
// scenario present in only one run, evidence missing — is named per scenario.
import { canonicalJson } from '../report/canonical';
import type { ScenarioEvidence } from '../report/evidence';
import type { RunModel, ScenarioStatus } from './messages';

export interface DeterminismRow {
  key: string;
  name: string;
  first: string | null;
  second: string | null;
  same: boolean;
  /** Why it differs, in words; empty when the same. */
  reason: string;
}

export interface Determinism {
  /** False when the second run could not be read at all. */
  rerun: boolean;
  rows: DeterminismRow[];
  differences: DeterminismRow[];
  identical: boolean;
  problem: string | null;
  /** Scenarios the perturbation test double changed on purpose in the second run, and whether this comparison caught each. */
  perturbed: { key: string; name: string; note: string; caught: boolean }[];
}

/** The reason of a scenario neither run ran (e.g. a merge whose shard of it is missing): nothing to compare, not a difference. */
export const NOT_RUN_IN_EITHER = 'not run in either run';

function digestText(digest: string | null, status: ScenarioStatus): string {
  return digest ?? `(no simulation; ${status.toLowerCase()})`;
}

/** Compares two runs scenario by scenario (matched by `uri:line`). */
export function compareRuns(first: RunModel, second: RunModel | null, secondProblem: string | null = null): Determinism {
  if (second === null) {
    const problem = secondProblem ?? 'the second run produced no message stream';
    return { rerun: false, rows: [], differences: [], identical: false, problem, perturbed: [] };
  }
  // An empty Examples table's stand-in (messages.ts) ran in neither run: the Scenarios gate names it.
  const others = new Map(second.scenarios.filter((s) => s.emptyExamples === undefined).map((s) => [s.key, s]));
  const rows: DeterminismRow[] = [];
  for (const a of first.scenarios) {
    if (a.emptyExamples !== undefined) continue;
    const b = others.get(a.key);
    others.delete(a.key);
    const reasons: string[] = [];
    if (!b) reasons.push('not run the second time');
    else if (a.status === 'NOT RUN' && b.status === 'NOT RUN') reasons.push(NOT_RUN_IN_EITHER);
    else {
      if (a.evidence === null) reasons.push(`no evidence in the first run (${a.evidenceError ?? a.status.toLowerCase()})`);
      if (b.evidence === null) reasons.push(`no evidence in the second run (${b.evidenceError ?? b.status.toLowerCase()})`);
      if (a.evidence && b.evidence) {
        if (a.evidence.digest !== b.evidence.digest) reasons.push(`the simulation did something different (digests differ: ${evidenceDifference(a.evidence, b.evidence)})`);
        if (a.evidence.seed !== b.evidence.seed) reasons.push(`seed ${a.evidence.seed} vs ${b.evidence.seed}`);
        const measured = measurementDifference(a.evidence, b.evidence);
        if (measured !== null) reasons.push(`a measured value differs (${measured})`);
      }
      if (a.status !== b.status) reasons.push(`${a.status.toLowerCase()} the first time, ${b.status.toLowerCase()} the second`);
    }
    rows.push({
      key: a.key,
      name: a.name,
      first: digestText(a.evidence?.digest ?? null, a.status),
      second: b ? digestText(b.evidence?.digest ?? null, b.status) : null,
      same: reasons.length === 0,
      reason: reasons.join('; '),
    });
  }
  for (const b of others.values()) {
    rows.push({ key: b.key, name: b.name, first: null, second: digestText(b.evidence?.digest ?? null, b.status), same: false, reason: 'only in the second run' });
  }
  const differences = rows.filter((row) => !row.same);
  const problem = rows.length === 0 ? 'no scenario to compare' : null;
  const differing = new Set(differences.map((row) => row.key));
  const perturbed = second.scenarios
    .filter((s) => s.perturbation !== null)
    .map((s) => ({ key: s.key, name: s.name, note: s.perturbation!, caught: differing.has(s.key) }));
  return { rerun: true, rows, differences, identical: differences.length === 0 && problem === null, problem, perturbed };
}

/** The first measured value that differs between two runs ("label: 237 ms vs 488 ms"; a value only one run measured: "none"), or null when all agree. */
function measurementDifference(a: ScenarioEvidence, b: ScenarioEvidence): string | null {
  const count = Math.max(a.measurements.length, b.measurements.length);
  for (let i = 0; i < count; i++) {
    const x = a.measurements[i];
    const y = b.measurements[i];
    if (x !== undefined && y !== undefined && canonicalJson(x) === canonicalJson(y)) continue;
    return `${(x ?? y)!.label}: ${x ? x.text : 'none'} vs ${y ? y.text : 'none'}`;
  }
  return null;
}

/** Where two pieces of evidence differ, in words a reviewer can follow up ("KV batches: 1 vs 2"). */
export function evidenceDifference(a: ScenarioEvidence, b: ScenarioEvidence): string {
  const parts: string[] = [];
  const same = (x: unknown, y: unknown) => canonicalJson(x) === canonicalJson(y);
  if (a.simulation !== b.simulation) parts.push(`simulation ${a.simulation} vs ${b.simulation}`);
  if (!same(a.ranks, b.ranks)) parts.push(`ranks: ${a.ranks.length} vs ${b.ranks.length}`);
  const ta = a.timeline;
  const tb = b.timeline;
  if (!same(ta.emissions, tb.emissions)) parts.push(`KV batches: ${ta.emissions.length} vs ${tb.emissions.length}`);
  const where = (e: ScenarioEvidence) => e.timeline.placements.map((p) => `${p.request_id} on worker ${p.worker_id}`).join(', ') || 'none';
  if (where(a) !== where(b)) parts.push(`placements: ${where(a)} vs ${where(b)}`);
  else if (!same(ta.placements, tb.placements)) parts.push('same placements, different breakdowns');
  if (!same(ta.transfers, tb.transfers)) parts.push(`transfers: ${ta.transfers.length} vs ${tb.transfers.length}`);
  if (!same(ta.membership, tb.membership)) parts.push('membership changes differ');
  if (!same(ta.failure, tb.failure)) parts.push(`failure: ${ta.failure?.message ?? 'none'} vs ${tb.failure?.message ?? 'none'}`);
  if (!same(a.residency, b.residency)) parts.push('residency differs');
  return parts.length ? parts.join('; ') : 'the timelines agree; the canonical records differ in detail';
}
