// A step's measured values are shown as measured only when the step asserted them: KvWorld.measure
// records each value as not asserted and waits here; chai's assertion hook (assertions.ts) marks a
// waiting value asserted when an assertion of the same step is made on that very number (before it
// was recorded, or after). A value a
// step recorded and then checked some other way (a count beside a table it compared) stays "recorded,
// not asserted", and the sign-off says so (src/signoff/model.ts, measuredText).
import type { Measurement } from '../../src/report/evidence';

/** The values recorded since the current step began, not yet asserted. */
let waiting: Measurement[] = [];
/** The numbers the current step has made an assertion on so far. */
let asserted = new Set<number>();

/** Records a measurement as asserted when the step already asserted its value, else as not (yet), to be marked when it does. */
export function awaitingAssertion(measurement: Measurement): Measurement {
  measurement.asserted = asserted.has(measurement.value);
  if (!measurement.asserted) waiting.push(measurement);
  return measurement;
}

/** An assertion is being made on `actual`: every waiting value of the step equal to it is asserted. */
export function assertedOn(actual: unknown): void {
  if (typeof actual !== 'number') return;
  asserted.add(actual);
  for (const measurement of waiting) if (measurement.value === actual) measurement.asserted = true;
  waiting = waiting.filter((measurement) => !measurement.asserted);
}

/** A step begins (assertions.ts's BeforeStep hook): nothing recorded or asserted yet. */
export function stepBegins(): void {
  waiting = [];
  asserted = new Set();
}
