// End-to-end tests of `npm run qualify` on fixture suites run through cucumber with the real
// steps: a clean run of a fixture suite passes every gate but is not a release sign-off (another
// suite, no coverage run): PASSED — NOT A RELEASE SIGN-OFF, exit 3; the same run twice gives the same report apart
// from the date line; the perturbation test double flips the verdict and names the scenario; an
// undefined (misspelt) step gets the three nearest phrases on the console and in the report, and
// with an untagged scenario and an unknown tag is listed and makes it NOT QUALIFIED;
// the real suite with one scenario of every feature file perturbed is NOT QUALIFIED naming each;
// the fuzzer's planted defect (KVQUAL_FUZZ_PLANT=1) fails the generated-workloads gate for real;
// a kill at any phase leaves the old set or the new one; usage errors delete nothing. In headless
// Chromium, signoff.html renders its matrix and figures and shows a hostile name as text; its
// first screen holds verdict, gates, attention, what was qualified and approval; cards fold,
// filters and search work under a CSP that allows only the page's script and style sheet; it reads without
// scripts; it prints unfolded; and the folded sign-off of the whole passing suite is under 15
// screens. The browser tests are skipped without Chromium.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { qualifyInProcess, qualifyProcess } from '../support/qualify';
import { featureFiles, scenariosOf } from '../../scripts/lint-requirements';
import { parseSignoffJson } from '../../src/signoff/jsonSchema';
import { parseQualifyArgs, prepare, UsageError } from '../../src/signoff/driver';
import { NARROWED_EXIT_STATUS, NARROWED_VERDICT } from '../../src/signoff/narrowed';

const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = '<script>alert(1)</script> an arrival at 15 ms sees the store';
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-signoff-'));

interface Qualified {
  status: number | null;
  output: string;
  markdown: string;
  html: string;
  dir: string;
}

/** qualify's arguments for a fixture suite; generated workloads only where a test looks at them (the clean run, the kill test's phases). */
function fixtureArgs(fixture: string, dir: string, campaign = 'sign-off fixture', fuzzRuns = 0): string[] {
  const features = fixture === 'features' ? 'features' : `test/fixtures/${fixture}/features`;
  const requirements = fixture === 'features' ? 'requirements.yaml' : `test/fixtures/${fixture}/requirements.yaml`;
  return ['--features', features, '--requirements', requirements, '--out', dir, '--campaign', campaign, '--no-coverage', '--fuzz-runs', String(fuzzRuns)];
}

/**
 * A qualification of a fixture suite into scratch/OUT: in this process (test/support/qualify.ts),
 * or as a real `node scripts/qualify.ts` process where the process itself is tested (`process`,
 * or `onSpawn` to see the child: the clean run's exit status and console, the usage errors, the kills).
 */
async function qualify(fixture: string, out: string, env: NodeJS.ProcessEnv = {}, args = fixtureArgs(fixture, path.join(scratch, out)), how: { process?: boolean; onSpawn?: (child: ChildProcess) => void } = {}): Promise<Qualified> {
  const dir = path.join(scratch, out);
  const run = how.process || how.onSpawn ? await qualifyProcess(args, env, how.onSpawn) : await qualifyInProcess(args, env);
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '');
  return { status: run.status, output: run.output, markdown: read('signoff.md'), html: read('signoff.html'), dir };
}

let clean: Qualified;
let cleanAgain: { markdown: string; html: string };
let perturbed: Qualified;
let broken: Qualified;
let suite: Qualified;
let planted: Qualified;

before(async () => {
  // Two runs at a time on two cores; the repeat of the clean run writes to the same place. The clean
  // run is `npm run qualify` end to end, a process of its own (its exit status and console); the others run in this process.
  const withWorkloads = fixtureArgs('signoff', path.join(scratch, 'clean'), 'sign-off fixture', 50);
  [clean, perturbed] = await Promise.all([qualify('signoff', 'clean', {}, withWorkloads, { process: true }), qualify('signoff', 'perturbed', { KVQUAL_PERTURB: '14.999 ms' })]);
  const first = { markdown: clean.markdown, html: clean.html };
  [broken] = await Promise.all([qualify('signoff-broken', 'broken'), qualify('signoff', 'clean', {}, withWorkloads).then((again) => (cleanAgain = again))]);
  // The planted defect's run beside the whole suite's (whose two runs leave room on the second core now and then).
  [suite, planted] = await Promise.all([qualify('features', 'suite'), qualify('signoff', 'planted', { KVQUAL_FUZZ_PLANT: '1' }, fixtureArgs('signoff', path.join(scratch, 'planted'), 'sign-off fixture', 20))]);
  clean = { ...clean, ...first };
});

after(() => fs.rmSync(scratch, { recursive: true, force: true }));

