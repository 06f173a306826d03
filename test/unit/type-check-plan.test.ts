// The type check's plan (src/signoff/typeCheck.ts): tsc's build mode over a config that extends the
// repository's and keeps its record in the given folder, forced whole the first time and whenever the
// installed packages or TypeScript change; checks that keep one record take turns. (test/integration/typecheck.test.ts runs tsc itself.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { TYPE_CHECK_FILES, typeCheckInTurn, typeCheckPlan, typeCheckTurn } from '../../src/signoff/typeCheck';
import { scratchFolder } from '../support/scratch';

function project(): { root: string; records: string } {
  const root = scratchFolder('typecheck-plan');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{ "include": ["*.ts"] }\n');
  fs.writeFileSync(path.join(root, 'package-lock.json'), '{ "lockfileVersion": 3 }\n');
  return { root, records: path.join(root, 'records') };
}

test('the first check is forced whole; once done, the next is left to tsc\'s record', () => {
  const { root, records } = project();
  const first = typeCheckPlan(root, records);
  assert.equal(first.forced, true);
  assert.equal(first.command, path.join(root, 'node_modules', '.bin', 'tsc'));
  assert.deepEqual(first.args, ['--build', path.join(records, TYPE_CHECK_FILES.config), '--force']);
  first.done();
  const second = typeCheckPlan(root, records);
  assert.equal(second.forced, false);
  assert.deepEqual(second.args, ['--build', path.join(records, TYPE_CHECK_FILES.config)]);
});

test('a change of the installed packages forces a whole check again', () => {
  const { root, records } = project();
  typeCheckPlan(root, records).done();
  fs.writeFileSync(path.join(root, 'package-lock.json'), '{ "lockfileVersion": 3, "packages": {} }\n');
  const plan = typeCheckPlan(root, records);
  assert.equal(plan.forced, true);
  plan.done();
  assert.equal(typeCheckPlan(root, records).forced, false);
});

test('the config extends the repository\'s, emits nothing, keeps its record beside it, and is not rewritten when unchanged', () => {
  const { root, records } = project();
  typeCheckPlan(root, records);
  const file = path.join(records, TYPE_CHECK_FILES.config);
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), {
    extends: path.join(root, 'tsconfig.json'),
    compilerOptions: { noEmit: true, incremental: true, tsBuildInfoFile: path.join(records, TYPE_CHECK_FILES.record), typeRoots: [path.join(root, 'node_modules', '@types')] },
  });
  const past = new Date('2020-01-01T00:00:00Z');
  fs.utimesSync(file, past, past);
  typeCheckPlan(root, records);
  assert.equal(fs.statSync(file).mtime.getTime(), past.getTime(), 'tsc counts the config among its inputs: rewriting it would make every check a whole one');
});

test('checks that keep one record take turns: the second waits until the first is done, and the record is free after', async () => {
  const { records } = project();
  const order: string[] = [];
  const release = await typeCheckTurn(records);
  const second = typeCheckTurn(records).then((releaseSecond) => {
    order.push('second has its turn');
    releaseSecond();
  });
  await new Promise((resolve) => setTimeout(resolve, 250));
  order.push('first done');
  release();
  await second;
  assert.deepEqual(order, ['first done', 'second has its turn']);
  assert.equal(fs.existsSync(path.join(records, TYPE_CHECK_FILES.turn)), false, 'the turn is given back');
});

test("a turn left by a process that ended, or by one that never named itself, is taken over; a living holder's is waited for until patience runs out", async () => {
  const { records } = project();
  const turn = path.join(records, TYPE_CHECK_FILES.turn);
  const quick = { poll_ms: 10, polls: 6_000, unnamed_polls: 3 };
  const takeOver = async () => {
    const asked = Date.now();
    (await typeCheckTurn(records, quick))();
    return Date.now() - asked;
  };
  // A process id that has ended: a child that ran and exited.
  const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  fs.mkdirSync(turn, { recursive: true });
  fs.writeFileSync(path.join(turn, 'pid'), ended.stdout);
  assert.ok((await takeOver()) < 5_000, 'taken over at once, not once patience ran out');
  fs.mkdirSync(turn);
  assert.ok((await takeOver()) < 5_000, 'taken over after a few looks');
  assert.equal(fs.existsSync(turn), false);
  // This process holds it (alive): a second check waits, then goes ahead when its patience runs out.
  const release = await typeCheckTurn(records);
  const started = Date.now();
  (await typeCheckTurn(records, { poll_ms: 10, polls: 20, unnamed_polls: 3 }))();
  assert.ok(Date.now() - started >= 150, 'it waited for the living holder (20 looks, 10 ms apart)');
  assert.ok(fs.existsSync(turn), 'going ahead leaves the holder its turn');
  release();
  assert.equal(fs.existsSync(turn), false);
});

test('a turn whose holder ended and whose process id another process took since is taken over at once, not waited for until patience runs out (and then left for the next check to wait on)', { skip: !fs.existsSync('/proc/self/stat') && 'needs /proc (Linux): a process start time' }, async () => {
  const { records } = project();
  const turn = path.join(records, TYPE_CHECK_FILES.turn);
  // A living process (this one) named with a start time that is not its own: the holder's process id, reused.
  fs.mkdirSync(turn, { recursive: true });
  fs.writeFileSync(path.join(turn, 'pid'), `${process.pid} 1`);
  const asked = Date.now();
  const release = await typeCheckTurn(records, { poll_ms: 10, polls: 6_000, unnamed_polls: 3 });
  assert.ok(Date.now() - asked < 5_000, 'taken over at once, not once patience ran out');
  assert.match(fs.readFileSync(path.join(turn, 'pid'), 'utf8'), new RegExp(`^${process.pid} \\d+$`), 'the turn now names this check');
  release();
  assert.equal(fs.existsSync(turn), false);
});

test("giving a turn back leaves one that another check has taken over since (else a third check would start beside that one)", async () => {
  const { records } = project();
  const turn = path.join(records, TYPE_CHECK_FILES.turn);
  const release = await typeCheckTurn(records);
  fs.writeFileSync(path.join(turn, 'pid'), '1 1');
  release();
  assert.equal(fs.readFileSync(path.join(turn, 'pid'), 'utf8'), '1 1', "the other check's turn is left to it");
  fs.rmSync(turn, { recursive: true });
});

test('typeCheckInTurn: the plan made in the check\'s turn, done once the check has ended, and the turn given back', async () => {
  const { root, records } = project();
  const turn = path.join(records, TYPE_CHECK_FILES.turn);
  const stamp = path.join(records, TYPE_CHECK_FILES.dependencies);
  const forced = await typeCheckInTurn(root, records, async (plan) => {
    assert.ok(fs.existsSync(turn), 'the check runs in its turn');
    assert.equal(fs.existsSync(stamp), false, 'not done before the check has ended');
    return plan.forced;
  });
  assert.equal(forced, true);
  assert.ok(fs.existsSync(stamp), 'done once the check has ended');
  assert.equal(fs.existsSync(turn), false, 'the turn is given back');
});
