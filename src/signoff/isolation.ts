// The order-independence proof of `npm run qualify -- --isolation`: every scenario that passed in
// run 1 is replayed alone, in a cucumber process of its own (its one-line replay command), and must
// pass again with the same digest. A scenario that passes only because something ran before it in
// the same process (a module's state left over, a cache another filled) fails alone, or does
// something different, and is named. Run 2's shuffled order cannot prove this: whatever its order,
// something runs before every scenario but the first. Measured on the suite, a process per scenario
// costs about fifty suite runs of CPU (1.6 s a scenario: a Node start and a load of the steps), so the proof is
// its own phase, asked for with --isolation; a sign-off without it says order independence was not
// proven. Two processes run at once.
import type { RunModel, RunScenario, ScenarioStatus } from './messages';

export interface IsolationCheck {
  /** Scenarios replayed alone. */
  ran: number;
  /** Those that did not pass alone, or did something different alone, each with why. */
  dependent: { key: string; name: string; why: string }[];
  /** What kept the proof from completing (a replay that wrote no stream). */
  problems: string[];
}

/** One replay of one scenario alone: its stream read, or why there is none. */
export type AloneRun = (scenario: { uri: string; line: number }) => Promise<{ run: RunModel | null; problem: string | null }>;

/** How many replays run at once (the machine's two cores). */
export const ISOLATION_PARALLEL = 2;

/** Why a scenario replayed alone differs from the same scenario in run 1, or null when it passed again with the same digest. */
export function aloneDifference(inRun: RunScenario, alone: RunScenario | undefined): string | null {
  if (alone === undefined) return 'it was not run when replayed alone';
  if (alone.status !== 'PASSED') return `it passed in the suite but is ${word(alone.status)} when replayed alone: it depends on what ran before it in the same process`;
  const before = inRun.evidence?.digest ?? null;
  const after = alone.evidence?.digest ?? null;
  if (before !== after) return `it did something different when replayed alone (digest ${after ?? 'none'}, in the suite ${before ?? 'none'}): what ran before it changed what it simulated`;
  return null;
}

function word(status: ScenarioStatus): string {
  return status === 'NOT RUN' ? 'not run' : status.toLowerCase();
}

/** Replays every scenario that passed in run 1 alone, ISOLATION_PARALLEL at a time, and names each that differs. */
export async function checkIsolation(run: RunModel, runAlone: AloneRun, parallel = ISOLATION_PARALLEL): Promise<IsolationCheck> {
  const passed = run.scenarios.filter((s) => s.status === 'PASSED' && s.emptyExamples === undefined);
  const results: ({ key: string; name: string; why: string } | string | null)[] = new Array(passed.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < passed.length) {
      const i = next++;
      const scenario = passed[i];
      const alone = await runAlone(scenario);
      if (alone.run === null) {
        results[i] = `"${scenario.name}" (${scenario.key}) replayed alone: ${alone.problem ?? 'no message stream'}`;
        continue;
      }
      const why = aloneDifference(scenario, alone.run.scenarios.find((s) => s.key === scenario.key));
      results[i] = why === null ? null : { key: scenario.key, name: scenario.name, why };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker));
  return {
    ran: passed.length,
    dependent: results.filter((r): r is { key: string; name: string; why: string } => r !== null && typeof r !== 'string'),
    problems: results.filter((r): r is string => typeof r === 'string'),
  };
}

/** The check in one line, for the console and the sign-off. */
export function isolationSummary(check: IsolationCheck): string {
  const outcome = check.dependent.length === 0 ? 'each passed alone as in the suite' : `${check.dependent.length} did not: ${check.dependent.map((d) => `"${d.name}"`).join(', ')}`;
  const problems = check.problems.length > 0 ? `; could not complete: ${check.problems.join('; ')}` : '';
  return `${check.ran} passed scenario${check.ran === 1 ? '' : 's'} replayed alone, each in a process of its own: ${outcome}${problems}`;
}
