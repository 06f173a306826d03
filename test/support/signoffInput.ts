// A small sign-off input for tests of the renderings: one passing and one failing scenario of a
// lag replay under two requirements (one not covered), every free text made by `text(name)` (the
// tests of hostile names pass a function that adds line breaks or markup), figures as given; and
// unitSignoffInput, the input of any fake run: a clean subject, the run compared with itself, no
// coverage, no figures, each test naming what it changes.
import { compareRuns } from '../../src/signoff/determinism';
import { evidenceFromRouterReplay, measurement, type ScenarioEvidence } from '../../src/report/evidence';
import { parseRegistry } from '../../src/signoff/requirements';
import { parseRun } from '../../src/signoff/messages';
import type { SignoffInput } from '../../src/signoff/model';
import type { RunModel } from '../../src/signoff/messages';
import { FakeScenario, fakeMessages } from './messages';
import { lagReplay } from './replays';

/** The sign-off input of a fake run: a clean subject, the run compared with itself, no coverage, no figures; `overrides` name what a test changes. */
export function unitSignoffInput(run: RunModel, registry: SignoffInput['registry'], overrides: Partial<SignoffInput> = {}): SignoffInput {
  return {
    campaign: 'unit campaign',
    date: '2030-01-01 00:00 UTC',
    subject: { packageName: 'kvqual', packageVersion: '0.1.0', commit: 'abc', worktree: 'clean working tree', node: 'v20.20.2' },
    command: 'npm run qualify',
    run,
    determinism: compareRuns(run, run),
    registry,
    coverage: null,
    coverageNote: 'not requested',
    coverageRun: null,
    perturbation: null,
    figures: new Map(),
    companions: [],
    glossary: [],
    baseline: null,
    ...overrides,
  };
}

/** The evidence both scenarios attach (a figure can be drawn from it). */
export function lagEvidence(text: (name: string) => string = (name) => name): ScenarioEvidence {
  return { ...evidenceFromRouterReplay(lagReplay(), 1893), measurements: [measurement(text('host blocks counted'), 4, 'blocks')] };
}

/** The keys of the two scenarios (uri:line): the first passes, the second fails. */
export const SCENARIO_KEYS = ['features/router/lag.feature:10', 'features/router/lag.feature:20'];

/** The sign-off input of one passing and one failing scenario whose every free text is `text(name)`. */
export function signoffInputOf(text: (name: string) => string = (name) => name, figures = new Map<string, string>()): SignoffInput {
  const registry = parseRegistry(`
requirements:
  - { id: LAG-1, title: ${JSON.stringify(text('Lag is exact'))}, source: ${JSON.stringify(text('semantics.md'))}, owner: ${JSON.stringify(text('QA'))} }
  - { id: LAG-2, title: ${JSON.stringify(text('Nothing covers it'))}, source: s, owner: QA }
`);
  const evidence = lagEvidence(text);
  const scenario = (name: string, line: number, status: 'PASSED' | 'FAILED' = 'PASSED'): FakeScenario => ({
    uri: 'features/router/lag.feature',
    feature: text('Lag'),
    line,
    name: text(name),
    tags: ['@LAG-1', `@${text('other')}`],
    steps: [
      { keyword: 'Given', text: text('a cluster'), status: 'PASSED', table: [[text('a'), 'b']] },
      { keyword: 'Then', text: text('it is placed'), status, ...(status === 'FAILED' ? { message: text('expected 1, got 2') } : {}) },
    ],
    evidence,
  });
  const run = parseRun(fakeMessages([scenario('passes', 10), scenario('fails', 20, 'FAILED')]));
  return unitSignoffInput(run, registry, {
    campaign: text('campaign'),
    coverageNote: text('not requested'),
    figures,
    companions: [{ label: 'JUnit XML', file: 'junit.xml' }],
    glossary: [{ term: text('lag'), meaning: text('the time from emission to visibility') }],
  });
}
