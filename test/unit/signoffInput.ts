// A sign-off's input for the unit tests that build one from a fake run: a clean subject, the run
// compared with itself, no coverage, no figures. Each test names what it changes. Not a test file
// itself (no `.test.ts`), so the runner does not load it.
import { compareRuns } from '../../src/signoff/determinism';
import type { RunModel } from '../../src/signoff/messages';
import type { SignoffInput } from '../../src/signoff/model';

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
