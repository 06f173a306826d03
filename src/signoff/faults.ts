// The planted-fault check of `npm run qualify` ("scenarios must be able to fail"): a scenario whose
// Then steps still pass when the simulator is broken checked nothing. The scenarios that passed run
// again with one planted simulator fault switched on (src/fuzz/simulatorFaults.ts, SIMULATOR_FAULTS, in
// that order), and only those that passed again run under the next fault; a scenario that passes
// under every fault is a survivor: the sign-off names it under Gaps and it covers no requirement.
// Most scenarios fail under the first faults, so the whole check costs about one more suite run.
// A shard checks its share; the merge adds the shards' checks up (mergeFaultChecks).
//
// Which scenarios are tried: every scenario that passed, except one whose evidence says it checked a
// document of the repository (steps/docs.steps.ts): no simulator fault can reach what it reads, and
// a fault that broke the document would break the repository, not the simulator. It is listed as
// exempt, with that reason, never silently. A scenario that only sets up or rejects a configuration
// is tried like any other: the 'config' and 'host-bandwidth' faults break what it checks.
import { SIMULATOR_FAULTS, SIMULATOR_FAULT_NAMES, type SimulatorFault } from '../fuzz/simulatorFaults';
import { compareText } from '../order';
import type { RunModel, RunScenario } from './messages';

export interface FaultTrial {
  fault: SimulatorFault;
  meaning: string;
  /** Scenarios run under this fault (the survivors of the faults before it). */
  ran: number;
  /** Of those, how many did not pass: the fault was caught. */
  caught: number;
}

export interface FaultCheck {
  trials: FaultTrial[];
  /** Scenarios that passed under every fault: their Then steps cannot tell a broken simulator from a working one. */
  survivors: { key: string; name: string }[];
  /** Scenarios not tried, each with why. */
  exempt: { key: string; name: string; why: string }[];
  /** What kept the check from completing (a faulted run that wrote no stream, a scenario it did not run). */
  problems: string[];
}

/** A check that tried nothing: `problem` says what kept it from being made. */
export function faultCheckNotMade(problem: string): FaultCheck {
  return { trials: [], survivors: [], exempt: [], problems: [problem] };
}

/** Why a scenario that checks a document is not tried under the simulator faults. */
export const DOCUMENT_EXEMPTION = 'it checks a document of the repository, not the simulator: no simulator fault reaches what it reads';

/** One faulted cucumber run of the given scenarios (cucumber's `file:line:line` arguments): its stream read, or why there is none. */
export type FaultedRun = (fault: SimulatorFault, scenarioArgs: string[]) => Promise<{ run: RunModel | null; problem: string | null }>;

/** The scenarios the check tries (every one that passed and is not exempt), and those exempt with why. */
export function faultCandidates(run: RunModel): { tried: RunScenario[]; exempt: FaultCheck['exempt'] } {
  const passed = run.scenarios.filter((s) => s.status === 'PASSED' && s.emptyExamples === undefined);
  const exempt = passed.filter((s) => s.evidence?.simulation === 'document').map((s) => ({ key: s.key, name: s.name, why: DOCUMENT_EXEMPTION }));
  const exemptKeys = new Set(exempt.map((e) => e.key));
  return { tried: passed.filter((s) => !exemptKeys.has(s.key)), exempt };
}

/** Cucumber's arguments that run exactly these scenarios: one `file:line:line…` per feature file, in name order. */
export function scenarioArguments(scenarios: readonly { uri: string; line: number }[]): string[] {
  const lines = new Map<string, number[]>();
  for (const { uri, line } of scenarios) lines.set(uri, [...(lines.get(uri) ?? []), line]);
  return [...lines.keys()].sort(compareText).map((uri) => [uri, ...lines.get(uri)!.sort((a, b) => a - b)].join(':'));
}