test('a clean fixture run passes every gate, is not a release sign-off (exit 3, its reasons named, no approval block), and keeps cucumber\'s reports beside the sign-off', () => {
  assert.equal(clean.status, NARROWED_EXIT_STATUS, clean.output);
  assert.match(clean.markdown, /\| Verdict \| \*\*PASSED — NOT A RELEASE SIGN-OFF\*\* ❌ \|/);
  assert.doesNotMatch(clean.markdown, /## Approval/);
  const reasons = parseSignoffJson(fs.readFileSync(path.join(clean.dir, 'signoff.json'), 'utf8'), 'signoff.json');
  assert.equal(reasons.qualified, false);
  assert.ok(reasons.gates.every((gate) => gate.passed), 'every gate passed');
  assert.deepEqual(
    reasons.narrowed!.map((reason) => reason.split(':')[0]),
    ["the features of test/fixtures/signoff/features/ ran, not the project's features/", "the requirements of test/fixtures/signoff/requirements.yaml were checked, not the project's requirements.yaml", '--no-coverage', '--fuzz-runs 50', ...reasons.narrowed!.slice(4).map((reason) => reason.split(':')[0])],
  );
  assert.match(clean.output, /── verdict: PASSED — NOT A RELEASE SIGN-OFF ──[\s\S]*not a release sign-off: --no-coverage/);
  for (const name of ['signoff.md', 'signoff.html', 'cucumber.html', 'junit.xml', 'messages.ndjson']) {
    assert.ok(fs.existsSync(path.join(clean.dir, name)), `${name} is written`);
  }
  const assets = fs.readdirSync(path.join(clean.dir, 'signoff-assets'));
  assert.equal(assets.length, 4, 'three figures and the summary chart');
  for (const asset of assets) assert.ok(clean.markdown.includes(`](signoff-assets/${asset})`), `signoff.md links ${asset}`);
  assert.match(clean.markdown, /host blocks counted on worker 1 = 4 \(the whole 4-block prefix\)/);
  assert.match(clean.markdown, /\| Generated workloads \| 50 generated workloads \(fast-check seed 1893\) kept every invariant.* \| ✅ \|/);
  assert.match(clean.markdown, /r2 placed on worker 1 at 15 ms: 4 host block\(s\), cost 9 vs 10 on worker 0 — host blocks visible to the router since 15 ms \(emitted at 10 ms\)/);
  const hidden = fs.readdirSync(clean.dir).filter((name) => name.startsWith('.'));
  assert.deepEqual(hidden.sort(), ['.signoff-current', '.signoff-runs'], 'no temporary file is left behind');
  assert.equal(fs.readdirSync(path.join(clean.dir, '.signoff-runs')).length, 1, 'only the published run is kept');
});

test('the same run twice gives the same report apart from the date line', () => {
  for (const kind of ['markdown', 'html'] as const) {
    const one = clean[kind].split('\n');
    const two = cleanAgain[kind].split('\n');
    assert.equal(one.length, two.length, kind);
    const differing = one.map((line, i) => [line, two[i]]).filter(([a, b]) => a !== b);
    // Only lines that carry the date (its row, and the HTML subtitle) may differ, when the two runs straddle a minute.
    const dated = /\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/;
    for (const [a, b] of differing) {
      assert.match(a, dated, `${kind}: only a line with the date may differ, got ${JSON.stringify([a, b]).slice(0, 400)}`);
      assert.equal(a.replace(dated, 'DATE'), b.replace(dated, 'DATE'), `${kind}: the line differs by more than its date`);
    }
  }
});

test('the perturbation test double flips the verdict to NOT QUALIFIED and names the scenario', () => {
  assert.equal(perturbed.status, 1, perturbed.output);
  assert.match(perturbed.markdown, /\*\*NOT QUALIFIED\*\*/);
  assert.match(perturbed.markdown, /\| Determinism \| 1 scenario differed between the two runs: "an arrival at 14\.999 ms does not see the store"; order independence not proven \(no --isolation\) \| ❌ \|/);
  assert.match(perturbed.markdown, /digests differ: KV batches: 1 vs 2/);
  assert.match(perturbed.markdown, /TEST DOUBLE ACTIVE/);
  assert.ok(fs.existsSync(path.join(perturbed.dir, 'messages-rerun.ndjson')), 'the second run is kept for the inquiry');
  assert.match(perturbed.markdown, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/, 'the perturbed scenario still passes: only the digest tells');
  assert.match(perturbed.markdown.replace(/\\(.)/g, '$1'), /\| Produced by \| `KVQUAL_PERTURB='14\.999 ms' npm run qualify -- --features test\/fixtures\/signoff\/features /, 'the command line names the test double');
  assert.match(clean.markdown.replace(/\\(.)/g, '$1'), /\| Produced by \| `npm run qualify -- --features /);
});

test('the planted defect (KVQUAL_FUZZ_PLANT=1) fails the generated-workloads gate for real: NOT QUALIFIED under a test double banner, the suite itself unaffected', () => {
  assert.equal(planted.status, 1, planted.output);
  const md = planted.markdown.replace(/\\(.)/g, '$1');
  assert.match(md, /^> \*\*⚠ TEST DOUBLE ACTIVE — not a valid sign-off\.\*\* The generated workloads ran with a planted defect on purpose \(KVQUAL_FUZZ_PLANT=1: /m);
  assert.match(md, /\| Verdict \| \*\*NOT QUALIFIED\*\* ❌ \|/);
  assert.match(md, /\| Generated workloads \| with the planted defect \(test double\), generated workload \d+ of 20 \(fast-check seed 1893\) broke no request reuses more tokens than its prompt: planted defect \(test double KVQUAL_FUZZ_PLANT=1\): request \S+ reused \d+ cached tokens; shrunk counterexample \{ seed: 1893, path: "[\d:]+" \}, replay with KVQUAL_FUZZ_PLANT=1 npm run fuzz -- --seed 1893 --path [\d:]+ \| ❌ \|/);
  assert.match(md, /\| Test double \| KVQUAL_FUZZ_PLANT=1 planted a defect in the generated workloads' checker \(.*\); the generated-workloads gate caught it: this run is not a sign-off \| ❌ \|/);
  assert.match(md, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/, 'the suite runs without the plant');
  assert.match(md, /\| Determinism \| both runs identical/);
  assert.match(planted.html, /id="planted-defect">⚠ TEST DOUBLE ACTIVE/);
  assert.match(planted.output, /generated workloads: 20 cases .* \(KVQUAL_FUZZ_PLANT=1: test double active, a planted defect\)/);
  assert.match(md, /\| Produced by \| `KVQUAL_FUZZ_PLANT=1 npm run qualify -- --features /, 'the command line names the test double');
});

test('undefined and skipped steps, untagged scenarios, unknown tags and uncovered requirements are listed, never passed', () => {
  assert.equal(broken.status, 1, broken.output);
  const md = broken.markdown;
  assert.match(md, /\| Scenarios \| 2 of 3 scenarios passed \(1 undefined\) \| ❌ \|/);
  // Its two scenarios that passed replay an empty stream: no planted fault fails them.
  assert.match(md, /\| Planted faults \| 2 passed scenarios run again under \d+ planted simulator faults in turn: 2 passed under every fault \(checked nothing\): "a scenario without a requirement tag", "a tag naming a requirement nobody registered" \| ❌ \|/);
  assert.match(md, /- \*\*undefined\*\*: \[a step nobody defined\]/);
  assert.match(md, /\| When the router replays the evnet stream \| undefined; did you mean: `the router replays the event streams` · `[^`]+` · `[^`]+` \|/);
  assert.match(md, /\*\*When the router replays the evnet stream — undefined\. Did you mean:\*\*\n\n- `the router replays the event streams`\n- `[^`]+`\n- `[^`]+`\n/);
  assert.match(broken.output, /No step matches "the router replays the evnet stream"\. Did you mean(?: \(this scenario is router-level: steps that fit it first\))?:\n\s+- the router replays the event streams {3}\(router-level\)\n/, 'the console says it too, the suggestions in words first');
  assert.match(broken.output, /in docs\/steps\.md\.\n\s*\n\s*For developers, a new step definition would start as:\n\s*When\('the router replays the evnet stream', function \(\) \{/, "and cucumber's snippet below, for developers");
  assert.match(md, /\| Then the replay completes without a stream error \| skipped \|/);
  assert.match(md, /### Scenarios without a requirement tag\n\n- \[a scenario without a requirement tag\]/);
  assert.match(md, /- @AISIM-4242 on \[a tag naming a requirement nobody registered\]/);
  assert.match(md, /### Requirements without a scenario\n\n- \*\*LAG-2\*\*/);
});

/** The first scenario of every feature file of the real suite: every folder, every kind of simulation. */
function firstScenarioOfEachFeature(): { uri: string; name: string }[] {
  return featureFiles(path.join(ROOT, 'features'), ROOT).map((uri) => {
    const [first] = scenariosOf(uri, fs.readFileSync(path.join(ROOT, uri), 'utf8'));
    return { uri, name: first.name };
  });
}

test('one scenario perturbed in every feature file of every folder: NOT QUALIFIED, each one named', async () => {
  const chosen = firstScenarioOfEachFeature();
  for (const folder of ['router', 'engine', 'agentic']) assert.ok(chosen.some((c) => c.uri.startsWith(`features/${folder}/`)), `a scenario of features/${folder}`);
  const run = await qualify('features', 'perturbed-suite', { KVQUAL_PERTURB: chosen.map((c) => c.name).join('|') });
  assert.equal(run.status, 1, run.output.slice(-3000));
  assert.match(run.markdown, /\*\*NOT QUALIFIED\*\*/);
  const determinism = /\| Determinism \| (.*) \| ❌ \|/.exec(run.markdown);
  assert.ok(determinism, 'the determinism gate failed');
  const named = determinism[1].replace(/\\(.)/g, '$1'); // Markdown escapes removed
  for (const { name } of chosen) assert.ok(named.includes(`"${name}"`), `the determinism gate names "${name}": ${named.slice(0, 400)}`);
  const testDouble = run.markdown.split('\n').find((line) => line.startsWith('| Test double |'))?.replace(/\\(.)/g, '$1');
  assert.match(testDouble ?? '', /KVQUAL_PERTURB=".*" perturbed \d+ scenarios on purpose in the second run; the determinism check caught every one: this run is not a sign-off \| ❌ \|$/);
});

test('--baseline on two real runs whose suites differ: scenarios added, removed, renamed, digests and measured values changed', async () => {
  const suiteDir = path.join(scratch, 'evolving', 'features');
  fs.mkdirSync(suiteDir, { recursive: true });
  const feature = path.join(suiteDir, 'hostile.feature');
  fs.writeFileSync(feature, fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'signoff', 'features', 'hostile.feature'), 'utf8'));
  // No generated workloads: the comparison reads the scenarios only.
  const args = (out: string, extra: string[] = []) => ['--features', suiteDir, '--requirements', 'test/fixtures/signoff/requirements.yaml', '--out', path.join(scratch, out), '--campaign', out, '--no-coverage', '--fuzz-runs', '0', ...extra];
  const before = await qualify('signoff', 'evolving-1', {}, args('evolving-1'));
  assert.equal(before.status, NARROWED_EXIT_STATUS, before.output);
  const baselineFile = path.join(before.dir, 'signoff.json');
  const baseline = parseSignoffJson(fs.readFileSync(baselineFile, 'utf8'), 'the first run');
  assert.equal(baseline.verdict, NARROWED_VERDICT);
  assert.equal(baseline.scenarios.length, 3);

  // The suite evolves: one scenario renamed, one changed (a shorter prefix), one removed, one added.
  const text = fs.readFileSync(feature, 'utf8');
  const changed = text
    .replace('Scenario: an arrival at 14.999 ms does not see the store', 'Scenario: an arrival just before 15 ms does not see the store')
    .replace('Given the prefix "<img src=x onerror=alert(2)>" is 16 tokens long', 'Given the prefix "<img src=x onerror=alert(2)>" is 8 tokens long')
    .replace('Then the router counted 4 host blocks on worker 1 for it', 'Then the router counted 2 host blocks on worker 1 for it')
    .replace(/\n  Scenario: <script>[\s\S]*?(?=\n  Scenario:)/, '\n')
    .concat('\n  Scenario: an arrival at 50 ms sees the store\n    When a request starting with "system prompt" arrives at 50 ms\n    Then it is placed on worker 1, which holds it in G2\n');
  assert.notEqual(changed, text);
  fs.writeFileSync(feature, changed);
  const after = await qualify('signoff', 'evolving-2', {}, args('evolving-2', ['--baseline', baselineFile]));
  assert.equal(after.status, NARROWED_EXIT_STATUS, after.output);
  const md = after.markdown.replace(/\\(.)/g, '$1');
  assert.match(md, /## Since the baseline\n\nCompared with the sign-off of .* \(evolving-1, commit `[0-9a-f]{40}|unknown.*`, PASSED — NOT A RELEASE SIGN-OFF\): 1 scenario added, 1 scenario removed, 1 scenario renamed, \d+ digests? changed/);
  assert.match(md, /### Scenarios added\n\n- an arrival at 50 ms sees the store \(`.*hostile\.feature:\d+`\): passed/);
  assert.match(md, /### Scenarios removed\n\n- <script>alert\(1\)<\/script> an arrival at 15 ms sees the store \(`.*hostile\.feature:\d+`\), was passed/);
  assert.match(md, /### Scenarios renamed\n\n- `.*hostile\.feature:\d+`: "an arrival at 14\.999 ms does not see the store" → "an arrival just before 15 ms does not see the store"/);
  assert.match(md, /### Digests changed\n\n(- .*\n)*- a prefix named <img src=x onerror=alert\(2\)> is only text: `sha256:[0-9a-f]{12}…` → `sha256:[0-9a-f]{12}…`/);
  assert.match(md, /### Measured values changed\n\n- a prefix named <img src=x onerror=alert\(2\)> is only text: host blocks counted on worker 1 = 4 blocks → host blocks counted on worker 1 = 2 blocks\n/);
  assert.match(md, /## Needs attention\n\n(- .*\n)*- Since the baseline \(/, 'a first-screen line');
  const json = parseSignoffJson(fs.readFileSync(path.join(after.dir, 'signoff.json'), 'utf8'), 'the second run');
  assert.deepEqual([json.baseline!.added.length, json.baseline!.removed.length, json.baseline!.renamed.length], [1, 1, 1]);
  assert.ok(json.scenarios.filter((sc) => sc.changed).length >= 2, 'the added and changed scenarios are marked changed');

  const bad = path.join(scratch, 'not-a-signoff.json');
  fs.writeFileSync(bad, '{"format":"something else"}');
  const refused = await qualify('signoff', 'evolving-2', {}, args('evolving-2', ['--baseline', bad]));
  assert.equal(refused.status, 2);
  assert.match(refused.output.trim(), /^qualify: --baseline .*not-a-signoff\.json: not a kvqual-signoff\/1 sign-off \(format "something else"\)$/);
});

test('a test that fails only in the compiled coverage run fails the verdict, named with its file on the console and under Gaps; the compiled second run carries the test double', async () => {
  const dir = path.join(scratch, 'compiled');
  const args = fixtureArgs('signoff', dir).filter((a) => a !== '--no-coverage');
  // With coverage on, run 2 is the suite on the compiled JavaScript: the test double perturbs it there, and the proof must still catch it.
  const run = await qualify('signoff', 'compiled', { KVQUAL_COVERAGE_UNITS: 'build/test/fixtures/compiled', KVQUAL_PERTURB: '14.999 ms' }, args);
  assert.equal(run.status, 1, run.output.slice(-3000));
  assert.match(run.markdown, /\| Coverage run \| on the compiled JavaScript, 1 unit test failed: "this fixture test passes from TypeScript and fails when compiled" \| ❌ \|/);
  assert.match(run.markdown, /### Failures of the compiled coverage run\n\n- unit test "this fixture test passes from TypeScript and fails when compiled" \(`build\/test\/fixtures\/compiled\/compiled-only\.test\.js:\d+:\d+`\): ran from the compiled/);
  assert.match(run.output, /FAIL {2}Coverage run: on the compiled JavaScript, 1 unit test failed/);
  assert.match(run.output, /✗ unit test "this fixture test passes from TypeScript and fails when compiled" \(build\/test\/fixtures\/compiled\/compiled-only\.test\.js:\d+:\d+\)/);
  assert.match(run.markdown, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/, 'only the compiled run failed');
  assert.match(run.markdown, /\| Determinism \| 1 scenario differed between the two runs: "an arrival at 14\.999 ms does not see the store"; order independence not proven \(no --isolation\) \| ❌ \|/);
  assert.match(run.output, /run 2 of 2: the same suite again in a shuffled order \(--order random:\d+\) on the compiled JavaScript under c8/);
});

/** What a reader of the output folder sees: which run each name resolves to, and the campaign of its sign-off. */
function publishedSet(dir: string): { runs: Set<string>; campaign: string | null; missing: string[] } {
  const names = ['signoff.md', 'signoff.html', 'signoff-assets', 'cucumber.html', 'junit.xml', 'messages.ndjson', 'messages-rerun.ndjson'];
  const runs = new Set<string>();
  const missing: string[] = [];
  for (const name of names) {
    const where = path.join(dir, name);
    if (!fs.existsSync(where)) missing.push(name);
    else runs.add(path.dirname(fs.realpathSync(where)));
  }
  const md = path.join(dir, 'signoff.md');
  const campaign = fs.existsSync(md) ? (/\| Campaign \| (.*) \|/.exec(fs.readFileSync(md, 'utf8'))?.[1] ?? null) : null;
  return { runs, campaign, missing };
}

test('a run killed at any moment leaves the old complete set or the new one, and the next run clears what it left', async () => {
  const dir = path.join(scratch, 'killed');
  // The old set, and below the run that clears what the kills left, need no generated workloads (the killed runs do: a phase of theirs is where one is killed).
  const first = await qualify('signoff', 'killed', {}, fixtureArgs('signoff', dir, 'old campaign'));
  assert.equal(first.status, NARROWED_EXIT_STATUS, first.output);
  // Kill the second run as its runs start, as the generated workloads end, and as it publishes
  // (without coverage, with generated workloads: run 1, run 2 and the workloads at once, the planted faults after run 1, then the sign-off).
  for (const when of ['── [1/5]', '[3/5] done', '── [5/5]']) {
    const killed = await qualify('signoff', 'killed', {}, fixtureArgs('signoff', dir, 'new campaign', 50), { onSpawn: (child) => {
      let seen = '';
      child.stdout!.on('data', (chunk) => {
        seen += chunk;
        if (seen.includes(when)) child.kill('SIGKILL');
      });
    } });
    assert.equal(killed.status, null, `the run was killed at ${when}, not left to finish: ${killed.output.slice(-500)}`);
    const set = publishedSet(dir);
    assert.deepEqual(set.missing, [], `after a kill at ${when}, every name of the set is there`);
    assert.equal(set.runs.size, 1, `after a kill at ${when}, every name comes from one run`);
    assert.ok(set.campaign === 'old campaign' || set.campaign === 'new campaign', `after a kill at ${when}: ${set.campaign}`);
  }
  const last = await qualify('signoff', 'killed', {}, fixtureArgs('signoff', dir, 'new campaign'));
  assert.equal(last.status, NARROWED_EXIT_STATUS, last.output);
  assert.equal(publishedSet(dir).campaign, 'new campaign');
  assert.equal(fs.readdirSync(path.join(dir, '.signoff-runs')).length, 1, 'the runs the kills left are removed');
  assert.deepEqual(fs.readdirSync(dir).filter((name) => name.startsWith('.')).sort(), ['.signoff-current', '.signoff-runs']);
});

test('usage and registry errors print one line, exit 2, and leave the last sign-off as it was', async () => {
  const before = publishedSet(clean.dir);
  const markdown = fs.readFileSync(path.join(clean.dir, 'signoff.md'), 'utf8');
  const badRegistry = path.join(scratch, 'bad-requirements.yaml');
  fs.writeFileSync(badRegistry, 'requirements:\n  - { id: lower-case, title: x, source: y, owner: z }\n');
  const base = fixtureArgs('signoff', clean.dir);
  // A features folder with a link back to itself: cucumber's glob follows it and runs every scenario twice.
  const looped = path.join(scratch, 'looped-features');
  fs.mkdirSync(path.join(looped, 'inner'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'features', 'config', 'virtual_time.feature'), path.join(looped, 'inner', 'virtual_time.feature'));
  fs.symlinkSync('..', path.join(looped, 'inner', 'again'));
  // A feature file under a dot-named folder: cucumber's glob passes over it, so it would be left out without a word.
  const hidden = path.join(scratch, 'hidden-features');
  fs.mkdirSync(path.join(hidden, '.wip'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'features', 'config', 'virtual_time.feature'), path.join(hidden, 'virtual_time.feature'));
  fs.copyFileSync(path.join(ROOT, 'features', 'config', 'virtual_time.feature'), path.join(hidden, '.wip', 'failing.feature'));
  const cases: [string[], RegExp][] = [
    [[...base, '--requirements', path.join(scratch, 'no-such.yaml')], /^qualify: --requirements .*no-such\.yaml: no such file$/],
    [[...base, '--requirements', badRegistry], /^qualify: .*bad-requirements\.yaml: invalid requirement registry: requirements\.0\.id: an id looks like AISIM-1893 or LAG-1$/],
    [[...base, '--frobnicate'], /^qualify: unknown option "--frobnicate" \(options: .*\)$/],
    [[...base, '--features', 'no/such/folder'], /^qualify: --features no\/such\/folder: no such folder$/],
    [[...base, '--features', 'test/fixtures/signoff/feat[ue]res'], /^qualify: --features test\/fixtures\/signoff\/feat\[ue\]res: "\[" is a wildcard in cucumber's file patterns, which would run the scenarios of other folders or none: rename the folder$/],
    [[...base, '--features', looped], /^qualify: --features .*looped-features: the folder .*looped-features\/inner\/again is .*looped-features again \(through a symbolic link\): its scenarios would run twice; remove the link$/],
    [[...base, '--features', hidden], /^qualify: --features .*hidden-features: .*hidden-features\/\.wip\/failing\.feature is under \.wip, a name starting with "\." that cucumber's file patterns pass over: its scenarios would not run; rename it$/],
    [[...base, '--baseline', path.join(scratch, 'no-such.json')], /^qualify: --baseline .*: no such file$/],
    [[...base, '--out'], /^qualify: --out needs a value/],
  ];
  // Two cases as real processes (the exit status and the one line); the others through the same checks in this process.
  for (const [index, [args, expected]] of cases.entries()) {
    if (index < 2) {
      const run = await qualify('signoff', 'clean', {}, args, { process: true });
      assert.equal(run.status, 2, `${args.slice(-2).join(' ')}: ${run.output}`);
      assert.equal(run.output.trim().split('\n').length, 1, `one line: ${run.output}`);
      assert.match(run.output.trim(), expected);
    } else {
      assert.throws(
        () => prepare(parseQualifyArgs(args), ROOT, {}),
        (error: Error) => error instanceof UsageError && expected.test(`qualify: ${error.message}`) && !error.message.includes('\n'),
        args.slice(-2).join(' '),
      );
    }
    assert.deepEqual(publishedSet(clean.dir), before, 'the published set is untouched');
    assert.equal(fs.readFileSync(path.join(clean.dir, 'signoff.md'), 'utf8'), markdown);
  }
  assert.throws(
    () => prepare(parseQualifyArgs(base), ROOT, { KVQUAL_FUZZ_PLANT: 'yes' }),
    (error: Error) => error instanceof UsageError && /^KVQUAL_FUZZ_PLANT="yes": expected 1/.test(error.message),
  );
  assert.deepEqual(publishedSet(clean.dir), before, 'the published set is untouched');
});

const noChromium = !fs.existsSync(CHROMIUM);

/** One Chromium for every browser test (a launch costs about half a second of each); each test gets a fresh context. */
let browser: Promise<import('playwright-core').Browser> | null = null;

async function withBrowser(run: (context: import('playwright-core').BrowserContext) => Promise<void>, options: { javaScriptEnabled?: boolean } = {}): Promise<void> {
  // Loaded lazily so that the rest of this file runs where playwright-core cannot start a browser.
  browser ??= import('playwright-core').then(({ chromium }) =>
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    }),
  );
  const context = await (await browser).newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: options.javaScriptEnabled ?? true });
  try {
    await run(context);
  } finally {
    await context.close();
  }
}

after(async () => {
  if (browser) await (await browser).close();
});

const SCREEN = 800;
const browserTest = { skip: noChromium ? 'skipped: chromium not installed' : false };

test('signoff.html opens from disk in Chromium: verdict, matrix, figures, hostile names as text', browserTest, async () => {
  await withBrowser(async (context) => {
    const page = await context.newPage();
    const dialogs: string[] = [];
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => errors.push(`console: ${message.text()}`));
    page.on('request', (request) => requests.push(request.url()));
    const url = `file://${fs.realpathSync(path.join(clean.dir, 'signoff.html'))}`;
    await page.goto(url, { waitUntil: 'load' });

    assert.equal((await page.locator('#verdict .word').textContent())?.trim(), NARROWED_VERDICT);
    // Every scenario passed: the matrix is folded under a line that says so, and opens with a click.
    const matrix = page.locator('#traceability-matrix');
    assert.equal(await matrix.isVisible(), false, 'the matrix of a passing suite is folded');
    assert.match((await page.locator('#matrix-fold > summary').textContent())!, /\(3 scenarios, all passed: folded, as the filters, a search and printing open it\)\.$/);
    await page.locator('#matrix-fold > summary').click();
    assert.ok(await matrix.isVisible(), 'the traceability matrix is visible once opened');
    assert.equal(await matrix.locator('tbody tr').count(), 3, 'one row per scenario');
    await page.locator('details.feature > summary').first().click();
    await page.locator('details.scenario > summary').first().click();
    const figures = page.locator('figure.timeline svg');
    assert.ok((await figures.count()) >= 1, 'at least one timeline image');
    const box = await figures.first().boundingBox();
    assert.ok(box !== null && box.width > 300 && box.height > 200, `the timeline has a size (${JSON.stringify(box)})`);

    const headings = await page.locator('details.scenario h4').allTextContents();
    assert.ok(headings.some((text) => text.includes(HOSTILE)), `the hostile name is shown as text: ${JSON.stringify(headings)}`);
    assert.ok((await matrix.textContent())!.includes(HOSTILE), 'and as text in the matrix');
    assert.ok((await page.locator('body').textContent())!.includes('a prefix named <img src=x onerror=alert(2)> is only text'));
    assert.equal(await page.locator('main img').count(), 0, 'no injected image element');
    assert.deepEqual(dialogs, [], 'no injected script ran');
    assert.deepEqual(errors, []);
    assert.deepEqual(requests.filter((r) => r !== url), [], 'the page loads nothing besides itself');
  });
});

test('the first screen holds verdict, gates, what needs attention, what was qualified and the approval block', browserTest, async () => {
  await withBrowser(async (context) => {
    const page = await context.newPage();
    await page.goto(`file://${fs.realpathSync(path.join(broken.dir, 'signoff.html'))}`, { waitUntil: 'load' });
    for (const selector of ['#verdict', '#gates', '#attention', '#qualified', '#approval']) {
      const box = await page.locator(selector).boundingBox();
      assert.ok(box !== null && box.y + box.height <= SCREEN, `${selector} is on the first screen (${JSON.stringify(box)})`);
    }
    const attention = await page.locator('ul.attention').textContent();
    assert.match(attention!, /Scenarios: 2 of 3 scenarios passed \(1 undefined\)/);
    assert.match(attention!, /Requirement traceability:/);
  });
});

test('folding, filtering by result and by tag, and text search; the CSP allows only the page\'s own script', browserTest, async () => {
  await withBrowser(async (context) => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => errors.push(`console: ${message.text()}`));
    await page.goto(`file://${fs.realpathSync(path.join(broken.dir, 'signoff.html'))}`, { waitUntil: 'load' });
    // Folding: the undefined scenario is open, the passing ones folded.
    const cards = page.locator('details.scenario');
    assert.equal(await cards.count(), 3);
    assert.deepEqual(await page.locator('details.scenario[open] h4').allTextContents(), ['a step nobody defined']);
    const foldedId = await page.locator('details.scenario:not([open])').first().getAttribute('id');
    const folded = page.locator(`details.scenario[id="${foldedId}"]`);
    assert.equal(await folded.locator('ol.steps').isVisible(), false, 'a folded card hides its steps');
    await folded.locator('summary').click();
    assert.equal(await folded.locator('ol.steps').isVisible(), true, 'and shows them when opened');

    // The script runs under the CSP: the filter bar is shown.
    assert.ok(await page.locator('#filters').isVisible(), 'the filter bar is shown');
    const visibleCards = () => page.locator('details.scenario:visible h4').allTextContents();
    await page.selectOption('#filter-result', 'not-passed');
    assert.deepEqual(await visibleCards(), ['a step nobody defined']);
    assert.equal(await page.locator('#matrix-fold[open]').count(), 1, 'a suite that did not pass has its matrix open');
    assert.equal(await page.locator('#traceability-matrix tbody tr:visible').count(), 1, 'the matrix filters too');
    await page.selectOption('#filter-result', 'all');
    await page.selectOption('#filter-tag', '@AISIM-4242');
    assert.deepEqual(await visibleCards(), ['a tag naming a requirement nobody registered']);
    await page.selectOption('#filter-tag', '');
    await page.fill('#filter-text', 'without a requirement');
    assert.deepEqual(await visibleCards(), ['a scenario without a requirement tag']);
    assert.match((await page.locator('#filter-shown').textContent())!, /^1 of 3 scenarios shown$/);
    await page.fill('#filter-text', '');
    assert.equal((await visibleCards()).length, 3);

    // The CSP names exactly the one inline script, by its hash.
    const scripts = await page.locator('script').allTextContents();
    assert.equal(scripts.length, 1);
    const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    const hash = createHash('sha256').update(scripts[0], 'utf8').digest('base64');
    const styles = await page.locator('style').allTextContents();
    assert.equal(styles.length, 1, 'one style sheet: the page\'s own');
    const styleHash = createHash('sha256').update(styles[0], 'utf8').digest('base64');
    assert.equal(csp, `default-src 'none'; style-src 'sha256-${styleHash}'; img-src data:; script-src 'sha256-${hash}'`, 'no inline style but the page\'s own sheet applies');
    assert.equal(await page.locator('[style]').count(), 0, 'no style attribute');
    assert.deepEqual(errors, [], 'no CSP violation or script error');

    // Printing shows everything, unfolded.
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('details.scenario:not([open]) ol.steps').first().isVisible(), true, 'print shows folded cards');
    assert.equal(await page.locator('#filters').isVisible(), false, 'and no filter bar');
  });
});

