// Steps of generated cases (written by `npm run fuzz` under reports/fuzz/): the case's config and
// agentic trace as doc strings, one run (twice, for determinism), and one `Then` per invariant,
// each failing with the violations src/fuzz/invariants.ts found. KVQUAL_FUZZ_PLANT=1 plants the fuzz
// test double's defect (src/fuzz/planted.ts) here too, so a counterexample it made fails as written.
import { Given, Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import { caseFromYaml } from '../src/fuzz/scenario';
import { runCase, type CaseVerdict } from '../src/fuzz/runCase';
import { INVARIANT_CLAIMS, INVARIANTS, type InvariantName } from '../src/fuzz/invariants';
import { plantedDefectAsked } from '../src/fuzz/planted';

interface GeneratedCase {
  configText: string | null;
  traceText: string | null;
  verdict: CaseVerdict | null;
}

const cases = new WeakMap<KvWorld, GeneratedCase>();

function generatedCase(world: KvWorld): GeneratedCase {
  let state = cases.get(world);
  if (!state) {
    state = { configText: null, traceText: null, verdict: null };
    cases.set(world, state);
  }
  return state;
}

Given('the cluster and workload of this generated case:', { domain: 'fuzzer', level: 'either', says: 'Gives a generated case\'s whole config as a doc string (written by `npm run fuzz`).' }, function (this: KvWorld, config: string) {
  generatedCase(this).configText = config;
});

Given('the agentic trace of this generated case:', { domain: 'fuzzer', level: 'either', says: 'Gives a generated case\'s agentic trace as a doc string.' }, function (this: KvWorld, trace: string) {
  generatedCase(this).traceText = trace;
});

When('the requests arrive', { domain: 'fuzzer', level: 'either', says: 'Runs the generated case (twice, for determinism) and checks every invariant.' }, function (this: KvWorld) {
  const state = generatedCase(this);
  if (state.configText === null) throw new Error('give the case first ("Given the cluster and workload of this generated case:")');
  state.verdict = runCase(caseFromYaml(state.configText, state.traceText), { planted_defect: plantedDefectAsked(process.env) });
  // A scenario checks what it states: a case too heavy to check fails here rather than pass unchecked.
  if (state.verdict.too_heavy) throw new Error(`the case is too heavy to check: ${state.verdict.first.error?.message}`);
  const outcome = state.verdict.first.outcome;
  if (outcome) this.engine.outcomes.push(outcome);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function thenInvariantHolds(invariant: InvariantName): void {
  Then(new RegExp(`^${escapeRegExp(INVARIANT_CLAIMS[invariant])}$`), { domain: 'fuzzer', level: 'either', says: 'Checks the generated case broke this invariant nowhere.', words: INVARIANT_CLAIMS[invariant] }, function (this: KvWorld) {
    const verdict = generatedCase(this).verdict;
    if (verdict === null) throw new Error('the case has not run yet: "When the requests arrive" runs it');
    const broken = verdict.violations.filter((violation) => violation.invariant === invariant);
    this.measure(`violations of "${INVARIANT_CLAIMS[invariant]}"`, broken.length);
    expect(broken.length, `${broken.length} violation(s):\n${broken.map((violation) => `  - ${violation.message}`).join('\n')}\n`).to.equal(0);
  });
}

for (const invariant of INVARIANTS) thenInvariantHolds(invariant);
