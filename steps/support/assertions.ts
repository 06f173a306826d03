// Every `Then` checks something, and checks it for real: chai's assertions are counted per step
// (one hook on Assertion.prototype.assert, through which every expect(…) assertion goes). A `Then`
// (or an `And` after it) that passed without making an assertion fails (one that passed although
// an assertion it made failed is failed by stepWatch.ts, for chai's and node:assert's alike); so does a scenario with no Then
// at all (only Givens and Whens, or `*` steps, which are no Then), or with any other step after its
// last Then (what that step did is checked by nothing), before any of its steps runs. The sign-off's
// scenarios gate then says so, as for any failed step.
import * as chai from 'chai';
import { AfterStep, Before, BeforeStep, Status } from '@cucumber/cucumber';
import { assertedOn, stepBegins } from './measured';

/** Assertions made since the current step began. */
const counted = { made: 0 };

chai.use((lib) => {
  const proto = lib.Assertion.prototype as { assert: (...args: unknown[]) => unknown };
  const assert = proto.assert;
  proto.assert = function counting(this: unknown, ...args: unknown[]): unknown {
    counted.made++;
    assertedOn(lib.util.flag(this as object, 'object'));
    return assert.apply(this, args);
  };
});

BeforeStep(function () {
  counted.made = 0;
  stepBegins();
});

/** Why a step that passed did not really check: null when it did (or when it is not an outcome step). */
export function uncheckedOutcome(stepType: string | undefined, status: string | undefined, made: number): string | null {
  if (status !== Status.PASSED) return null;
  if (stepType === 'Outcome' && made === 0) return 'this Then step passed without checking anything: it made no assertion';
  return null;
}

/**
 * Why a scenario leaves what it did unchecked by its shape (its steps' types as Gherkin gives them:
 * Context, Action, Outcome, Unknown for `*`), or null: it has no Then (or an And or But after one),
 * or a step that is not a Then (a When, a Given, a `*` step) comes after its last Then.
 */
export function uncheckedScenario(stepTypes: readonly (string | undefined)[]): string | null {
  const lastThen = stepTypes.lastIndexOf('Outcome');
  if (lastThen < 0) return 'this scenario has no Then step, so it checks nothing: a claim needs a Then that asserts it (a `*` step is not a Then)';
  if (lastThen < stepTypes.length - 1) return 'this scenario has a step after its last Then that is not a Then (a When, a Given or a `*` step): nothing checks what it did (end the scenario with the Then that proves it)';
  return null;
}

Before(function ({ pickle }) {
  const problem = uncheckedScenario(pickle.steps.map((step) => step.type));
  if (problem !== null) throw new Error(problem);
});

AfterStep(function ({ pickleStep, result }) {
  const problem = uncheckedOutcome(pickleStep.type, result?.status, counted.made);
  if (problem !== null) throw new Error(problem);
});