test('without scripts the page still reads completely, with no filter bar', browserTest, async () => {
  await withBrowser(
    async (context) => {
      const page = await context.newPage();
      await page.goto(`file://${fs.realpathSync(path.join(broken.dir, 'signoff.html'))}`, { waitUntil: 'load' });
      assert.equal(await page.locator('#filters').isVisible(), false);
      assert.equal(await page.locator('#traceability-matrix tbody tr:visible').count(), 3);
      assert.equal(await page.locator('details.scenario:visible').count(), 3);
    },
    { javaScriptEnabled: false },
  );
});

test('the sign-off of the whole passing suite, folded, is under 15 screens at 1280 px; a search opens its matrix', browserTest, async () => {
  assert.equal(suite.status, NARROWED_EXIT_STATUS, suite.output.slice(-2000));
  await withBrowser(async (context) => {
    const page = await context.newPage();
    await page.goto(`file://${fs.realpathSync(path.join(suite.dir, 'signoff.html'))}`, { waitUntil: 'load' });
    assert.equal(await page.locator('details.scenario[open]').count(), 0, 'every card of a passing suite is folded');
    assert.equal(await page.locator('#matrix-fold[open]').count(), 0, 'and so is its traceability matrix');
    const height = await page.evaluate('document.documentElement.scrollHeight') as number;
    assert.ok(height < 15 * SCREEN, `${height} px = ${(height / SCREEN).toFixed(1)} screens of ${SCREEN} px`);
    await page.fill('#filter-text', 'hash');
    assert.equal(await page.locator('#matrix-fold[open]').count(), 1, 'a search opens the matrix');
    assert.ok((await page.locator('#traceability-matrix tbody tr:visible').count()) >= 1, 'and shows the rows it found');
  });
});

