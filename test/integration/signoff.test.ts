// End-to-end tests of `npm run qualify` on fixture suites run through cucumber with the real
// steps: a clean run of a fixture suite passes every gate but is not a release sign-off (another
// suite, no coverage run): PASSED — NOT A RELEASE SIGN-OFF, exit 3; the same run twice, once as
// `npm run qualify` makes its suite runs (processes) and once with them in the test's own process
// through cucumber's API, gives the same report apart from the date line, the same verdict, gates and digests; the perturbation test double (in a run with coverage on, whose run 2 on the compiled suite it perturbs) flips the verdict and names the scenario; an
// undefined (misspelt) step gets the three nearest phrases on the console and in the report, and
// with an untagged scenario and an unknown tag is listed and makes it NOT QUALIFIED;
// the real suite's first scenario of every feature file, perturbed, is NOT QUALIFIED naming each
// (its other gates passed); the fuzzer's planted defect (KVQUAL_FUZZ_PLANT=1) fails the
// generated-workloads gate for real; a kill at any phase leaves the old set or the new one (a run
// of its own, stopped at two phases and killed at the third); usage errors delete nothing. In headless
// Chromium, signoff.html renders its matrix and figures and shows a hostile name as text; its
// first screen holds verdict, gates, attention, what was qualified and approval; cards fold,
// filters and search work under a CSP that allows only the page's script and style sheet; it reads without
// scripts; the folded sign-off of the whole passing suite is under 15 screens and prints on at most
// 25 A4 pages (every passing scenario one line), a failed card prints in full; a link into a card or
// to Gaps lands open and clear of the sticky filter bar; the summary chart's words are at least
// 11 px inside it and one failed scenario a bar of at least 8 px. An SLO scenario's card in the
// whole suite's sign-off draws its metric's CDF with the SLO line and the measured value, and
// signoff.md says its claim in one line. The browser tests are skipped without Chromium.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { qualifyInProcess, qualifyOneProcess, qualifyProcess } from '../support/qualify';
import { AstBuilder, GherkinClassicTokenMatcher, Parser } from '@cucumber/gherkin';
import { IdGenerator } from '@cucumber/messages';
import { stringify as yamlText } from 'yaml';
import { featureFiles, scenariosOf } from '../../scripts/lint-requirements';
import { parseRegistry } from '../../src/signoff/requirements';
import { parseSignoffJson } from '../../src/signoff/jsonSchema';
import { parseQualifyArgs, prepare, UsageError } from '../../src/signoff/driver';
import { NARROWED_EXIT_STATUS, NARROWED_VERDICT } from '../../src/signoff/narrowed';
import { anchorsOf, buildSignoff } from '../../src/signoff/model';
import { renderHtml } from '../../src/signoff/html';
import { renderFigure } from '../../src/report/figure';
import { lagEvidence, SCENARIO_KEYS, signoffInputOf } from '../support/signoffInput';

const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = '<script>alert(1)</script> an arrival at 15 ms sees the store';
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-signoff-'));

