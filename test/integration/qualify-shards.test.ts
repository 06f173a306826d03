// Qualification in shards, end to end on the sign-off fixture suite: the suite qualified whole and
// as 3 shards at once (each its own suite runs), the shards merged; the merged sign-off (Markdown,
// HTML, JSON) equals the unsharded one once the date and the command line are masked. A shard
// missing, a shard given twice, a shard of another count and one of another suite each make the
// merged verdict NOT QUALIFIED with a Shards gate that names it. A shard run publishes no
// sign-off. Wrong --shard / --merge usage is refused in one line with exit status 2, creating
// nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../support/paths';
import { qualifyInProcess } from '../support/qualify';
import { parseQualifyArgs, prepare, UsageError } from '../../src/signoff/driver';
import { NARROWED_EXIT_STATUS, NARROWED_VERDICT } from '../../src/signoff/narrowed';
import { sha256Of, streamNonces } from '../../src/signoff/shardTrust';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-qualify-shards-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const SUITE = ['--features', 'test/fixtures/signoff/features', '--no-coverage', '--fuzz-runs', '20'];
const REQUIREMENTS = ['--requirements', 'test/fixtures/signoff/requirements.yaml'];

interface Run {
  status: number | null;
  output: string;
}

/** The key the shards sign their manifests with here (KVQUAL_SIGNING_KEY); merges that check it are given it. */
const KEY = 'shard-test-key';