/** Runs the scenarios that passed under each fault in turn, each time only those that passed again. */
export async function checkFaults(run: RunModel, runUnder: FaultedRun, faults: readonly SimulatorFault[] = SIMULATOR_FAULT_NAMES): Promise<FaultCheck> {
  const { tried, exempt } = faultCandidates(run);
  let alive = tried;
  const trials: FaultTrial[] = [];
  const problems: string[] = [];
  for (const fault of faults) {
    if (alive.length === 0) break;
    const faulted = await runUnder(fault, scenarioArguments(alive));
    if (faulted.run === null) {
      problems.push(`the run under the planted fault "${fault}" could not be read: ${faulted.problem ?? 'no message stream'}`);
      break;
    }
    const status = new Map(faulted.run.scenarios.map((s) => [s.key, s.status]));
    const unrun = alive.filter((s) => status.get(s.key) === undefined || status.get(s.key) === 'NOT RUN');
    if (unrun.length > 0) problems.push(`under the planted fault "${fault}", ${unrun.length === 1 ? 'a scenario was' : `${unrun.length} scenarios were`} not run: ${unrun.map((s) => `"${s.name}" (${s.key})`).join(', ')}`);
    const survived = alive.filter((s) => status.get(s.key) === 'PASSED' || unrun.includes(s));
    trials.push({ fault, meaning: SIMULATOR_FAULTS[fault], ran: alive.length, caught: alive.length - survived.length });
    alive = survived;
  }
  return { trials, survivors: alive.map((s) => ({ key: s.key, name: s.name })), exempt, problems };
}

/** The check in one line, for the console and the sign-off. */
export function faultSummary(check: FaultCheck): string {
  const tried = check.trials[0]?.ran ?? 0;
  const faults = check.trials.length;
  const survivors = check.survivors.length === 0 ? 'every one failed under at least one' : `${check.survivors.length} passed under every fault (checked nothing)`;
  const exempt = check.exempt.length > 0 ? `; ${check.exempt.length} exempt (a document, not the simulator)` : '';
  const problems = check.problems.length > 0 ? `; could not complete: ${check.problems.join('; ')}` : '';
  return `${tried} passed scenario${tried === 1 ? '' : 's'} run again under ${faults} planted simulator fault${faults === 1 ? '' : 's'} in turn: ${survivors}${exempt}${problems}`;
}

/**
 * The check of a sharded run, from each shard's check of its share: each fault's scenarios run and
 * caught summed (a scenario's fate under a fault does not depend on the others), the survivors,
 * exemptions and problems of all, in the suite's order; a shard that recorded no check is a problem.
 * The same as the unsharded run's check of the whole suite.
 */
export function mergeFaultChecks(shards: readonly { index: number; count: number; faults: FaultCheck | null | undefined }[]): FaultCheck {
  const trials: FaultTrial[] = [];
  for (const fault of SIMULATOR_FAULT_NAMES) {
    const mine = shards.flatMap((s) => s.faults?.trials.filter((t) => t.fault === fault) ?? []);
    if (mine.length > 0) trials.push({ fault, meaning: SIMULATOR_FAULTS[fault], ran: mine.reduce((n, t) => n + t.ran, 0), caught: mine.reduce((n, t) => n + t.caught, 0) });
  }
  const inOrder = <T extends { key: string }>(items: T[]) => items.sort((a, b) => compareKeys(a.key, b.key));
  return {
    trials,
    survivors: inOrder(shards.flatMap((s) => s.faults?.survivors ?? [])),
    exempt: inOrder(shards.flatMap((s) => s.faults?.exempt ?? [])),
    problems: [
      ...shards.filter((s) => !s.faults).map((s) => `shard ${s.index} of ${s.count} recorded no planted-fault check`),
      ...shards.flatMap((s) => s.faults?.problems ?? []),
    ],
  };
}

/** Scenario keys (`uri:line`) in the suite's order: by file, then by line. */
function compareKeys(a: string, b: string): number {
  const split = (key: string) => [key.slice(0, key.lastIndexOf(':')), Number(key.slice(key.lastIndexOf(':') + 1))] as const;
  const [ua, la] = split(a);
  const [ub, lb] = split(b);
  return compareText(ua, ub) || la - lb;
}