interface Qualified {
  status: number | null;
  output: string;
  markdown: string;
  html: string;
  /** signoff.json's text. */
  json: string;
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
 * or as a real `node scripts/qualify.ts` process where the process itself is tested (`process`:
 * the clean run's exit status and console, a usage error), or as one process making its suite runs
 * in itself (`oneProcess`, with `onSpawn` to see the child: the kills).
 */
async function qualify(fixture: string, out: string, env: NodeJS.ProcessEnv = {}, args = fixtureArgs(fixture, path.join(scratch, out)), how: { process?: boolean; oneProcess?: boolean; onSpawn?: (child: ChildProcess) => void } = {}): Promise<Qualified> {
  const dir = path.join(scratch, out);
  const run = how.process ? await qualifyProcess(args, env, how.onSpawn) : how.oneProcess ? await qualifyOneProcess(args, env, how.onSpawn) : await qualifyInProcess(args, env);
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '');
  return { status: run.status, output: run.output, markdown: read('signoff.md'), html: read('signoff.html'), json: read('signoff.json'), dir };
}

let clean: Qualified;
let cleanAgain: { markdown: string; html: string; json: string };
let perturbed: Qualified;
let broken: Qualified;
let suite: Qualified;
let planted: Qualified;

before(async () => {
  // Two runs at a time on two cores; the repeat of the clean run writes to the same place. The clean
  // run is `npm run qualify` end to end, a process of its own (its exit status and console) whose
  // suite runs are processes; the others run in this process, their suite runs too (test/support/qualify.ts).
  const withWorkloads = fixtureArgs('signoff', path.join(scratch, 'clean'), 'sign-off fixture', 5);
  // The perturbed run has coverage on: its run 2 is the suite compiled under c8, and the test double perturbs it there (the coverage test reads it too).
  const withCoverage = fixtureArgs('signoff', path.join(scratch, 'perturbed')).filter((arg) => arg !== '--no-coverage');
  [clean, perturbed] = await Promise.all([qualify('signoff', 'clean', {}, withWorkloads, { process: true }), qualify('signoff', 'perturbed', { KVQUAL_PERTURB: '14.999 ms' }, withCoverage)]);
  const first = { markdown: clean.markdown, html: clean.html, json: clean.json };
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
    ["the features of test/fixtures/signoff/features/ ran, not the project's features/", "the requirements of test/fixtures/signoff/requirements.yaml were checked, not the project's requirements.yaml", '--no-coverage', '--fuzz-runs 5', ...reasons.narrowed!.slice(4).map((reason) => reason.split(':')[0])],
  );
  assert.match(clean.output, /^verdict: PASSED — NOT A RELEASE SIGN-OFF\n[\s\S]*not a release sign-off: --no-coverage/m);
  for (const name of ['signoff.md', 'signoff.html', 'cucumber.html', 'junit.xml', 'messages.ndjson']) {
    assert.ok(fs.existsSync(path.join(clean.dir, name)), `${name} is written`);
  }
  const assets = fs.readdirSync(path.join(clean.dir, 'signoff-assets'));
  assert.equal(assets.length, 4, 'three figures and the summary chart');
  for (const asset of assets) assert.ok(clean.markdown.includes(`](signoff-assets/${asset})`), `signoff.md links ${asset}`);
  assert.match(clean.markdown, /host blocks counted on worker 1 = 4 \(the whole 4-block prefix\)/);
  assert.match(clean.markdown, /\| Generated workloads \| 5 generated workloads \(fast-check seed 1893\) kept every invariant.* \| ✅ \|/);
  assert.match(clean.markdown, /r2 placed on worker 1 at 15 ms: 4 host block\(s\), cost 9 vs 10 on worker 0 — host blocks visible to the router since 15 ms \(emitted at 10 ms\)/);
  const hidden = fs.readdirSync(clean.dir).filter((name) => name.startsWith('.'));
  assert.deepEqual(hidden.sort(), ['.signoff-current', '.signoff-runs'], 'no temporary file is left behind');
  assert.equal(fs.readdirSync(path.join(clean.dir, '.signoff-runs')).length, 1, 'only the published run is kept');
});

