// What a step leaves behind that its own result would hide. A step that passed fails (in an
// AfterStep hook) when, while it ran:
//   - an AssertionError was made and not propagated: chai's (every failed expect/assert, and
//     expect.fail or assert.fail, which bypass Assertion.prototype.assert) and node:assert's
//     (assert.fail, strictEqual, ok, …), caught inside the step or thrown where nobody awaited it;
//   - a promise it made was still pending when it returned (an unawaited check, or one that never
//     settles: what it would have asserted was never asserted);
//   - a promise it made was rejected and nobody handled the rejection.
// Each step runs in its own async context (steps/support/plainFailures.ts calls watched()), so a
// promise is charged to the step whose code, or whose awaited continuation, made it, never to
// cucumber's own machinery. A rejection that no step made keeps Node's behaviour (it is thrown).
import { AsyncLocalStorage } from 'node:async_hooks';
import nodeAssert from 'node:assert';
import { promiseHooks } from 'node:v8';
import * as chai from 'chai';
import { AfterStep, BeforeStep, Status } from '@cucumber/cucumber';

/** What one run of a step (or hook) made, while it ran and after. */
interface StepRecord {
  pending: Set<Promise<unknown>>;
  rejections: unknown[];
  /** AssertionErrors (chai's and node:assert's) its code made. */
  assertionErrors: number;
  /** True from the last BeforeStep hook until the step's own function has returned (or its promise settled). */
  open: boolean;
}

const fresh = (): StepRecord => ({ pending: new Set(), rejections: [], assertionErrors: 0, open: false });

const context = new AsyncLocalStorage<StepRecord>();
/** The step being run now (between BeforeStep and AfterStep), or null. */
let current: StepRecord | null = null;
/** Charges an AssertionError being made to the step (or hook) whose code makes it. */
function assertionErrorMade(): void {
  const record = context.getStore();
  if (record !== undefined) record.assertionErrors++;
}
const madeBy = new WeakMap<Promise<unknown>, StepRecord>();

promiseHooks.createHook({
  init(promise) {
    const record = context.getStore();
    if (record === undefined) return;
    record.pending.add(promise);
    madeBy.set(promise, record);
  },
  settled(promise) {
    madeBy.get(promise)?.pending.delete(promise);
  },
});

// chai's AssertionError records its stack through Error.captureStackTrace, looked up when it is made.
const captureStackTrace = Error.captureStackTrace.bind(Error);
Error.captureStackTrace = function counting(target: object, constructorOpt?: Function): void {
  if (target instanceof chai.AssertionError) assertionErrorMade();
  captureStackTrace(target, constructorOpt);
};

// node:assert's AssertionError sets its `code` when it is made: a setter on its prototype sees it.
Object.defineProperty(nodeAssert.AssertionError.prototype, 'code', {
  configurable: true,
  get: () => undefined,
  set(this: object, value: unknown) {
    assertionErrorMade();
    Object.defineProperty(this, 'code', { value, writable: true, enumerable: true, configurable: true });
  },
});

process.on('unhandledRejection', (reason, promise) => {
  const record = madeBy.get(promise);
  if (record === undefined) throw reason;
  record.rejections.push(reason);
});

/**
 * Runs a step or hook function in an async context of its own, so what it makes is charged to it:
 * the first function run after BeforeStep is the step itself, charged to the current step's record,
 * which closes when it has returned or its promise has settled (the AfterStep hooks get their own).
 */
export function watched<T>(run: () => T): T {
  const record = current !== null && current.open ? current : fresh();
  const close = () => {
    record.open = false;
  };
  let result: T;
  try {
    result = context.run(record, run);
  } catch (error) {
    close();
    throw error;
  }
  if (result instanceof Promise) result.then(close, close);
  else close();
  return result;
}

/** Why a step that passed left something unchecked (see the module comment), or null. */
export function leftUnchecked(status: string | undefined, made: { assertionErrors: number; pending: number; rejections: unknown[] }): string | null {
  if (status !== Status.PASSED) return null;
  const problems: string[] = [];
  if (made.assertionErrors > 0) {
    problems.push(`${made.assertionErrors === 1 ? 'an assertion of this step failed' : `${made.assertionErrors} assertions of this step failed`} and the step passed anyway (caught inside it, or thrown where nothing awaited it): a step must not swallow its own check`);
  }
  if (made.pending > 0) problems.push(`${made.pending === 1 ? 'a promise' : `${made.pending} promises`} this step made ${made.pending === 1 ? 'was' : 'were'} still pending when it returned: what ${made.pending === 1 ? 'it' : 'they'} would check was never checked (await it)`);
  for (const reason of made.rejections) problems.push(`a promise this step made was rejected and nothing handled it: ${reason instanceof Error ? reason.message : String(reason)}`);
  return problems.length > 0 ? problems.join('; ') : null;
}

BeforeStep(function () {
  current = { ...fresh(), open: true };
});

AfterStep(async function ({ result }) {
  const record = current;
  current = null;
  // Let a rejection of this step's promises be reported (Node reports them after the microtasks).
  await new Promise((resolve) => setImmediate(resolve));
  if (record === null) return;
  const problem = leftUnchecked(result?.status, { assertionErrors: record.assertionErrors, pending: record.pending.size, rejections: record.rejections });
  if (problem !== null) throw new Error(problem);
});