test('the second run of the whole suite is shuffled (a scenario that leans on the ones before it differs), and its digests are the first run\'s all the same', () => {
  assert.equal(suite.status, NARROWED_EXIT_STATUS, suite.output.slice(-2000));
  assert.match(suite.output, /run 2 of 2: the same suite again in a shuffled order \(--order random:1893\)/);
  const order = (file: string) => {
    const names = new Map<string, string>();
    const started: string[] = [];
    for (const line of fs.readFileSync(path.join(suite.dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const message = JSON.parse(line);
      if (message.testCase) names.set(message.testCase.id, message.testCase.pickleId);
      if (message.pickle) names.set(message.pickle.id, `${message.pickle.uri}:${message.pickle.location.line}`);
      if (message.testCaseStarted) started.push(names.get(names.get(message.testCaseStarted.testCaseId)!)!);
    }
    return started;
  };
  const first = order('messages.ndjson');
  const second = order('messages-rerun.ndjson');
  assert.ok(first.length >= 100, `the whole suite: ${first.length} scenarios`);
  assert.deepEqual([...second].sort(), [...first].sort(), 'the same scenarios');
  assert.notDeepEqual(second, first, 'in another order');
  assert.match(suite.markdown, new RegExp(`Determinism \\| both runs identical for all ${first.length} scenarios`));
});