/** A qualification in this process (test/support/qualify.ts): the shards and merges are the driver's, and each shard runs its own cucumber processes. */
async function qualify(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Run> {
  const { status, output } = await qualifyInProcess(args, extra);
  return { status, output };
}

const dir = (name: string) => path.join(scratch, name);
const read = (folder: string, name: string) => fs.readFileSync(path.join(folder, name), 'utf8');

/** A sign-off with the lines that may differ between two runs of one suite masked: the date and the command that produced it. */
function masked(text: string): string {
  return text
    .replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/g, 'DATE')
    .replace(/npm run qualify -- [^`<"|\n]*/g, 'COMMAND');
}

function merge(out: string, shards: string[], env: NodeJS.ProcessEnv = {}, requirements = REQUIREMENTS): Promise<Run> {
  return qualify([...requirements, '--campaign', 'shards', '--out', dir(out), '--merge', ...shards], env);
}

/** The Shards gate's words in a merged sign-off ('' when it passed). */
const shardsGate = (out: string): string => (JSON.parse(read(dir(out), 'signoff.json')) as { gates: { title: string; summary: string }[] }).gates.find((g) => g.title === 'Shards')?.summary ?? '';

/** A copy of a shard folder (its published files, links followed) with its manifest (and streams) changed. */
function copyShard(from: string, to: string, change: (manifest: Record<string, any>) => void, streams: (files: { first: string; second: string }) => { first: string; second: string } = (f) => f): string {
  const target = dir(to);
  fs.mkdirSync(target);
  for (const name of ['shard.json', 'messages.ndjson', 'messages-rerun.ndjson']) fs.copyFileSync(path.join(dir(from), name), path.join(target, name));
  const changed = streams({ first: read(target, 'messages.ndjson'), second: read(target, 'messages-rerun.ndjson') });
  fs.writeFileSync(path.join(target, 'messages.ndjson'), changed.first);
  fs.writeFileSync(path.join(target, 'messages-rerun.ndjson'), changed.second);
  const manifest = JSON.parse(read(target, 'shard.json'));
  change(manifest);
  fs.writeFileSync(path.join(target, 'shard.json'), JSON.stringify(manifest));
  return target;
}

let whole: Run;
let shards: Run[];
let merged: Run;

before(async () => {
  [whole, ...shards] = await Promise.all([
    qualify([...SUITE, ...REQUIREMENTS, '--campaign', 'shards', '--out', dir('whole')]),
    ...[1, 2, 3].map((i) => qualify([...SUITE, ...REQUIREMENTS, '--shard', `${i}/3`, '--out', dir(`shard-${i}`)], { KVQUAL_SIGNING_KEY: KEY })),
  ]);
  merged = await merge('merged', [dir('shard-3'), dir('shard-1'), dir('shard-2')], { KVQUAL_SIGNING_KEY: KEY });
});

test('each shard runs only its share, twice, and publishes its streams and manifest but no sign-off', () => {
  shards.forEach((run, i) => {
    assert.equal(run.status, 0, run.output);
    const folder = dir(`shard-${i + 1}`);
    assert.deepEqual(fs.readdirSync(folder).filter((name) => !name.startsWith('.')).sort(), ['cucumber.html', 'junit.xml', 'messages-rerun.ndjson', 'messages.ndjson', 'shard.json']);
    const manifest = JSON.parse(read(folder, 'shard.json'));
    assert.deepEqual(manifest.shard, { index: i + 1, count: 3 });
    assert.equal(manifest.suite.scenarios, 3);
    assert.equal(manifest.generated === null, i !== 0, 'only shard 1 runs the generated workloads');
    for (const stream of ['messages.ndjson', 'messages-rerun.ndjson']) {
      assert.equal(read(folder, stream).split('\n').filter((line) => line.startsWith('{"testCase":')).length, 1, `${stream}: one scenario of three`);
    }
    assert.match(run.output, /not a verdict: merge all 3 shards/);
  });
});

test('the merged sign-off of 3 shards equals the unsharded one apart from the date and the command line', () => {
  // A fixture suite without the coverage run: every gate passes, and neither is a release sign-off.
  assert.equal(whole.status, NARROWED_EXIT_STATUS, whole.output);
  assert.equal(merged.status, NARROWED_EXIT_STATUS, merged.output);
  for (const name of ['signoff.md', 'signoff.json', 'signoff.html']) {
    const one = masked(read(dir('whole'), name));
    const two = masked(read(dir('merged'), name));
    assert.ok(one.includes(NARROWED_VERDICT));
    assert.equal(two, one, `${name} of the merge differs from the unsharded one`);
  }
  assert.deepEqual(fs.readdirSync(path.join(dir('merged'), 'signoff-assets')).sort(), fs.readdirSync(path.join(dir('whole'), 'signoff-assets')).sort());
  assert.match(read(dir('merged'), 'junit.xml'), /<testsuite [^>]*tests="3"[^>]* failures="0"/, "cucumber's JUnit report of the merged stream has every scenario");
  assert.ok(read(dir('merged'), 'cucumber.html').length > 1000, "cucumber's HTML report is rendered from the merged stream");
});

test('each shard records its streams\' SHA-256 and nonces, its tree, registry and options, and signs its manifest', () => {
  for (const i of [1, 2, 3]) {
    const manifest = JSON.parse(read(dir(`shard-${i}`), 'shard.json'));
    assert.match(manifest.signature, /^[0-9a-f]{64}$/);
    assert.equal(manifest.trust.streams.first.sha256, sha256Of(read(dir(`shard-${i}`), 'messages.ndjson')));
    assert.equal(manifest.trust.streams.second.sha256, sha256Of(read(dir(`shard-${i}`), 'messages-rerun.ndjson')));
    assert.deepEqual(streamNonces(read(dir(`shard-${i}`), 'messages-rerun.ndjson')), [manifest.trust.streams.second.nonce]);
    assert.notEqual(manifest.trust.streams.first.nonce, manifest.trust.streams.second.nonce);
    assert.match(manifest.trust.tree, /^[0-9a-f]{40}$/);
    assert.deepEqual(manifest.trust.options, [...SUITE, ...REQUIREMENTS]);
    assert.deepEqual(manifest.trust.channels, []);
  }
});

test('with KVQUAL_SIGNING_KEY the merge refuses a shard whose manifest was changed, and every shard under another key', async () => {
  // Coverage failures removed from a manifest are the same kind of edit: any change to a signed manifest or stream.
  const edited = copyShard('shard-2', 'edited-manifest', (m) => (m.subject.node = 'v99.0.0'));
  const run = await merge('edited-signed', [dir('shard-1'), edited, dir('shard-3')], { KVQUAL_SIGNING_KEY: KEY });
  assert.equal(run.status, 1, run.output);
  assert.match(shardsGate('edited-signed'), /shard 2 of 3 \(.*edited-manifest\): its signature does not match \(KVQUAL_SIGNING_KEY\): its manifest or streams were changed after it signed them, or another key signed it; refused/);
  assert.match(read(dir('edited-signed'), 'signoff.md'), /\| Scenarios \| 2 of 3 scenarios passed \(1 not run\) \| ❌ \|/, 'the refused shard\'s scenario did not run');
  const otherKey = await merge('other-key', [dir('shard-1'), dir('shard-2'), dir('shard-3')], { KVQUAL_SIGNING_KEY: 'another key' });
  assert.equal(otherKey.status, 1, otherKey.output);
  assert.equal((shardsGate('other-key').match(/its signature does not match/g) ?? []).length, 3);
});

test('a stream edited after its shard ran, and a second run that is the first\'s copy with one space added (its digest and nonce rewritten to match), are named and left out', async () => {
  const edited = copyShard('shard-2', 'edited-stream', () => {}, (f) => ({ first: f.first.replace('"status":"PASSED"', '"status":"PASSED" '), second: f.second }));
  const copied = copyShard(
    'shard-3',
    'copied-run',
    (m) => {
      m.trust.streams.second = { sha256: sha256Of(read(dir('shard-3'), 'messages.ndjson').replace('"status":"PASSED"', '"status": "PASSED"')), nonce: m.trust.streams.first.nonce };
    },
    (f) => ({ first: f.first, second: f.first.replace('"status":"PASSED"', '"status": "PASSED"') }),
  );
  const run = await merge('edited-streams', [dir('shard-1'), edited, copied]);
  assert.equal(run.status, 1, run.output);
  const gate = shardsGate('edited-streams');
  assert.match(gate, /shard 2 of 3 \(.*edited-stream\): the message stream of its first run is not the one it recorded \(its SHA-256 differs\): changed after the run; left out/);
  assert.match(gate, /shard 3 of 3 \(.*copied-run\): the nonce of the message stream of its second run is also that of shard 3 of 3 \(.*copied-run\), first run: one run recorded twice/);
  assert.match(gate, /shard 3 of 3 \(.*copied-run\): the message stream of its second run shares \d+ of cucumber's per-run ids with its first \([^)]*\): a copy of the first, however edited, not a second run; it was left out/);
  assert.match(read(dir('edited-streams'), 'signoff.md'), /\| Determinism \| (?!both runs identical)/, 'determinism is not proven by a copy');
});

test('a merge reading a registry the commit does not hold is NOT QUALIFIED, naming it', async () => {
  const registry = path.join(scratch, 'requirements.yaml');
  fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'signoff', 'requirements.yaml'), registry);
  const run = await merge('uncommitted-registry', [dir('shard-1'), dir('shard-2'), dir('shard-3')], {}, ['--requirements', registry]);
  assert.equal(run.status, 1, run.output);
  assert.match(shardsGate('uncommitted-registry'), /the merge reads \.\.\/.*requirements\.yaml, which is not in the commit: merge with the registry the shards' commit holds/);
});

test('a shard missing is a gap the merged sign-off names: NOT QUALIFIED', async () => {
  const run = await merge('missing', [dir('shard-1'), dir('shard-3')]);
  assert.equal(run.status, 1, run.output);
  const md = read(dir('missing'), 'signoff.md');
  assert.match(md, /\*\*NOT QUALIFIED\*\*/);
  assert.match(md, /\| Shards \| the merged shards are not one complete set: shard 2 of 3 missing: its scenarios did not run \| ❌ \|/);
  assert.match(md, /\| Scenarios \| 2 of 3 scenarios passed \(1 not run\) \| ❌ \|/);
  assert.match(run.output, /FAIL {2}Shards: .*shard 2 of 3 missing/);
});

test('a shard given twice is a gap the merged sign-off names, even when every scenario ran', async () => {
  const run = await merge('twice', [dir('shard-1'), dir('shard-2'), dir('shard-3'), dir('shard-2')]);
  assert.equal(run.status, 1, run.output);
  const md = read(dir('twice'), 'signoff.md');
  assert.match(md, /\| Shards \| the merged shards are not one complete set: shard 2 of 3 given twice \(.*shard-2 and .*shard-2\); only the first was used \| ❌ \|/);
  assert.match(md, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/, 'only the Shards gate tells');
  assert.match(md, /\| Determinism \| both runs identical for all 3 scenarios; order independence not proven \(no --isolation\) \| ✅ \|/);
});

test('a shard of another count or of another suite is left out and named', async () => {
  const otherCount = copyShard('shard-2', 'other-count', (m) => (m.shard = { index: 2, count: 2 }));
  const otherSuite = copyShard('shard-3', 'other-suite', (m) => (m.suite.digest = `sha256:${'0'.repeat(64)}`));
  const run = await merge('foreign', [dir('shard-1'), otherCount, otherSuite]);
  assert.equal(run.status, 1, run.output);
  const gate = /\| Shards \| (.*) \| ❌ \|/.exec(read(dir('foreign'), 'signoff.md'))?.[1] ?? '';
  assert.match(gate, /other-count \(shard 2 of 2\) is not of this set and was left out: it is one of 2 shards, not 3/);
  assert.match(gate, /other-suite \(shard 3 of 3\) is not of this set and was left out: it ran another suite/);
  assert.match(gate, /shard 2 of 3 missing/);
  assert.match(gate, /shard 3 of 3 missing/);
});

test('the merged sign-off names the commit the shards ran, and a merge on another commit is a gap: NOT QUALIFIED', async () => {
  const other = 'f'.repeat(40);
  const moved = [1, 2, 3].map((i) => copyShard(`shard-${i}`, `other-commit-${i}`, (m) => (m.subject.commit = other)));
  const run = await merge('other-commit', moved);
  assert.equal(run.status, 1, run.output);
  const signoff = read(dir('other-commit'), 'signoff.md');
  assert.match(signoff, new RegExp(`\\| Git commit \\| \`${other.slice(0, 8)}`), 'the commit named is the shards\'');
  const gate = /\| Shards \| (.*) \| ❌ \|/.exec(signoff)?.[1] ?? '';
  assert.match(gate, /the merge runs on commit [0-9a-f]{12}, the shards ran ffffffffffff: merge on the commit the shards ran/);
});