test('the same run twice, its suite runs as processes and in this process, gives the same report apart from the date line, the same verdict, gates and digests', () => {
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
  const [processes, inProcess] = [clean.json, cleanAgain.json].map((text) => parseSignoffJson(text, 'signoff.json'));
  assert.equal(inProcess.verdict, processes.verdict);
  assert.deepEqual(inProcess.gates, processes.gates);
  const digests = (signoff: typeof processes) => signoff.scenarios.map((s) => [s.key, s.status, s.digest]);
  assert.ok(digests(processes).every(([, , digest]) => typeof digest === 'string' && digest !== ''), 'every scenario has a digest');
  assert.deepEqual(digests(inProcess), digests(processes));
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
  assert.match(planted.output.replace(/\n {6}/g, ' '), /^\[3\/5\] generated workloads \(KVQUAL_FUZZ_PLANT=1: test double active\): 20 cases, seed 1893: case \d+ broke an invariant/m);
  assert.equal(planted.output.split('reused').length - 1, 1, 'the counterexample is printed once, in its gate');
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
  // The console names the undefined step once, with its nearest phrases (cucumber's own report, with its snippet, is in cucumber.html; test/integration/step-misuse.test.ts checks it).
  const said = broken.output.replace(/\n {6}/g, ' ');
  assert.match(said, /✗ scenario "a step nobody defined" \([^)]*\): undefined: When the router replays the evnet stream; did you mean: "the router replays the event streams" · "[^"]+" · "[^"]+"/);
  assert.match(md, /\| Then the replay completes without a stream error \| skipped \|/);
  assert.match(md, /### Scenarios without a requirement tag\n\n- \[a scenario without a requirement tag\]/);
  assert.match(md, /- @AISIM-4242 on \[a tag naming a requirement nobody registered\]/);
  assert.match(md, /### Requirements without a scenario\n\n- \*\*LAG-2\*\*/);
});

/**
 * The real suite cut to the first scenario of every feature file (every folder, every kind of
 * simulation), written under `dir` with the features' own paths below it, and the registry of the
 * requirements those scenarios carry: the scenarios and steps are the suite's own, and the
 * traceability gate has nothing to hold against the cut suite. Each file keeps its header and
 * Background, and its first scenario (all its Examples) up to the tags of the next one.
 */
function firstScenarioSuite(dir: string): { features: string; requirements: string; chosen: { uri: string; name: string }[]; scenarios: number } {
  const features = path.join(dir, 'features');
  const chosen: { uri: string; name: string }[] = [];
  const tags = new Set<string>();
  let scenarios = 0;
  for (const uri of featureFiles(path.join(ROOT, 'features'), ROOT)) {
    const text = fs.readFileSync(path.join(ROOT, uri), 'utf8');
    const [first] = scenariosOf(uri, text);
    const document = new Parser(new AstBuilder(IdGenerator.incrementing()), new GherkinClassicTokenMatcher()).parse(text);
    // Where each scenario and rule starts (its first tag or its keyword), in the file's order.
    const starts: { keyword: number; start: number }[] = [];
    const blocks = (children: readonly { scenario?: { location: { line: number }; tags: readonly { location: { line: number } }[] }; rule?: { location: { line: number }; tags: readonly { location: { line: number } }[]; children: readonly unknown[] } }[]) => {
      for (const child of children) {
        const block = child.scenario ?? child.rule;
        if (block) starts.push({ keyword: block.location.line, start: Math.min(block.location.line, ...block.tags.map((tag) => tag.location.line)) });
        if (child.rule) blocks(child.rule.children as Parameters<typeof blocks>[0]);
      }
    };
    blocks(document.feature!.children);
    // The first scenario is the last block to start at or before its first pickle's line; the file is cut where the next block starts.
    const own = starts.filter((block) => block.keyword <= first.line).sort((a, b) => b.keyword - a.keyword)[0];
    const next = starts.filter((block) => block.start > own.keyword).sort((a, b) => a.start - b.start)[0];
    const lines = text.split('\n');
    const cut = `${lines.slice(0, next === undefined ? lines.length : next.start - 1).join('\n').trimEnd()}\n`;
    fs.mkdirSync(path.dirname(path.join(dir, uri)), { recursive: true });
    fs.writeFileSync(path.join(dir, uri), cut);
    const kept = scenariosOf(uri, cut);
    assert.equal(kept[0].name, first.name, `${uri}: the cut file starts with its first scenario`);
    for (const scenario of kept) for (const tag of scenario.tags) tags.add(tag);
    scenarios += kept.length;
    chosen.push({ uri, name: first.name });
  }
  const registry = parseRegistry(fs.readFileSync(path.join(ROOT, 'requirements.yaml'), 'utf8'));
  const requirements = path.join(dir, 'requirements.yaml');
  fs.writeFileSync(requirements, yamlText({ requirements: registry.requirements.filter((requirement) => tags.has(`@${requirement.id}`)) }));
  return { features, requirements, chosen, scenarios };
}

test('one scenario perturbed in every feature file of every folder: NOT QUALIFIED, each one named, every other gate passed', async () => {
  // The first scenario of each feature file is what is perturbed, and all that runs (the other scenarios would only be found identical).
  const suiteOfFirsts = firstScenarioSuite(path.join(scratch, 'firsts'));
  const { chosen, scenarios } = suiteOfFirsts;
  for (const folder of ['router', 'engine', 'agentic']) assert.ok(chosen.some((c) => c.uri.startsWith(`features/${folder}/`)), `a scenario of features/${folder}`);
  const args = ['--features', suiteOfFirsts.features, '--requirements', suiteOfFirsts.requirements, '--out', path.join(scratch, 'perturbed-suite'), '--campaign', 'perturbed suite', '--no-coverage', '--fuzz-runs', '0'];
  const run = await qualify('features', 'perturbed-suite', { KVQUAL_PERTURB: chosen.map((c) => c.name).join('|') }, args);
  assert.equal(run.status, 1, run.output.slice(-3000));
  assert.match(run.markdown, /\*\*NOT QUALIFIED\*\*/);
  const determinism = /\| Determinism \| (.*) \| ❌ \|/.exec(run.markdown);
  assert.ok(determinism, 'the determinism gate failed');
  const named = determinism[1].replace(/\\(.)/g, '$1'); // Markdown escapes removed
  for (const { name } of chosen) assert.ok(named.includes(`"${name}"`), `the determinism gate names "${name}": ${named.slice(0, 400)}`);
  assert.match(run.markdown, new RegExp(`\\| Scenarios \\| ${scenarios} of ${scenarios} scenarios passed \\| ✅ \\|`), 'the perturbed scenarios still pass: only the digests tell');
  const failedGates = [...run.markdown.matchAll(/^\| ([^|]+) \| .* \| ❌ \|$/gm)].map((m) => m[1]);
  assert.deepEqual(failedGates.filter((gate) => gate !== 'Verdict'), ['Determinism', 'Test double'], 'only the determinism gate (and the test double\'s line) failed');
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

test('with coverage on, run 2 is the suite compiled under c8: it carries the test double, the coverage is what the scenarios exercised, and no unit test runs', () => {
  // The perturbed run (before): with coverage on, run 2 is the suite on the compiled JavaScript; the test double perturbs it there, and the proof must still catch it.
  const run = perturbed;
  assert.equal(run.status, 1, run.output.slice(-3000));
  assert.match(run.markdown, /\| Coverage run \| all 3 scenarios passed again on the compiled JavaScript \| ✅ \|/);
  assert.match(run.markdown, /feature suite once more \(cucumber profile "compiled"\): what the scenarios exercised/);
  assert.match(run.markdown, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/, 'only the compiled run was perturbed');
  assert.match(run.markdown, /\| Determinism \| 1 scenario differed between the two runs: "an arrival at 14\.999 ms does not see the store"; order independence not proven \(no --isolation\) \| ❌ \|/);
  assert.match(run.output, /^\[\d\/\d\] run 2 of 2: the same suite shuffled \(--order random:\d+\), compiled, under c8/m);
  assert.match(run.output, /^\[\d\/\d\] type check \(tsc\): no type error/m);
  assert.match(run.output, /^\[\d\/\d\] coverage report \(c8\): lines [\d.]+%, branches [\d.]+%/m);
  assert.doesNotMatch(run.output, /unit test/);
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
  // The old set: a copy of the clean run's published set (its links are relative), campaign "sign-off fixture". The run below that clears what the
  // kill left needs no generated workloads (the killed run does: a phase of its is where it is caught).
  fs.cpSync(clean.dir, dir, { recursive: true, verbatimSymlinks: true });
  const old = publishedSet(dir);
  assert.deepEqual([old.missing, old.runs.size, old.campaign], [[], 1, 'sign-off fixture'], 'the old set is a complete one');
  assert.ok([...old.runs][0].startsWith(`${fs.realpathSync(dir)}${path.sep}`), 'the old set is the copy, not the clean run\'s folder');
  // The second run is caught as its runs start, as the generated workloads end, and as it publishes
  // (without coverage, with generated workloads: run 1, run 2 and the workloads at once, the planted faults after run 1, then the sign-off;
  // the first line is printed as they start, and each phase's line when it and those before it have ended).
  // A kill (SIGKILL) runs nothing of the process: what it leaves is the folder as it is at that
  // instant. So at the first two moments the run is stopped (SIGSTOP), the folder read as a kill
  // there would leave it, and the run let go on (SIGCONT); at the last it is killed.
  const moments = ['qualify: 5 phases', '[3/5] generated workloads', '[4/5] planted faults'];
  const sets: [string, ReturnType<typeof publishedSet>][] = [];
  const killed = await qualify('signoff', 'killed', {}, fixtureArgs('signoff', dir, 'new campaign', 5), { oneProcess: true, onSpawn: (child) => {
    let seen = '';
    child.stdout!.on('data', (chunk) => {
      seen += chunk;
      while (sets.length < moments.length - 1 && seen.includes(moments[sets.length])) {
        child.kill('SIGSTOP');
        sets.push([moments[sets.length], publishedSet(dir)]);
        child.kill('SIGCONT');
      }
      if (sets.length === moments.length - 1 && seen.includes(moments[sets.length])) child.kill('SIGKILL');
    });
  } });
  assert.equal(killed.status, null, `the run was killed at ${moments[moments.length - 1]}, not left to finish: ${killed.output.slice(-500)}`);
  sets.push([moments[moments.length - 1], publishedSet(dir)]);
  assert.deepEqual(sets.map(([when]) => when), moments, 'the run was caught at every moment');
  for (const [when, set] of sets) {
    assert.deepEqual(set.missing, [], `after a kill at ${when}, every name of the set is there`);
    assert.equal(set.runs.size, 1, `after a kill at ${when}, every name comes from one run`);
    assert.ok(set.campaign === 'sign-off fixture' || set.campaign === 'new campaign', `after a kill at ${when}: ${set.campaign}`);
  }
  const last = await qualify('signoff', 'killed', {}, fixtureArgs('signoff', dir, 'new campaign'));
  assert.equal(last.status, NARROWED_EXIT_STATUS, last.output);
  assert.equal(publishedSet(dir).campaign, 'new campaign');
  assert.equal(fs.readdirSync(path.join(dir, '.signoff-runs')).length, 1, 'the run the kill left is removed');
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
  // The first case as a real process (its exit status and the one line it prints), the second as qualify in this process; the others through the same checks of the arguments.
  for (const [index, [args, expected]] of cases.entries()) {
    if (index < 2) {
      const run = await qualify('signoff', 'clean', {}, args, { process: index === 0 });
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

    // Printing shows the card that did not pass in full, each other one as its line, and no filter bar.
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('details.scenario.bad ol.steps').isVisible(), true, 'print shows the card that did not pass in full');
    assert.equal(await page.locator('details.scenario:not([open]) > summary').first().isVisible(), true, 'a folded card as its line');
    assert.equal(await page.locator('details.scenario:not([open]) ol.steps').first().isVisible(), false, 'and not its steps');
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

/** The pages of a PDF Chromium printed (each page object once). */
function pdfPages(pdf: Buffer): number {
  return (pdf.toString('latin1').match(/\/Type\s*\/Page\b(?!s)/g) ?? []).length;
}

/** A4, as the page's own @page rule asks: what a reader's "Print" gives. */
const printed = (page: import('playwright-core').Page) => page.pdf({ preferCSSPageSize: true, printBackground: true });

test('printed, the sign-off of the whole passing suite is at most 25 A4 pages: the first screen, the requirements, the matrix, and every scenario as one line', browserTest, async (t) => {
  assert.equal(suite.status, NARROWED_EXIT_STATUS, suite.output.slice(-2000));
  await withBrowser(async (context) => {
    const page = await context.newPage();
    await page.goto(`file://${fs.realpathSync(path.join(suite.dir, 'signoff.html'))}`, { waitUntil: 'load' });
    const pages = pdfPages(await printed(page));
    t.diagnostic(`the whole passing suite prints on ${pages} A4 pages`);
    assert.ok(pages >= 5 && pages <= 25, `${pages} pages`);
    await page.emulateMedia({ media: 'print' });
    const scenarios = await page.locator('details.scenario').count();
    assert.ok(scenarios >= 100, `${scenarios} scenarios`);
    assert.equal(await page.locator('details.scenario > summary:visible').count(), scenarios, 'every scenario is a line');
    assert.equal(await page.locator('details.scenario ol.steps:visible').count(), 0, 'and none of a passing suite prints its steps');
    assert.equal(await page.locator('#traceability-matrix tbody tr:visible').count(), scenarios, 'the matrix prints whole, folded on screen as it is');
    assert.equal(await page.locator('details.req > summary:visible').count(), await page.locator('details.req').count(), 'each requirement prints its line');
    for (const selector of ['#verdict', '#gates', '#qualified', '#not-a-sign-off', 'figure.chart svg']) assert.ok(await page.locator(selector).isVisible(), `${selector} prints`);
  });
});

test('printed, a sign-off with one failed scenario shows that card in full, its failure and figure included, and the passing one as its line', browserTest, async () => {
  const anchors = anchorsOf(SCENARIO_KEYS.map((key) => ({ uri: key.split(':')[0], line: Number(key.split(':')[1]) })));
  const figures = new Map<string, string>();
  for (const key of SCENARIO_KEYS) figures.set(key, (await renderFigure(lagEvidence(), anchors.get(key)!))!);
  const file = path.join(scratch, 'one-failed.html');
  fs.writeFileSync(file, renderHtml(buildSignoff(signoffInputOf(undefined, figures))));
  await withBrowser(async (context) => {
    const page = await context.newPage();
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    await page.emulateMedia({ media: 'print' });
    const failed = page.locator('details.scenario.bad');
    const passed = page.locator('details.scenario.ok');
    assert.equal(await failed.count(), 1);
    for (const part of ['ol.steps', 'table.facts', 'pre', 'figure.timeline svg']) assert.ok(await failed.locator(part).first().isVisible(), `the failed card prints its ${part}`);
    assert.match((await failed.locator('pre').first().textContent())!, /expected 1, got 2/);
    assert.ok(await passed.locator('summary').isVisible(), 'the passing card prints its line');
    assert.equal(await passed.locator('ol.steps').isVisible(), false, 'and not its steps');
    assert.ok(pdfPages(await printed(page)) <= 4, 'a sign-off of two scenarios prints on a few pages');
  });
});

/** Where the element `id` of a page is, where its sticky filter bar ends, and whether it is open (when it is a fold). */
async function placeOf(page: import('playwright-core').Page, id: string): Promise<{ open: boolean | null; top: number; barBottom: number; screen: number }> {
  return (await page.evaluate(`(() => {
    const target = document.getElementById(${JSON.stringify(id)});
    return { open: target.tagName === 'DETAILS' ? target.open : null, top: target.getBoundingClientRect().top, barBottom: document.getElementById('filters').getBoundingClientRect().bottom, screen: innerHeight };
  })()`)) as { open: boolean | null; top: number; barBottom: number; screen: number };
}

/** The card or section `id` is open (if a fold) and shown below the sticky filter bar, on the screen. */
async function assertRevealed(page: import('playwright-core').Page, id: string, how: string): Promise<void> {
  // The page moves on the hashchange event, after the click returns: wait for it (the assertions below say what was wrong if it never does).
  const quoted = JSON.stringify(id);
  await page
    .waitForFunction(`document.getElementById(${quoted}).getBoundingClientRect().top >= document.getElementById('filters').getBoundingClientRect().bottom && document.getElementById(${quoted}).getBoundingClientRect().top < innerHeight - 40`, undefined, { timeout: 2000 })
    .catch(() => undefined);
  const place = await placeOf(page, id);
  assert.notEqual(place.open, false, `${how}: #${id} is open`);
  assert.ok(place.top >= place.barBottom && place.top < place.screen - 40, `${how}: #${id} starts below the filter bar, on the screen: ${JSON.stringify(place)}`);
}

test('a link into a scenario opens its card clear of the sticky filter bar: from the address, the requirement view, the matrix and Gaps; a link to Gaps lands clear of it too', browserTest, async () => {
  await withBrowser(async (context) => {
    const page = await context.newPage();
    const url = `file://${fs.realpathSync(path.join(suite.dir, 'signoff.html'))}`;
    const anchors = await page.goto(url, { waitUntil: 'load' }).then(() => page.locator('details.scenario').evaluateAll((cards) => cards.map((card) => card.id)));
    const middle = anchors[Math.floor(anchors.length / 2)];
    // An address with a hash, opened afresh.
    await page.goto(`${url}#${middle}`, { waitUntil: 'load' });
    await assertRevealed(page, middle, 'the address');
    // A link of the requirement view (its requirement opened first, as a reader does).
    const fromRequirement = anchors[Math.floor(anchors.length / 3)];
    const requirement = page.locator(`details.req:has(a[href="#${fromRequirement}"])`).first();
    await requirement.locator('summary').click();
    await requirement.locator(`a[href="#${fromRequirement}"]`).click();
    await assertRevealed(page, fromRequirement, 'the requirement view');
    // A link of the matrix.
    const fromMatrix = anchors[anchors.length - 20];
    await page.locator('#matrix-fold > summary').click();
    await page.locator(`#traceability-matrix a[href="#${fromMatrix}"]`).click();
    await assertRevealed(page, fromMatrix, 'the matrix');
    // The same link again, once the reader has scrolled away: the address does not change, the card is shown all the same.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.locator(`#traceability-matrix a[href="#${fromMatrix}"]`).click();
    await assertRevealed(page, fromMatrix, 'the same link again');
    // The table of contents to Gaps.
    await page.locator('nav.toc a[href="#gaps"]').click();
    await assertRevealed(page, 'gaps', 'the contents');

    // Gaps of a failing suite: its list links to a folded card; Needs attention to Gaps.
    await page.goto(`file://${fs.realpathSync(path.join(broken.dir, 'signoff.html'))}`, { waitUntil: 'load' });
    const untraced = await page.locator('#gaps ~ ul a[href^="#sc-"]').first().getAttribute('href');
    assert.ok(untraced !== null);
    assert.equal(await page.locator(`details.scenario[id="${untraced.slice(1)}"][open]`).count(), 0, 'the card is folded at first');
    await page.locator(`#gaps ~ ul a[href="${untraced}"]`).first().click();
    await assertRevealed(page, untraced.slice(1), 'Gaps');
    await page.evaluate('window.scrollTo(0, 0)');
    await page.locator('ul.attention a[href="#gaps"]').first().click();
    await assertRevealed(page, 'gaps', 'Needs attention');
  });
});

test('the summary chart at 1280 px: every word at least 11 px and inside the drawing with the legend, one failed scenario a bar of at least 8 × 8 px', browserTest, async () => {
  await withBrowser(async (context) => {
    const page = await context.newPage();
    await page.goto(`file://${fs.realpathSync(path.join(broken.dir, 'signoff.html'))}`, { waitUntil: 'load' });
    const chart = (await page.evaluate(`(() => {
      const svg = document.querySelector('figure.chart svg');
      const frame = svg.getBoundingClientRect();
      const scale = frame.width / svg.viewBox.baseVal.width;
      const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height }; };
      return {
        frame: box(svg),
        texts: [...svg.querySelectorAll('text')].map((t) => ({ words: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, ...box(t) })),
        failed: [...svg.querySelectorAll('rect')].filter((r) => r.getAttribute('fill') === '#e03131' && r.querySelector('title') !== null).map((r) => ({ title: r.querySelector('title').textContent, ...box(r) })),
      };
    })()`)) as { frame: { left: number; right: number; top: number; bottom: number }; texts: { words: string; px: number; left: number; right: number; top: number; bottom: number }[]; failed: { title: string; width: number; height: number }[] };
    assert.ok(chart.texts.some((t) => t.words === 'no scenario'), 'the legend is drawn');
    for (const text of chart.texts) {
      assert.ok(text.px >= 11, `"${text.words}" at ${text.px.toFixed(1)} px`);
      assert.ok(text.left >= chart.frame.left - 0.5 && text.right <= chart.frame.right + 0.5 && text.top >= chart.frame.top - 0.5 && text.bottom <= chart.frame.bottom + 0.5, `"${text.words}" inside the chart: ${JSON.stringify({ text, frame: chart.frame })}`);
    }
    assert.deepEqual(chart.failed.map((bar) => bar.title), ['AISIM-1893: 1 passed, 1 not passed']);
    for (const bar of chart.failed) assert.ok(bar.width >= 8 && bar.height >= 8, `one failed scenario: ${bar.width} × ${bar.height} px`);
  });
});

test('piped, the console is plain: no line over 100 characters, no escape or carriage return, a phase line each in number order, each failure once', () => {
  for (const run of [clean, perturbed, broken, suite, planted]) {
    for (const line of run.output.split('\n')) assert.ok(line.length <= 100, `${line.length} characters: ${line}`);
    assert.doesNotMatch(run.output, /[\x1b\r]/, 'no escape sequence or carriage return');
    const numbers = [...run.output.matchAll(/^\[(\d+)\/(\d+)\] /gm)].map((m) => Number(m[1]));
    assert.deepEqual(numbers, numbers.map((_, i) => i + 1), `phases in number order, each once: ${numbers.join(' ')}`);
  }
  // The broken fixture's undefined step fails one scenario: named once on the console, not by cucumber's own report.
  const failed = [...broken.output.matchAll(/^ {2}✗ scenario "([^"]+)"/gm)].map((m) => m[1]);
  assert.ok(failed.length > 0, broken.output);
  assert.equal(new Set(failed).size, failed.length, 'each failure once');
  assert.doesNotMatch(broken.output, /^Failures:$/m, "cucumber's failure report is not passed through");
});

test('the second run of the whole suite is shuffled (a scenario that leans on the ones before it differs), and its digests are the first run\'s all the same', () => {
  assert.equal(suite.status, NARROWED_EXIT_STATUS, suite.output.slice(-2000));
  assert.match(suite.output, /^\[2\/4\] run 2 of 2: the same suite shuffled \(--order random:1893\) through tsx/m);
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

test("an SLO scenario's card in the whole suite's sign-off shows the metric's CDF with the SLO line and the measured value, and says the claim in one line", () => {
  assert.equal(suite.status, NARROWED_EXIT_STATUS, suite.output.slice(-2000));
  const cards = [...suite.html.matchAll(/<details class="scenario[^"]*" id="(sc-features-slo-[^"]+)"[^]*?<\/details>/g)].map(([card, anchor]) => ({ card, anchor }));
  assert.ok(cards.length >= 5, `the SLO feature's cards: ${cards.length}`);
  const p99 = cards.find(({ card }) => card.includes('Then</span> p99 time to first token is at most 2 s'));
  assert.ok(p99, "the p99 scenario's card");
  assert.match(p99.card, /<figure class="timeline"><svg [^]*aria-label="SLO line at 2000"[^]*aria-label="measured p99 time to first token [\d.]+ m?s"[^]*<\/svg><figcaption>p99 time to first token [\d.]+ m?s ≤ SLO 2 s: met\. Each curve is/);
  const charted = cards.filter(({ card }) => /aria-label="SLO line at /.test(card));
  assert.ok(charted.length >= 4, `percentile, mean, goodput and ratio scenarios are charted (${charted.length})`);
  const ratio = cards.find(({ card }) => card.includes('KV-aware routing beats round robin on p99'));
  assert.ok(ratio && ratio.card.includes('KV-aware routing (500 requests)') && ratio.card.includes('round robin (500 requests)'), "a ratio's card draws both runs");
  assert.match(suite.markdown, /\*\*SLO:\*\* p99 time to first token [\d.]+ m?s ≤ SLO 2 s: met\n\n!\[CDF of the measured metric with the SLO limit and the measured value\]\(signoff-assets\/(sc-features-slo-[\w-]+\.svg)\)/);
  const asset = /\]\(signoff-assets\/(sc-features-slo-[\w-]+\.svg)\)/.exec(suite.markdown)![1];
  assert.match(fs.readFileSync(path.join(suite.dir, 'signoff-assets', asset), 'utf8'), /aria-label="SLO line at /, 'the figure file beside signoff.md is the chart');
});
