// How qualify asks for its suite runs (src/signoff/suiteRunner.ts): a SuiteRun becomes exactly the
// cucumber-js arguments it stood for; a compiled run is a process whatever runner the caller gives;
// run 1 then its planted-fault check, composed from a runner's two parts, checks the stream run 1
// wrote, in run 1's environment, and nothing when it wrote none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DriverContext, SuiteRun, SuiteRunner } from '../../src/signoff/context';
import { cucumberArgs, firstThenFaults, PROCESS_SUITE_RUNNER, suiteRunnerFor } from '../../src/signoff/suiteRunner';
import type { FaultCheck } from '../../src/signoff/faults';

const request = (more: Partial<SuiteRun> = {}): SuiteRun => ({ profile: 'replay', paths: ['features/**/*.feature'], shard: null, order: null, reports: {}, env: {}, beside: false, ...more });

test('a run is the cucumber-js arguments it stands for, each report by its formatter', () => {
  const full = request({ shard: '2/3', order: 'random:1893', reports: { html: 'out/c.html', junit: 'out/j.xml', message: 'out/m.ndjson' } });
  assert.deepEqual(cucumberArgs(full), ['--profile', 'replay', 'features/**/*.feature', '--shard', '2/3', '--order', 'random:1893', '--format', 'html:out/c.html', '--format', 'junit:out/j.xml', '--format', 'message:out/m.ndjson']);
  assert.deepEqual(cucumberArgs(request({ profile: 'compiled', paths: ['f/a.feature:3'], reports: { message: 'm.ndjson', summary: true } })), ['--profile', 'compiled', 'f/a.feature:3', '--format', 'message:m.ndjson', '--format', 'summary']);
});

test("a compiled run is a process whatever the caller's runner; a run on tsx is the caller's, else a process", () => {
  const mine: SuiteRunner = { run: async () => ({ status: 0, output: '' }), runFirst: () => assert.fail('not asked for here') };
  const ctx = { suiteRunner: mine } as DriverContext;
  assert.equal(suiteRunnerFor(ctx, 'compiled'), PROCESS_SUITE_RUNNER);
  assert.equal(suiteRunnerFor(ctx, 'replay'), mine);
  assert.equal(suiteRunnerFor({} as DriverContext, 'replay'), PROCESS_SUITE_RUNNER);
});

test("run 1 then its faults: the check gets run 1's stream and environment once the run has ended, and is not made when it wrote none", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-suite-runner-'));
  try {
    const ctx = { root } as DriverContext;
    const check: FaultCheck = { trials: [], survivors: [], exempt: [], problems: [] };
    const asked: { stream: string; env: NodeJS.ProcessEnv }[] = [];
    const checkFaults = async (_: DriverContext, env: NodeJS.ProcessEnv, stream: string) => (asked.push({ stream, env }), check);
    const writing: SuiteRunner['run'] = async (_, r) => (fs.writeFileSync(path.join(root, r.reports.message!), '{}\n'), { status: 1, output: '1 scenario (1 failed)\n' });
    const first = firstThenFaults(ctx, request({ reports: { message: 'm.ndjson' }, env: { KVQUAL_RUN_NONCE: 'n1' } }), writing, checkFaults);
    assert.equal(await first.ended, '1 scenario (1 failed)\n');
    assert.deepEqual(await first.exited, { status: 1, output: '1 scenario (1 failed)\n' });
    assert.equal(await first.faults, check);
    assert.deepEqual(asked, [{ stream: path.join(root, 'm.ndjson'), env: { KVQUAL_RUN_NONCE: 'n1' } }]);
    const silent: SuiteRunner['run'] = async () => ({ status: 1, output: 'cucumber could not run' });
    assert.equal(await firstThenFaults(ctx, request({ reports: { message: 'none.ndjson' } }), silent, checkFaults).faults, null);
    assert.equal(asked.length, 1, 'no check without a stream');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