test('wrong --shard or --merge usage is one line, exit status 2, and creates nothing', () => {
  const out = dir('never-made');
  const cases: [string[], RegExp][] = [
    [['--shard', '0/3'], /^qualify: --shard 0\/3: the shard index must be from 1 to 3\n$/],
    [['--shard', '4/3'], /^qualify: --shard 4\/3: the shard index must be from 1 to 3\n$/],
    [['--shard', 'x'], /^qualify: --shard x: expected i\/n, e\.g\. 2\/3\n$/],
    [['--shard', '1/0'], /^qualify: --shard 1\/0: the number of shards must be at least 1\n$/],
    [['--shard', '1/3', '--merge', dir('shard-1')], /^qualify: --shard and --merge cannot be combined: a shard runs its share, the merge runs nothing\n$/],
    [['--merge'], /^qualify: --merge needs the shard folders to merge \(--merge DIR…\)\n$/],
    [['--merge', dir('no-such-shard')], /^qualify: --merge .*no-such-shard: no such folder\n$/],
    [['--merge', path.join(ROOT, 'docs')], /^qualify: --merge .*docs: no readable shard\.json \(not the --out folder of a `npm run qualify -- --shard i\/n` run\)\n$/],
    [['--merge', dir('shard-1'), '--fuzz-runs', '3'], /^qualify: --fuzz-runs belongs to the shard runs, not to --merge/],
    [['--shard', '1/3', '--baseline', 'x.json'], /^qualify: --baseline belongs to --merge, not to a --shard run/],
  ];
  // Two cases as real processes (the exit status, the one line, nothing on stdout); the others through the same checks in this process.
  const asProcess = (args: string[]) => spawnSync(process.execPath, ['--require', 'tsx/cjs', 'scripts/qualify.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const inProcess = (args: string[]) => {
    try {
      prepare(parseQualifyArgs(args), ROOT, {});
      return { status: 0, stderr: '', stdout: '' };
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      return { status: 2, stderr: `qualify: ${error.message}\n`, stdout: '' };
    }
  };
  for (const [index, [args, expected]] of cases.entries()) {
    const result = (index < 2 ? asProcess : inProcess)(['--out', out, ...args]);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, expected, args.join(' '));
    assert.equal(result.stdout, '', args.join(' '));
    assert.equal(fs.existsSync(out), false, `${args.join(' ')}: nothing is created`);
  }
  const intoShard = inProcess([...REQUIREMENTS, '--merge', dir('shard-1'), '--out', dir('shard-1')]);
  assert.equal(intoShard.status, 2);
  assert.match(intoShard.stderr, /^qualify: --out .*shard-1: is one of the shard folders given to --merge; give the merged sign-off a folder of its own\n$/);
  assert.ok(fs.existsSync(path.join(dir('shard-1'), 'shard.json')), 'the shard is untouched');
  // The same folder through a symbolic link is the same folder.
  const link = `${dir('shard-1')}-link`;
  fs.symlinkSync(dir('shard-1'), link);
  const throughLink = inProcess([...REQUIREMENTS, '--merge', dir('shard-1'), '--out', link]);
  fs.unlinkSync(link);
  assert.equal(throughLink.status, 2);
  assert.match(throughLink.stderr, /^qualify: --out .*shard-1-link: is one of the shard folders given to --merge/);
});
