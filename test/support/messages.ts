// Synthetic cucumber message streams for unit tests of the report library: Gherkin documents,
// pickles, test cases, step results, evidence attachments and the run's end, shaped like
// cucumber-js 12 writes them, for statuses a real suite rarely produces (pending, ambiguous).
import { EVIDENCE_MEDIA_TYPE, ScenarioEvidence } from '../../src/report/evidence';
import type { StepStatus } from '../../src/signoff/messages';

export interface FakeStep {
  keyword: string;
  text: string;
  status: StepStatus;
  message?: string;
  table?: string[][];
  /** Its pickle step's type; by default as Gherkin types the keyword (And and But take the one before); null leaves it out. */
  type?: string | null;
}

const KEYWORD_TYPES: Record<string, string> = { Given: 'Context', When: 'Action', Then: 'Outcome', '*': 'Unknown' };

/** The pickle step types Gherkin gives steps with these keywords. */
function stepTypes(steps: readonly FakeStep[]): (string | null)[] {
  let previous = 'Unknown';
  return steps.map((step) => {
    if (step.type !== undefined) return step.type;
    previous = KEYWORD_TYPES[step.keyword] ?? (step.keyword === 'And' || step.keyword === 'But' ? previous : 'Unknown');
    return previous;
  });
}

export interface FakeScenario {
  uri: string;
  line: number;
  name: string;
  tags?: string[];
  feature?: string;
  steps: FakeStep[];
  evidence?: ScenarioEvidence | null;
  /** Cucumber compiled it but never ran it. */
  notRun?: boolean;
  /** A failing After hook. */
  hookFails?: string;
}

/** The NDJSON text of a run of these scenarios. */
export function fakeMessages(scenarios: FakeScenario[], options: { finished?: boolean } = {}): string {
  let next = 0;
  const id = (kind: string) => `${kind}-${++next}`;
  const out: unknown[] = [{ meta: { protocolVersion: '32.2.0', implementation: { name: 'cucumber-js', version: '12.9.0' } } }];
  const uris = [...new Set(scenarios.map((s) => s.uri))];
  const ast = new Map<FakeScenario, { scenarioId: string; stepIds: string[] }>();
  for (const uri of uris) {
    const mine = scenarios.filter((s) => s.uri === uri);
    out.push({ source: { uri, data: mine.map((s) => `Scenario: ${s.name}`).join('\n'), mediaType: 'text/x.cucumber.gherkin+plain' } });
    const children = mine.map((s) => {
      const scenarioId = id('ast');
      const stepIds = s.steps.map(() => id('ast'));
      ast.set(s, { scenarioId, stepIds });
      return {
        scenario: {
          id: scenarioId,
          name: s.name,
          tags: [],
          examples: [],
          steps: s.steps.map((step, i) => ({ id: stepIds[i], keyword: `${step.keyword} `, text: step.text })),
        },
      };
    });
    out.push({ gherkinDocument: { uri, feature: { name: mine[0].feature ?? `Feature of ${uri}`, description: '  Why it matters.', children } } });
  }
  const runs: { scenario: FakeScenario; pickleId: string; stepIds: string[] }[] = [];
  for (const s of scenarios) {
    const pickleId = id('pickle');
    const stepIds = s.steps.map(() => id('pstep'));
    const { scenarioId, stepIds: astSteps } = ast.get(s)!;
    const types = stepTypes(s.steps);
    out.push({
      pickle: {
        id: pickleId,
        uri: s.uri,
        location: { line: s.line, column: 3 },
        name: s.name,
        language: 'en',
        astNodeIds: [scenarioId],
        tags: (s.tags ?? []).map((name) => ({ name, astNodeId: id('tag') })),
        steps: s.steps.map((step, i) => ({
          id: stepIds[i],
          text: step.text,
          ...(types[i] === null ? {} : { type: types[i] }),
          astNodeIds: [astSteps[i]],
          ...(step.table ? { argument: { dataTable: { rows: step.table.map((row) => ({ cells: row.map((value) => ({ value })) })) } } } : {}),
        })),
      },
    });
    runs.push({ scenario: s, pickleId, stepIds });
  }
  out.push({ testRunStarted: { id: 'run-1', timestamp: { seconds: 0, nanos: 0 } } });
  for (const { scenario, pickleId, stepIds } of runs) {
    if (scenario.notRun) continue;
    const caseId = id('case');
    const testSteps = stepIds.map((pickleStepId) => ({ id: id('tstep'), pickleStepId }));
    const hook = { id: id('tstep'), hookId: 'hook-1' };
    out.push({ testCase: { id: caseId, pickleId, testSteps: [...testSteps, hook] } });
    const startedId = id('started');
    out.push({ testCaseStarted: { id: startedId, testCaseId: caseId, attempt: 0, timestamp: { seconds: 1, nanos: 0 } } });
    scenario.steps.forEach((step, i) => {
      out.push({
        testStepFinished: {
          testCaseStartedId: startedId,
          testStepId: testSteps[i].id,
          testStepResult: { status: step.status, duration: { seconds: 0, nanos: 1 }, ...(step.message ? { message: step.message } : {}) },
        },
      });
    });
    if (scenario.evidence) {
      out.push({
        attachment: { testCaseStartedId: startedId, testStepId: hook.id, body: JSON.stringify(scenario.evidence), contentEncoding: 'IDENTITY', mediaType: EVIDENCE_MEDIA_TYPE },
      });
    }
    out.push({
      testStepFinished: {
        testCaseStartedId: startedId,
        testStepId: hook.id,
        testStepResult: scenario.hookFails
          ? { status: 'FAILED', message: scenario.hookFails, duration: { seconds: 0, nanos: 1 } }
          : { status: 'PASSED', duration: { seconds: 0, nanos: 1 } },
      },
    });
    out.push({ testCaseFinished: { testCaseStartedId: startedId, willBeRetried: false, timestamp: { seconds: 2, nanos: 0 } } });
  }
  if (options.finished !== false) out.push({ testRunFinished: { success: true, timestamp: { seconds: 3, nanos: 0 } } });
  return `${out.map((m) => JSON.stringify(m)).join('\n')}\n`;
}
