// The sign-off's generated-workloads gate as a test file for mutation testing only (`npm run
// mutation`; stryker.config.json lists it last, so a mutant meets it only when every scenario and
// unit test that executes the mutant has passed). The campaign `npm run qualify` checks: the same
// case count, seed and left-out areas. It stops at the first case that breaks an invariant without
// shrinking it: mutation testing asks whether the campaign notices a mutant, not which smallest
// case shows it. npm test does not run this file (test/unit/fuzz.test.ts runs the same campaign).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fuzzCaseArbitrary, KNOWN_DEFECT_AREAS } from '../../src/fuzz/generate';
import { runCase } from '../../src/fuzz/runCase';
import { INVARIANT_CLAIMS, type Violation } from '../../src/fuzz/invariants';
import { DEFAULT_FUZZ_RUNS, DEFAULT_FUZZ_SEED } from '../../src/signoff/driver';

test(`the sign-off's ${DEFAULT_FUZZ_RUNS} generated workloads keep every invariant (seed ${DEFAULT_FUZZ_SEED})`, () => {
  let broken: Violation[] = [];
  const result = fc.check(
    fc.property(fuzzCaseArbitrary({ exclude: KNOWN_DEFECT_AREAS }), (fuzzCase) => {
      broken = runCase(fuzzCase).violations;
      return broken.length === 0;
    }),
    { numRuns: DEFAULT_FUZZ_RUNS, seed: DEFAULT_FUZZ_SEED, endOnFailure: true },
  );
  const why = broken.map((violation) => `${INVARIANT_CLAIMS[violation.invariant]}: ${violation.message}`).join('\n');
  assert.equal(result.failed, false, `case ${result.numRuns} (fast-check path ${result.counterexamplePath}) broke an invariant${why ? `:\n${why}` : `: ${String(result.errorInstance)}`}`);
});
