// The level of a scenario with an undefined step, for its "did you mean" (steps/support/didYouMean.js):
// cucumber builds that message from the step's text alone, after the scenario ran, so when a scenario
// ends with an undefined step its level (fixed by the steps that ran before it, see catalogue.ts) is
// kept under the comparable form of each of its steps' texts.
import { After, Status } from '@cucumber/cucumber';
import { comparable } from '../../src/signoff/suggest';
import type { Level } from './catalogue';
import type { KvWorld } from './world';

type ScenarioLevel = Exclude<Level, 'either'>;

/**
 * Comparable form of an undefined step's text → the level of the scenarios it was written in, or
 * null when scenarios of both levels have it (then no level goes first).
 */
export const UNDEFINED_STEP_LEVELS: Map<string, ScenarioLevel | null> = ((globalThis as Record<symbol, unknown>)[Symbol.for('kvqual.undefinedStepLevels')] ??= new Map()) as Map<string, ScenarioLevel | null>;

After(function (this: KvWorld, { pickle, result }) {
  const level = this.scenarioLevel?.level;
  if (result?.status !== Status.UNDEFINED || level === undefined) return;
  for (const step of pickle.steps) {
    const form = comparable(step.text);
    const before = UNDEFINED_STEP_LEVELS.get(form);
    UNDEFINED_STEP_LEVELS.set(form, before === undefined || before === level ? level : null);
  }
});
