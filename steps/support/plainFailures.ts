// Every step and hook is wrapped so that a chai assertion failure reaches cucumber (its console,
// its HTML report and the message stream the sign-off reads) as one plain sentence: what was
// checked, expected vs measured, with the unit the step recorded (src/signoff/plainFailure.ts).
// The original error, stack and all, is kept below that sentence in the stack cucumber prints.
// Each runs in its own async context (stepWatch.ts), which charges what it leaves pending to it.
import { setDefinitionFunctionWrapper } from '@cucumber/cucumber';
import { plainSentence } from '../../src/signoff/plainFailure';
import type { KvWorld } from './world';
import { watched } from './stepWatch';

function plain(error: unknown, world: KvWorld | undefined): unknown {
  if (!(error instanceof Error)) return error;
  const measurements = world?.measurements ?? [];
  const said = plainSentence(error as Error & { actual?: unknown; expected?: unknown }, (measured) => [...measurements].reverse().find((m) => m.value === measured)?.unit ?? '');
  if (said === null) return error;
  // A check that something exists, failed: say it is missing, not that it was "undefined".
  const sentence = said.replace(/: expected anything but (?:undefined|null|none), measured none\.?$/, ': there is none.');
  const replaced = new Error(sentence);
  replaced.stack = `${sentence}\n\n${error.stack ?? error.message}`;
  return replaced;
}

setDefinitionFunctionWrapper((fn: (...args: unknown[]) => unknown) => {
  const wrapped = function (this: KvWorld, ...args: unknown[]): unknown {
    let result: unknown;
    try {
      result = watched(() => fn.apply(this, args));
    } catch (error) {
      throw plain(error, this);
    }
    if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(plain(error, this)));
    return result;
  };
  // Cucumber reads a step function's arity (a callback step has one more parameter): keep it.
  Object.defineProperty(wrapped, 'length', { value: fn.length });
  return wrapped;
});
