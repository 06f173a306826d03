// Unit tests of the sign-off: reading runs from message streams, the determinism comparison, the
// computed verdict and its gaps (nothing folded into "passed"), and the escaped renderings.
import { unitSignoffInput } from '../support/signoffInput';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns, evidenceDifference } from '../../src/signoff/determinism';
import { emptyEvidence, evidenceFromRouterReplay, measurement } from '../../src/report/evidence';
import { parseRegistry } from '../../src/signoff/requirements';
import { parseRun } from '../../src/signoff/messages';
import { buildSignoff, parseGlossary, shortDigest, SignoffInput, statusWord, tooHeavyAttention } from '../../src/signoff/model';
import { FILTER_SCRIPT, renderHtml, scriptHash } from '../../src/signoff/html';
import { renderMarkdown } from '../../src/signoff/markdown';
import { toSignoffJson } from '../../src/signoff/json';
import { parseSignoffJson, signoffJsonSchema } from '../../src/signoff/jsonSchema';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { FakeScenario, fakeMessages } from '../support/messages';
import { lagReplay } from '../support/replays';
import os from 'node:os';
import { buildOrphans, commandOf, parseQualifyArgs } from '../../src/signoff/driver';
import { figure, type CoverageRun } from '../../src/signoff/coverage';
import { compiledScenarioFailures } from '../../src/signoff/coverageRun';

const REGISTRY = parseRegistry(`
requirements:
  - { id: AISIM-1893, title: Routing from native events, source: AISIM-1893, owner: QA }
  - { id: LAG-1, title: Lag is exact, source: semantics.md §6 LAG-1, owner: QA }
`);

const evidence = { ...evidenceFromRouterReplay(lagReplay(), 1893), measurements: [measurement('host blocks counted on worker 1', 4, 'blocks')] };

function scenario(name: string, line: number, overrides: Partial<FakeScenario> = {}): FakeScenario {
  return {
    uri: 'features/router/lag.feature',
    line,
    name,
    tags: ['@AISIM-1893', '@LAG-1'],
    steps: [
      { keyword: 'Given', text: 'a cluster of 2 aggregated workers with 4-token blocks', status: 'PASSED' },
      { keyword: 'When', text: 'a request starting with "system prompt" arrives at 15 ms', status: 'PASSED' },
      { keyword: 'Then', text: 'it is placed on worker 1, which holds it in G2', status: 'PASSED' },
    ],
    evidence,
    ...overrides,
  };
}

function input(scenarios: FakeScenario[], rerun: FakeScenario[] = scenarios): SignoffInput {
  const run = parseRun(fakeMessages(scenarios));
  return unitSignoffInput(run, REGISTRY, { determinism: compareRuns(run, parseRun(fakeMessages(rerun))), companions: [{ label: 'JUnit XML', file: 'junit.xml' }] });
}

test('a run is read from its message stream: steps as written, worst status, evidence', () => {
  const run = parseRun(
    fakeMessages([
      scenario('passes', 10),
      scenario('is pending', 20, {
        steps: [
          { keyword: 'Given', text: 'something', status: 'PASSED' },
          { keyword: 'When', text: 'a step is pending', status: 'PENDING' },
          { keyword: 'Then', text: 'this is skipped', status: 'SKIPPED' },
        ],
      }),
      scenario('never ran', 30, { notRun: true }),
      scenario('after hook fails', 40, { hookFails: 'boom' }),
    ]),
  );
  assert.deepEqual(
    run.scenarios.map((s) => [s.key, s.status]),
    [
      ['features/router/lag.feature:10', 'PASSED'],
      ['features/router/lag.feature:20', 'PENDING'],
      ['features/router/lag.feature:30', 'NOT RUN'],
      ['features/router/lag.feature:40', 'FAILED'],
    ],
  );
  assert.deepEqual(run.scenarios[0].steps[0], { kind: 'step', keyword: 'Given', type: 'Context', text: 'a cluster of 2 aggregated workers with 4-token blocks', table: null, docString: null, status: 'PASSED', message: null });
  assert.equal(run.scenarios[0].evidence?.digest, evidence.digest);
  assert.deepEqual(run.scenarios[3].steps.at(-1), { kind: 'after hook', keyword: '', type: null, text: '', table: null, docString: null, status: 'FAILED', message: 'boom' });
  assert.equal(run.cucumberVersion, '12.9.0');
  assert.deepEqual(run.runErrors, []);
});

test('a stream cut short is a problem of the run, not a pass', () => {
  const text = fakeMessages([scenario('passes', 10)], { finished: false });
  const run = parseRun(`${text}{"testRunFinis`);
  assert.equal(run.finished, false);
  assert.equal(run.runErrors.length, 2);
});

test('determinism: digests, results and presence are compared per scenario', () => {
  const a = parseRun(fakeMessages([scenario('one', 10), scenario('two', 20), scenario('three', 30)]));
  const b = parseRun(
    fakeMessages([
      scenario('one', 10),
      scenario('two', 20, { evidence: { ...evidenceFromRouterReplay(lagReplay({ extraEvent: true }), 1893), measurements: evidence.measurements } }),
      scenario('four', 40),
    ]),
  );
  const result = compareRuns(a, b);
  assert.equal(result.identical, false);
  assert.deepEqual(
    result.differences.map((d) => [d.name, d.reason]),
    [
      ['two', 'the simulation did something different (digests differ: KV batches: 1 vs 2; residency differs)'],
      ['three', 'not run the second time'],
      ['four', 'only in the second run'],
    ],
  );
  assert.equal(compareRuns(a, a).identical, true);
  assert.equal(compareRuns(a, null, 'no stream').problem, 'no stream');
});

test('QUALIFIED only when every scenario passed, every requirement is traced and both runs agree', () => {
  const model = buildSignoff(input([scenario('sees the store', 10), scenario('sees it later', 20)]));
  assert.equal(model.verdict, 'QUALIFIED');
  assert.deepEqual(model.gates.map((g) => g.passed), [true, true, true]);
  assert.equal(model.matrix[0].status, 'covered: 2/2 passed');
  assert.deepEqual(model.matrix[0].scenarios[0].measured, ['host blocks counted on worker 1 = 4 blocks']);
  assert.equal(model.views[0].replay, 'KVQUAL_SEED=1893 npx cucumber-js --profile replay features/router/lag.feature:10');
});

test('undefined, pending and skipped are listed explicitly and keep the verdict NOT QUALIFIED', () => {
  const model = buildSignoff(
    input([
      scenario('passes', 10),
      scenario('undefined step', 20, {
        steps: [
          { keyword: 'Given', text: 'nobody wrote this', status: 'UNDEFINED' },
          { keyword: 'Then', text: 'it is skipped', status: 'SKIPPED' },
        ],
        evidence: emptyEvidence(1893),
      }),
    ]),
  );
  assert.equal(model.verdict, 'NOT QUALIFIED');
  assert.equal(model.gates[0].summary, '1 of 2 scenarios passed (1 undefined)');
  assert.deepEqual(model.notPassed.map((v) => v.scenario.name), ['undefined step']);
  assert.deepEqual(model.stepsNotPassed.map(({ step }) => [step.text, step.status]), [
    ['nobody wrote this', 'UNDEFINED'],
    ['it is skipped', 'SKIPPED'],
  ]);
  const markdown = renderMarkdown(model);
  assert.match(markdown, /\*\*undefined\*\*: \[undefined step\]/);
  assert.match(markdown, /\| Given nobody wrote this \| undefined \|/);
});

test('untraced scenarios, unknown tags and requirements without scenarios fail the traceability gate', () => {
  const model = buildSignoff(input([scenario('untagged', 10, { tags: ['@wip'] }), scenario('unknown', 20, { tags: ['@AISIM-9999'] })]));
  assert.equal(model.verdict, 'NOT QUALIFIED');
  assert.deepEqual(model.untraced.map((v) => v.scenario.name), ['untagged', 'unknown']);
  assert.deepEqual(model.unknownTags.map((u) => u.tag), ['@AISIM-9999']);
  assert.deepEqual(model.uncovered.map((r) => r.id), ['AISIM-1893', 'LAG-1']);
  assert.equal(model.matrix[0].status, 'NOT COVERED');
});

test('a perturbed second run flips the verdict and names the scenario', () => {
  const perturbed = { ...evidence, digest: 'sha256:0000' };
  const model = buildSignoff(input([scenario('steady', 10), scenario('wobbly', 20)], [scenario('steady', 10), scenario('wobbly', 20, { evidence: perturbed })]));
  assert.equal(model.verdict, 'NOT QUALIFIED');
  assert.match(model.gates[2].summary, /1 scenario differed between the two runs: "wobbly"/);
});

test('scenario text is escaped in HTML and Markdown', () => {
  const hostile = '<script>alert(1)</script> <img src=x onerror=alert(2)>';
  const model = buildSignoff(input([scenario(hostile, 10, { steps: [{ keyword: 'Given', text: `the prefix "${hostile}"`, status: 'PASSED', table: [['<b>', '|']] }] })]));
  const page = renderHtml(model);
  const own = `<script>${FILTER_SCRIPT}</script>`;
  assert.equal(page.split('<script').length - 1, 1, 'one script element: the page\'s own filter');
  assert.ok(page.includes(own) && page.includes(`script-src '${scriptHash(FILTER_SCRIPT)}'`), 'the CSP allows that script by its hash');
  assert.ok(!page.includes("'unsafe-inline'") && !/\sstyle="/.test(page) && (page.match(/<style>/g) ?? []).length === 1, 'one style sheet, allowed by its hash; no style attribute');
  const html = page.replace(own, '');
  assert.ok(!/<script|<img|<b>/i.test(html), 'no markup from the scenario');
  assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;'));
  const markdown = renderMarkdown(model);
  assert.ok(markdown.includes('#### ✅ \\<script\\>alert(1)\\</script\\>'));
  // Inside fenced blocks text is literal (shown as written); everywhere else markup is escaped.
  const outsideFences = markdown.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1$/gm, '');
  assert.ok(!/(^|[^\\])<(script|img|b>)/m.test(outsideFences));
});

test('the same run renders the same report apart from the date line', () => {
  const scenarios = [scenario('sees the store', 10)];
  const a = input(scenarios);
  const b = { ...input(scenarios), date: '2031-06-30 12:34 UTC' };
  for (const render of [renderMarkdown, renderHtml]) {
    const one = render(buildSignoff(a)).split('\n');
    const two = render(buildSignoff(b)).split('\n');
    const differing = one.filter((line, i) => line !== two[i]);
    assert.equal(one.length, two.length);
    assert.equal(differing.length, 1);
    assert.match(differing[0], /2030-01-01 00:00 UTC/);
  }
});

test('generated workloads too heavy to check are stated, and a campaign that checked none, or left more than 1 % unchecked, does not pass the gate', () => {
  const some = buildSignoff({ ...input([scenario('passes', 10)]), generated: { runs: 1000, seed: 1893, excluded_areas: [], only: [], passed: 1000, too_heavy: 2, counterexample: null } });
  assert.deepEqual(some.gates.at(-1), {
    title: 'Generated workloads',
    passed: true,
    summary: '998 generated workloads (fast-check seed 1893) kept every invariant of 1000 run; 2 too heavy to check (more than 500,000 KV events, or a preemption spin past 20,000,000 kernel events), not checked',
  });
  const none = buildSignoff({ ...input([scenario('passes', 10)]), generated: { runs: 3, seed: 1893, excluded_areas: [], only: [], passed: 3, too_heavy: 3, counterexample: null } });
  assert.equal(none.gates.at(-1)!.passed, false);
  assert.equal(none.verdict, 'NOT QUALIFIED');
  // At most 1 % of the cases run may go unchecked: 10 of 1,000 passes, 11 does not, and says why.
  const heavy = (too_heavy: number) => buildSignoff({ ...input([scenario('passes', 10)]), generated: { runs: 1000, seed: 1893, excluded_areas: [], only: [], passed: 1000, too_heavy, counterexample: null } });
  assert.equal(heavy(10).gates.at(-1)!.passed, true);
  const tooMany = heavy(11);
  assert.equal(tooMany.gates.at(-1)!.passed, false);
  assert.equal(tooMany.verdict, 'NOT QUALIFIED');
  assert.match(tooMany.gates.at(-1)!.summary, /; 11 too heavy to check \(.*\), not checked: more than 1 % of the cases run, so the gate does not pass$/);
});

test('each generated workload too heavy to check is named under Needs attention, with the command that runs it alone and why', () => {
  const spin = 'the case spun on preemption past the kernel event budget: 9 preemptions';
  const named = buildSignoff({
    ...input([scenario('passes', 10)]),
    generated: { runs: 1000, seed: 7308, excluded_areas: ['failing-plays', 'tight-decode-ranks'], only: [], passed: 1000, too_heavy: 3, too_heavy_cases: [{ case_number: 17, path: '16', reason: spin }, { case_number: 403, path: '402', reason: 'too many events' }], counterexample: null },
  });
  assert.equal(named.verdict, 'QUALIFIED');
  assert.deepEqual(
    named.attention.filter((item) => /too heavy/.test(item.text)),
    [
      {
        text: `3 generated workloads were too heavy to check and not checked: case 17 (npm run fuzz -- --seed 7308 --path 16 --runs 1 --exclude failing-plays,tight-decode-ranks): ${spin}; case 403 (npm run fuzz -- --seed 7308 --path 402 --runs 1 --exclude failing-plays,tight-decode-ranks): too many events; 1 more not named.`,
        href: '#gaps',
      },
    ],
  );
  const one = { runs: 10, seed: 1, excluded_areas: [], only: [], passed: 10, too_heavy: 1, counterexample: null };
  assert.equal(tooHeavyAttention({ ...one, too_heavy_cases: [{ case_number: 4, path: '3', reason: 'r' }], planted_defect: true }), 'One generated workload was too heavy to check and not checked: case 4 (KVQUAL_FUZZ_PLANT=1 npm run fuzz -- --seed 1 --path 3 --runs 1): r.');
  assert.equal(tooHeavyAttention({ ...one, too_heavy_cases: [{ case_number: 4, path: null, reason: 'r' }] }), 'One generated workload was too heavy to check and not checked: case 4: r.');
  // A campaign written before cases were named still says how many.
  assert.equal(tooHeavyAttention(one), 'One generated workload was too heavy to check and not checked.');
  assert.equal(tooHeavyAttention({ ...one, too_heavy: 0 }), null);
  const none = buildSignoff({ ...input([scenario('passes', 10)]), generated: { ...one, too_heavy: 0, too_heavy_cases: [] } });
  assert.deepEqual(none.attention.filter((item) => /too heavy/.test(item.text)), []);
});

test('the generated-workload gate states runs and seed, and a broken invariant makes the sign-off NOT QUALIFIED', () => {
  const passed = buildSignoff({ ...input([scenario('passes', 10)]), generated: { runs: 1000, seed: 1893, excluded_areas: ['failing-plays'], only: [], passed: 1000, too_heavy: 0, counterexample: null } });
  assert.equal(passed.verdict, 'QUALIFIED');
  assert.deepEqual(passed.gates.at(-1), {
    title: 'Generated workloads',
    passed: true,
    summary: '1000 generated workloads (fast-check seed 1893) kept every invariant; left out for known engine defects: failing-plays',
  });
  const broken = buildSignoff({
    ...input([scenario('passes', 10)]),
    generated: {
      runs: 1000,
      seed: 1893,
      excluded_areas: [],
      only: [],
      passed: 5,
      too_heavy: 0,
      counterexample: { seed: 1893, path: '5:0:1', case_number: 6, shrinks: 3, fuzz_case: { config: {}, agentic_trace: null }, violations: [{ invariant: 'request-ended', message: 'request r1 never ended' }] },
    },
  });
  assert.equal(broken.verdict, 'NOT QUALIFIED');
  assert.equal(broken.gates.at(-1)!.passed, false);
  assert.match(broken.gates.at(-1)!.summary, /^generated workload 6 of 1000 \(fast-check seed 1893\) broke every request finishes, fails with a reason or is skipped with a reason: request r1 never ended; shrunk counterexample \{ seed: 1893, path: "5:0:1" \}, replay with npm run fuzz -- --seed 1893 --path 5:0:1$/);
  assert.match(renderMarkdown(broken), /\| Generated workloads \| generated workload 6 of 1000/);
  const twice = buildSignoff({
    ...input([scenario('passes', 10)]),
    generated: { runs: 1000, seed: 1893, only: [], passed: 5, too_heavy: 0, excluded_areas: ['failing-plays', 'tight-decode-ranks'], counterexample: { seed: 1893, path: '5:0:1', case_number: 6, shrinks: 3, fuzz_case: { config: {}, agentic_trace: null }, violations: [{ invariant: 'request-ended', message: 'request r1 never ended' }, { invariant: 'capacity', message: 'over' }] } },
  });
  assert.match(gateOf(twice, 'Generated workloads').summary, /^generated workload 6 of 1000 \(fast-check seed 1893\) broke 2 invariants, first: every request finishes, .*; shrunk counterexample \{ seed: 1893, path: "5:0:1" \}, replay with npm run fuzz -- --seed 1893 --path 5:0:1 --exclude failing-plays,tight-decode-ranks; left out for known engine defects: failing-plays, tight-decode-ranks$/);
  assert.ok(!buildSignoff(input([scenario('passes', 10)])).gates.some((g) => g.title === 'Generated workloads'), 'no gate when no campaign ran');
});

test('with the planted defect the verdict is never QUALIFIED: the test double gate says whether the generated-workloads gate caught it, and both reports carry the banner', () => {
  const counterexample = { seed: 1893, path: '3:0', case_number: 4, shrinks: 2, fuzz_case: { config: {}, agentic_trace: null }, violations: [{ invariant: 'reuse-within-prompt' as const, message: 'planted defect (test double KVQUAL_FUZZ_PLANT=1): request r1 reused 2 cached tokens' }] };
  const campaign = { runs: 20, seed: 1893, excluded_areas: [], only: [], passed: 3, too_heavy: 0, planted_defect: true, counterexample };
  const caught = buildSignoff({ ...input([scenario('passes', 10)]), generated: campaign });
  assert.equal(caught.verdict, 'NOT QUALIFIED');
  const gate = (model: ReturnType<typeof buildSignoff>, title: string) => model.gates.find((g) => g.title === title)!;
  assert.match(gate(caught, 'Generated workloads').summary, /^with the planted defect \(test double\), generated workload 4 of 20 .* replay with KVQUAL_FUZZ_PLANT=1 npm run fuzz -- --seed 1893 --path 3:0$/);
  assert.equal(gate(caught, 'Test double').passed, false);
  assert.match(gate(caught, 'Test double').summary, /^KVQUAL_FUZZ_PLANT=1 planted a defect in the generated workloads' checker \(.*\); the generated-workloads gate caught it: this run is not a sign-off$/);
  assert.match(caught.attention[0].text, /^The generated workloads' test double is active \(KVQUAL_FUZZ_PLANT=1, a planted defect\)/);
  assert.match(renderMarkdown(caught), /^> \*\*⚠ TEST DOUBLE ACTIVE — not a valid sign-off\.\*\* The generated workloads ran with a planted defect on purpose/m);
  assert.match(renderHtml(caught), /<div class="banner" id="planted-defect">⚠ TEST DOUBLE ACTIVE — not a valid sign-off\. The generated workloads ran with a planted defect/);

  // A planted campaign that found nothing: its gate passes, and the test double gate says the defect was MISSED.
  const missed = buildSignoff({ ...input([scenario('passes', 10)]), generated: { ...campaign, passed: 20, counterexample: null } });
  assert.equal(missed.verdict, 'NOT QUALIFIED');
  assert.equal(gate(missed, 'Generated workloads').passed, true);
  assert.match(gate(missed, 'Test double').summary, /the generated-workloads gate MISSED it$/);
  // Without the plant, no banner and no test double gate.
  const plain = buildSignoff({ ...input([scenario('passes', 10)]), generated: { ...campaign, planted_defect: false, passed: 20, counterexample: null } });
  assert.equal(plain.verdict, 'QUALIFIED');
  assert.doesNotMatch(renderMarkdown(plain), /TEST DOUBLE/);
});

test('a failure in the compiled coverage run fails its gate and names each test and scenario', () => {
  const clean = input([scenario('steady', 10)]);
  const passing = buildSignoff({ ...clean, coverageRun: { unitFiles: 2, unitTests: 40, scenarios: 1, failures: [], problems: [] } });
  assert.equal(passing.verdict, 'QUALIFIED');
  assert.equal(passing.gates.find((g) => g.title === 'Coverage run')?.summary, 'all 40 unit tests and 1 scenario passed again on the compiled JavaScript');
  const failing = buildSignoff({
    ...clean,
    coverageRun: {
      unitFiles: 2,
      unitTests: 40,
      scenarios: 1,
      failures: [
        { kind: 'unit test', name: 'reads the docs page', where: 'build/test/unit/docs.test.js:12:1', why: 'ENOENT' },
        { kind: 'scenario', name: 'steady', where: 'features/a.feature:10', why: 'failed: boom' },
      ],
      problems: [],
    },
  });
  assert.equal(failing.verdict, 'NOT QUALIFIED');
  const gate = failing.gates.find((g) => g.title === 'Coverage run')!;
  assert.equal(gate.passed, false);
  assert.equal(gate.summary, 'on the compiled JavaScript, 1 unit test failed and 1 scenario did not pass: "reads the docs page", "steady"');
  const markdown = renderMarkdown(failing);
  assert.match(markdown, /### Failures of the compiled coverage run\n\n- unit test "reads the docs page" \(`build\/test\/unit\/docs\.test\.js:12:1`\): ENOENT/);
  const incomplete = buildSignoff({ ...clean, coverageRun: { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], problems: ['tsc produced no JavaScript'] } });
  assert.equal(incomplete.verdict, 'NOT QUALIFIED');
});

test('with the test double active the verdict is never QUALIFIED, and a perturbation the comparison missed is named', () => {
  const clean = input([scenario('steady', 10)]);
  const named = buildSignoff({ ...clean, perturbation: 'nothing matches this' });
  assert.equal(named.verdict, 'NOT QUALIFIED');
  assert.match(named.gates.find((g) => g.title === 'Test double')!.summary, /named no scenario/);
  const missed = buildSignoff({
    ...clean,
    perturbation: 'steady',
    determinism: { ...clean.determinism, perturbed: [{ key: 'features/a.feature:10', name: 'steady', note: 'perturbed', caught: false }] },
  });
  assert.match(missed.gates.find((g) => g.title === 'Test double')!.summary, /the determinism check MISSED "steady"/);
  const caught = buildSignoff({ ...clean, perturbation: 'steady', determinism: { ...clean.determinism, perturbed: [{ key: 'features/a.feature:10', name: 'steady', note: 'perturbed', caught: true }] } });
  assert.equal(caught.gates.find((g) => g.title === 'Test double')!.summary, 'KVQUAL_PERTURB="steady" perturbed 1 scenario on purpose in the second run; the determinism check caught every one: this run is not a sign-off');
});

test('signoff.json is the whole model, valid against its published JSON Schema source, and read back as a baseline', () => {
  const model = buildSignoff(input([scenario('steady', 10), scenario('undefined step', 20, { steps: [{ keyword: 'Given', text: 'nobody wrote this', status: 'UNDEFINED' }] })]));
  const json = toSignoffJson(model);
  const text = JSON.stringify(json);
  const back = parseSignoffJson(text, 'signoff.json');
  assert.deepEqual(back, json);
  assert.equal(back.verdict, 'NOT QUALIFIED');
  assert.deepEqual(back.gaps.not_passed, ['features/router/lag.feature:20']);
  assert.throws(() => parseSignoffJson('{"format":"kvqual-signoff/0"}', 'old.json'), /^Error: old\.json: not a kvqual-signoff\/1 sign-off \(format "kvqual-signoff\/0"\)$/);
  assert.throws(() => parseSignoffJson(text.replace('"qualified":false', '"qualified":"no"'), 'bad.json'), /bad\.json: invalid sign-off: qualified:/);
  assert.deepEqual(parseSignoffJson(`\uFEFF${text}`, 'bom.json'), json, 'a byte-order mark is not part of the JSON');
  // Hand edits that contradict the sign-off itself are refused, naming the contradiction.
  assert.throws(() => parseSignoffJson(text.replace('"verdict":"NOT QUALIFIED"', '"verdict":"QUALIFIED"'), 'edited.json'), /^Error: edited\.json: not a sign-off kvqual wrote: its verdict is QUALIFIED but qualified is false$/);
  const allQualified = text.replace('"verdict":"NOT QUALIFIED"', '"verdict":"QUALIFIED"').replace('"qualified":false', '"qualified":true');
  assert.throws(() => parseSignoffJson(allQualified, 'edited.json'), /^Error: edited\.json: not a sign-off kvqual wrote: it is QUALIFIED but the gate "[^"]+" failed$/);
  const twice = { ...json, scenarios: [...json.scenarios, json.scenarios[0]] };
  assert.throws(() => parseSignoffJson(JSON.stringify(twice), 'twice.json'), /^Error: twice\.json: not a sign-off kvqual wrote: the scenario features\/router\/lag\.feature:10 is listed twice$/);
  const published = JSON.parse(fs.readFileSync(path.join(ROOT, 'schema', 'kvqual-signoff.schema.json'), 'utf8'));
  assert.deepEqual(published, signoffJsonSchema(), 'schema/kvqual-signoff.schema.json is current (npm run schema)');
});

test('a baseline comparison names scenarios added, removed, renamed, results, digests and measured values changed', () => {
  const before = toSignoffJson(buildSignoff(input([scenario('steady', 10), scenario('old name', 20), scenario('going away', 30, { steps: [{ keyword: 'Then', text: 'something else', status: 'PASSED' }] })])));
  const changedEvidence = { ...evidence, digest: 'sha256:ffff', measurements: [{ label: 'host blocks', value: 2, unit: 'blocks', text: 'host blocks = 2 blocks' }] };
  const model = buildSignoff({
    ...input([scenario('steady', 10, { evidence: changedEvidence }), scenario('new name', 20), scenario('brand new', 40, { steps: [{ keyword: 'When', text: 'new things happen', status: 'FAILED', message: 'boom' }] })]),
    baseline: before,
  });
  const diff = model.baseline!;
  assert.deepEqual(diff.added.map((c) => c.name), ['brand new']);
  assert.deepEqual(diff.removed.map((c) => c.name), ['going away']);
  assert.deepEqual(diff.renamed.map((c) => [c.before, c.after]), [['old name', 'new name']]);
  assert.deepEqual(diff.digests.map((c) => c.name), ['steady']);
  assert.ok(model.views.find((v) => v.scenario.name === 'steady')!.open, 'a changed scenario is open');
  assert.deepEqual(model.views.map((v) => [v.scenario.name, v.changed]), [['steady', true], ['new name', true], ['brand new', true]]);
  assert.match(model.attention.map((a) => a.text).join('\n'), /Since the baseline \(2030-01-01 00:00 UTC, commit abc, QUALIFIED\): 1 scenario added, 1 scenario removed, 1 scenario renamed, 1 digest changed, \d+ measured values? changed\./);
  assert.match(renderMarkdown(model), /### Scenarios renamed\n\n- `features\/router\/lag\.feature:20`: "old name" → "new name"/);
});

test('a baseline that shares no scenario with the run is named under Needs attention; one that shares any is not', () => {
  const other = (name: string, line: number) => scenario(name, line, { uri: 'features/other/suite.feature', steps: [{ keyword: 'Then', text: `another suite's step ${line}`, status: 'PASSED' }] });
  const anotherSuite = toSignoffJson(buildSignoff(input([other('elsewhere', 3), other('elsewhere too', 9)])));
  const current = input([scenario('steady', 10), scenario('also steady', 20)]);
  const alien = buildSignoff({ ...current, baseline: anotherSuite });
  const warning = alien.attention.find((a) => a.text.startsWith('The baseline shares no scenario'));
  assert.equal(
    warning?.text,
    "The baseline shares no scenario with this run (none of its 2 scenarios has this run's file and name, steps or place): is it a sign-off of another suite? Its comparison lists every scenario as added and removed.",
  );
  assert.equal(warning.href, '#baseline');
  const sameSuite = toSignoffJson(buildSignoff(input([scenario('steady', 10), scenario('going away', 30, { steps: [{ keyword: 'Then', text: 'gone', status: 'PASSED' }] })])));
  const related = buildSignoff({ ...current, baseline: sameSuite });
  assert.equal(related.attention.filter((a) => a.text.startsWith('The baseline shares no scenario')).length, 0);
});

test("a cluster scenario's card and JSON carry its pass-time fidelity; other simulations have none", () => {
  const calibrated = scenario('calibrated run', 30, { evidence: { ...evidence, pass_times: 'calibrated: bench H100' } });
  const model = buildSignoff(input([calibrated, scenario('router replay', 40)]));
  assert.match(renderMarkdown(model), /\| Pass times \| calibrated: bench H100 \|/);
  assert.match(renderHtml(model), /Pass times<\/[^>]+>\s*<[^>]+>calibrated: bench H100/);
  const json = toSignoffJson(model);
  const cards = (json as unknown as { scenarios: { name: string; pass_times: string | null }[] }).scenarios;
  assert.equal(cards.find((c) => c.name === 'calibrated run')!.pass_times, 'calibrated: bench H100');
  assert.equal(cards.find((c) => c.name === 'router replay')!.pass_times, null);
  assert.equal((renderMarkdown(model).match(/\| Pass times \|/g) ?? []).length, 1);
});

test('the compiled files whose TypeScript source is gone, and their maps, are the orphans of build/', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-orphans-'));
  try {
    const write = (file: string) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), '');
    };
    for (const file of ['src/kept.ts', 'test/unit/kept.test.ts', 'build/src/kept.js', 'build/src/kept.js.map', 'build/test/unit/kept.test.js']) write(file);
    for (const file of ['build/src/gone.js', 'build/src/gone.js.map', 'build/test/unit/deleted.test.js', 'build/steps/old.steps.js']) write(file);
    write('build/coverage/coverage-summary.json');
    assert.deepEqual(
      buildOrphans(root).map((file) => path.relative(root, file).split(path.sep).join('/')),
      ['build/src/gone.js', 'build/src/gone.js.map', 'build/steps/old.steps.js', 'build/test/unit/deleted.test.js'],
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("the matrix shows a scenario's first three measured values and folds the rest, which the requirement view lists in full", () => {
  const many = { ...evidence, measurements: [1, 2, 3, 4, 5, 6].map((n) => measurement(`value ${n}`, n, 'blocks')) };
  const four = { ...evidence, measurements: [1, 2, 3, 4].map((n) => measurement(`other ${n}`, n, 'blocks')) };
  const page = renderHtml(buildSignoff(input([scenario('measures six things', 10, { evidence: many }), scenario('measures four things', 20, { evidence: four })])));
  const matrix = page.slice(page.indexOf('<table id="traceability-matrix"'), page.indexOf('</table>', page.indexOf('<table id="traceability-matrix"')));
  const row = matrix.slice(matrix.indexOf('measures six things'), matrix.indexOf('</tr>', matrix.indexOf('measures six things')));
  assert.match(row, /<li>value 3 = 3 blocks<\/li><\/ul><details class="more"><summary>3 more<\/summary><ul class="plain"><li>value 4 = 4 blocks<\/li>/);
  const other = matrix.slice(matrix.indexOf('measures four things'), matrix.indexOf('</tr>', matrix.indexOf('measures four things')));
  assert.ok(!other.includes('<details'), 'a fourth value is shown, not folded alone');
  assert.ok(other.includes('other 4 = 4 blocks'));
  const requirements = page.slice(page.indexOf('id="req-'), page.indexOf('<table id="traceability-matrix"'));
  assert.ok(requirements.includes('value 6 = 6 blocks') && !requirements.includes('class="more"'), 'the requirement view folds nothing');
});

// ── Each gate fails for each of its reasons, and says which (found by mutation testing the gates) ──

const gateOf = (model: ReturnType<typeof buildSignoff>, title: string) => model.gates.find((g) => g.title === title)!;

test('the scenarios gate fails when no scenario ran, and when the run itself reported problems even though every scenario passed', () => {
  const none = buildSignoff(input([]));
  assert.deepEqual(gateOf(none, 'Scenarios'), { title: 'Scenarios', passed: false, summary: 'no scenario ran' });
  assert.equal(none.verdict, 'NOT QUALIFIED');
  const troubled = input([scenario('passes', 10)]);
  troubled.run.runErrors.push('the message stream ended before testRunFinished', 'a parse error');
  assert.deepEqual(gateOf(buildSignoff(troubled), 'Scenarios'), { title: 'Scenarios', passed: false, summary: '1 of 1 scenario passed; the run itself reported 2 problems' });
  assert.deepEqual(gateOf(buildSignoff(input([scenario('passes', 10)])), 'Scenarios'), { title: 'Scenarios', passed: true, summary: '1 of 1 scenario passed' });
});

test('the traceability gate names each kind of problem alone, all three together, and says what a clean trace covers', () => {
  const tagged = (name: string, line: number, tags: string[]) => scenario(name, line, { tags });
  const summary = (scenarios: FakeScenario[]) => gateOf(buildSignoff(input(scenarios)), 'Requirement traceability');
  assert.deepEqual(summary([tagged('both', 10, ['@AISIM-1893', '@LAG-1'])]), { title: 'Requirement traceability', passed: true, summary: 'every scenario traces to a registered requirement; all 2 requirements have scenarios' });
  assert.deepEqual(summary([tagged('both', 10, ['@AISIM-1893', '@LAG-1']), tagged('untagged', 20, [])]), { title: 'Requirement traceability', passed: false, summary: '1 scenario without a requirement tag' });
  assert.deepEqual(summary([tagged('both', 10, ['@AISIM-1893', '@LAG-1', '@AISIM-9999'])]), { title: 'Requirement traceability', passed: false, summary: '1 unknown requirement tag' });
  assert.deepEqual(summary([tagged('one', 10, ['@AISIM-1893'])]), { title: 'Requirement traceability', passed: false, summary: '1 requirement without a scenario (LAG-1)' });
  assert.deepEqual(summary([tagged('one', 10, ['@AISIM-1893', '@AISIM-9999']), tagged('untagged', 20, [])]), {
    title: 'Requirement traceability',
    passed: false,
    summary: '1 scenario without a requirement tag; 1 unknown requirement tag; 1 requirement without a scenario (LAG-1)',
  });
});

test('a matrix row is covered only when it has scenarios and all passed; a planned requirement without one says so', () => {
  const failed = scenario('fails', 20, { tags: ['@LAG-1'], steps: [{ keyword: 'Then', text: 'it breaks', status: 'FAILED' }] });
  const model = buildSignoff(input([scenario('passes', 10), failed]));
  assert.deepEqual(model.matrix.map((row) => [row.requirement.id, row.status, row.ok]), [
    ['AISIM-1893', 'covered: 1/1 passed', true],
    ['LAG-1', '1 of 2 not passed', false],
  ]);
  const planned = { ...input([scenario('one', 10, { tags: ['@AISIM-1893'] })]), registry: parseRegistry(`
requirements:
  - { id: AISIM-1893, title: Routing from native events, source: AISIM-1893, owner: QA }
  - { id: LAG-1, title: Lag is exact, source: semantics.md §6 LAG-1, owner: QA, status: planned }
`) };
  assert.deepEqual(buildSignoff(planned).matrix.map((row) => [row.requirement.id, row.status, row.ok]), [
    ['AISIM-1893', 'covered: 1/1 passed', true],
    ['LAG-1', 'NOT COVERED (planned)', false],
  ]);
});

test("a scenario's card: open when it did not pass or changed, its registered and other tags apart, its notes without the hooks' files, its figure file", () => {
  const base = input([scenario('passes', 10, { tags: ['@AISIM-1893', '@wip', '@LAG-1'] }), scenario('fails', 20, { steps: [{ keyword: 'Then', text: 'it breaks', status: 'FAILED' }] })]);
  base.run.scenarios[0].attachments.push(
    { mediaType: 'text/plain', fileName: 'why.txt', text: 'a note' },
    { mediaType: 'text/plain', fileName: null, text: 'unnamed' },
    { mediaType: 'text/plain', fileName: 'decisions.txt', text: 'the hook writes this' },
    { mediaType: 'image/png', fileName: 'shot.png', text: 'binary' },
  );
  const figures = new Map([['features/router/lag.feature:10', '<svg/>']]);
  const model = buildSignoff({ ...base, figures });
  const [passes, fails] = model.views;
  assert.deepEqual([passes.open, fails.open], [false, true]);
  assert.deepEqual([passes.requirements, passes.otherTags], [['AISIM-1893', 'LAG-1'], ['@wip']]);
  assert.deepEqual(passes.notes, [
    { title: 'why.txt', text: 'a note' },
    { title: 'attachment (text/plain)', text: 'unnamed' },
  ]);
  assert.deepEqual([passes.figureFile, passes.figure, fails.figureFile], [`${passes.anchor}.svg`, '<svg/>', null]);
  assert.deepEqual([passes.changed, fails.changed], [false, false]);
  // A scenario that differed between the runs is marked changed and opened.
  const differed = buildSignoff(input([scenario('steady', 10)], [scenario('steady', 10, { evidence: { ...evidence, digest: 'sha256:0000' } })]));
  assert.deepEqual([differed.views[0].changed, differed.views[0].open], [true, true]);
});

test('an undefined step gets the nearest phrases of the loaded step definitions; other steps not passed get none', () => {
  const run = input([
    scenario('misspelt', 10, {
      steps: [
        { keyword: 'When', text: 'the router replays the evnet streams', status: 'UNDEFINED' },
        { keyword: 'Then', text: 'the router replays the event streams', status: 'SKIPPED' },
      ],
    }),
  ]);
  run.run.phrases.push('the router replays the event streams', 'a cluster of {int} aggregated workers');
  const model = buildSignoff(run);
  assert.deepEqual(model.views[0].suggestions.map((s) => [s.step.text, s.phrases[0]]), [['the router replays the evnet streams', 'the router replays the event streams']]);
  assert.deepEqual(model.stepsNotPassed.map((s) => s.suggestions.length > 0), [true, false]);
});

test('the coverage run gate fails when it could not complete, naming why', () => {
  const model = buildSignoff({ ...input([scenario('passes', 10)]), coverageRun: { problems: ['tsc could not compile'], failures: [], unitTests: 0, scenarios: 0 } as never });
  assert.deepEqual(gateOf(model, 'Coverage run'), { title: 'Coverage run', passed: false, summary: 'could not complete: tsc could not compile' });
});

test('a merge whose shards are not one complete set fails the shards gate, naming each gap; an unsharded run has no such gate', () => {
  const model = buildSignoff({ ...input([scenario('passes', 10)]), shardProblems: ['shard 2 of 3 missing', 'shard 3 of 3 given twice'] });
  assert.deepEqual(gateOf(model, 'Shards'), { title: 'Shards', passed: false, summary: 'the merged shards are not one complete set: shard 2 of 3 missing; shard 3 of 3 given twice' });
  assert.equal(model.verdict, 'NOT QUALIFIED');
  assert.equal(gateOf(buildSignoff(input([scenario('passes', 10)])), 'Shards'), undefined);
});

test('determinism names every kind of difference: evidence missing in either run, seed, result, and where two simulations part', () => {
  const reasonFor = (first: Partial<FakeScenario>, second: Partial<FakeScenario>) => compareRuns(parseRun(fakeMessages([scenario('s', 10, first)])), parseRun(fakeMessages([scenario('s', 10, second)]))).differences.map((d) => d.reason);
  const failed = { steps: [{ keyword: 'Then', text: 'it breaks', status: 'FAILED' as const }] };
  assert.deepEqual(reasonFor({ evidence: null }, {}), ['no evidence in the first run (no evidence attached)']);
  assert.deepEqual(reasonFor({}, { evidence: null, ...failed }), ['no evidence in the second run (no evidence attached); passed the first time, failed the second']);
  // Without a reading error, the scenario's result says why there is no evidence.
  const first = parseRun(fakeMessages([scenario('s', 10)]));
  const second = parseRun(fakeMessages([scenario('s', 10, failed)]));
  for (const run of [first, second]) Object.assign(run.scenarios[0], { evidence: null, evidenceError: null });
  assert.deepEqual(compareRuns(first, second).differences.map((d) => d.reason), ['no evidence in the first run (passed); no evidence in the second run (failed); passed the first time, failed the second']);
  assert.deepEqual(reasonFor({}, { evidence: { ...evidence, seed: 7 } }), ['seed 1893 vs 7']);
  assert.deepEqual(reasonFor({}, failed), ['passed the first time, failed the second']);
  assert.deepEqual(compareRuns(parseRun(fakeMessages([])), parseRun(fakeMessages([]))).problem, 'no scenario to compare');
  assert.equal(compareRuns(parseRun(fakeMessages([])), parseRun(fakeMessages([]))).identical, false);

  const a = evidence;
  const differ = (b: typeof evidence) => evidenceDifference(a, b);
  const timeline = (change: Partial<typeof evidence.timeline>) => ({ ...a, timeline: { ...a.timeline, ...change } });
  assert.equal(differ({ ...a }), 'the timelines agree; the canonical records differ in detail');
  assert.equal(differ({ ...a, simulation: 'cluster' }), 'simulation router-replay vs cluster');
  assert.equal(differ({ ...a, ranks: a.ranks.slice(1) }), `ranks: ${a.ranks.length} vs ${a.ranks.length - 1}`);
  assert.equal(differ(timeline({ emissions: a.timeline.emissions.slice(1) })), `KV batches: ${a.timeline.emissions.length} vs ${a.timeline.emissions.length - 1}`);
  const placement = a.timeline.placements[0];
  assert.ok(placement, 'the example places a request');
  assert.equal(differ(timeline({ placements: [{ ...placement, worker_id: placement.worker_id + 5 }] })), `placements: ${placement.request_id} on worker ${placement.worker_id} vs ${placement.request_id} on worker ${placement.worker_id + 5}`);
  assert.equal(differ(timeline({ placements: [] })), `placements: ${placement.request_id} on worker ${placement.worker_id} vs none`);
  assert.equal(differ(timeline({ placements: [{ ...placement, at_ns: placement.at_ns + 1 }] })), 'same placements, different breakdowns');
  assert.equal(differ(timeline({ transfers: [...a.timeline.transfers, a.timeline.transfers[0] ?? ({ kind: 'D2H' } as never)] })), `transfers: ${a.timeline.transfers.length} vs ${a.timeline.transfers.length + 1}`);
  assert.equal(differ(timeline({ membership: [...a.timeline.membership, { at_ns: 1 } as never] })), 'membership changes differ');
  assert.equal(differ(timeline({ failure: { message: 'boom' } as never })), `failure: ${a.timeline.failure?.message ?? 'none'} vs boom`);
  assert.equal(differ({ ...a, residency: [] }), 'residency differs');
});

test('the perturbed scenarios of the second run are listed, each caught or not by the comparison', () => {
  const first = parseRun(fakeMessages([scenario('steady', 10), scenario('wobbly', 20), scenario('untouched', 30)]));
  const second = parseRun(fakeMessages([scenario('steady', 10), scenario('wobbly', 20, { evidence: { ...evidence, digest: 'sha256:0000' } }), scenario('untouched', 30)]));
  second.scenarios[0].perturbation = 'one extra KV event';
  second.scenarios[1].perturbation = 'one extra KV event';
  assert.deepEqual(compareRuns(first, second).perturbed, [
    { key: 'features/router/lag.feature:10', name: 'steady', note: 'one extra KV event', caught: false },
    { key: 'features/router/lag.feature:20', name: 'wobbly', note: 'one extra KV event', caught: true },
  ]);
});

test('the glossary is read from its Markdown table: header and rule rows are skipped, cells trimmed', () => {
  assert.deepEqual(parseGlossary('# Glossary\n\n| Term | Meaning |\n|---|---|\n| G1 | the GPU KV cache |\n|  G2  |  host memory  |\ntext | not a row\n'), [
    { term: 'G1', meaning: 'the GPU KV cache' },
    { term: 'G2', meaning: 'host memory' },
  ]);
});

/** A generated-workload campaign whose every case passed. */
const WHOLE_CAMPAIGN = { runs: 1000, seed: 1893, excluded_areas: [], only: [], passed: 1000, too_heavy: 0, counterexample: null };
/** A coverage summary as a coverage run that completed has one. */
const MEASURED = { scope: 'unit tests and scenarios', lines: figure(9, 10), branches: figure(9, 10), functions: figure(9, 10), groups: [] };

test('"needs attention" lists each failed gate but the test double, planned requirements, a changed working tree, coverage not measured and active test doubles, each linked', () => {
  const registry = parseRegistry(`
requirements:
  - { id: AISIM-1893, title: Routing from native events, source: AISIM-1893, owner: QA }
  - { id: LAG-1, title: Lag is exact, source: semantics.md §6 LAG-1, owner: QA }
  - { id: LAG-2, title: Lag is exact twice, source: semantics.md §6 LAG-2, owner: QA, status: planned }
`);
  const failed = scenario('fails', 20, { steps: [{ keyword: 'Then', text: 'it breaks', status: 'FAILED' }] });
  const base = input([scenario('passes', 10), failed]);
  const model = buildSignoff({ ...base, registry, subject: { ...base.subject, worktree: 'working tree differs from the commit in 2 files' }, perturbation: 'nothing matches this' });
  assert.deepEqual(
    model.attention.map((item) => [item.text, item.href]),
    [
      ['The determinism test double is active (KVQUAL_PERTURB="nothing matches this"): this run is not a sign-off.', '#determinism'],
      ['Scenarios: 1 of 2 scenarios passed (1 failed)', '#gaps'],
      ['Requirement traceability: 1 requirement without a scenario (LAG-2)', '#gaps'],
      ["No generated workloads ran (--fuzz-runs 0): the simulator's invariants were checked by the scenarios alone, and the sign-off has no generated-workloads gate.", '#gaps'],
      ['1 requirement still planned, without scenarios: LAG-2', '#gaps'],
      ['The working tree differs from the commit in 2 files: the report may not match the commit it names.', '#qualified'],
      ['Coverage was not measured: not requested. The compiled run did not check the suite again.', '#coverage'],
    ],
  );
  const clean = buildSignoff({ ...input([scenario('passes', 10)]), coverage: MEASURED, coverageRun: { unitFiles: 1, unitTests: 1, scenarios: 1, failures: [], problems: [] }, generated: WHOLE_CAMPAIGN });
  assert.deepEqual(clean.attention, [], 'a clean run needs no attention');
});

test('the coverage run gate counts failed unit tests and scenarios apart', () => {
  const failure = (kind: 'unit test' | 'scenario', name: string) => ({ kind, name, where: 'x:1', why: 'boom' });
  const model = buildSignoff({ ...input([scenario('passes', 10)]), coverageRun: { unitFiles: 1, unitTests: 9, scenarios: 1, failures: [failure('unit test', 'a'), failure('unit test', 'b'), failure('scenario', 'c')], problems: [] } });
  assert.equal(gateOf(model, 'Coverage run').summary, 'on the compiled JavaScript, 2 unit tests failed and 1 scenario did not pass: "a", "b", "c"');
});

test('unit tests the compiled run skipped are named with their reasons, in the gate, under Needs attention and with the failures; they are not said to have passed again', () => {
  const run = { unitFiles: 2, unitTests: 40, scenarios: 3, failures: [], problems: [], skipped: [{ name: 'a Mooncake trace replays', why: 'no ../shared/data/mooncake here' }, { name: 'later', why: '' }] };
  const model = buildSignoff({ ...input([scenario('passes', 10)]), coverage: MEASURED, coverageRun: run, generated: WHOLE_CAMPAIGN });
  assert.deepEqual(gateOf(model, 'Coverage run'), {
    title: 'Coverage run',
    passed: true,
    summary: '38 of 40 unit tests and all 3 scenarios passed again on the compiled JavaScript; 2 unit tests skipped, not checked again: "a Mooncake trace replays" (no ../shared/data/mooncake here), "later"',
  });
  assert.equal(model.verdict, 'QUALIFIED', 'a skip is not a failure');
  assert.deepEqual(model.attention, [{ text: 'The coverage run skipped 2 unit tests: "a Mooncake trace replays" (no ../shared/data/mooncake here), "later".', href: '#coverage' }]);
  assert.match(renderMarkdown(model), /### Failures of the compiled coverage run\n\n- unit test "a Mooncake trace replays" skipped, not checked again: no \.\.\/shared\/data\/mooncake here\n- unit test "later" skipped, not checked again\n/);
  assert.match(renderHtml(model), /unit test “a Mooncake trace replays” skipped, not checked again: no \.\.\/shared\/data\/mooncake here/);
  const json = toSignoffJson(model);
  assert.deepEqual(parseSignoffJson(JSON.stringify(json), 'signoff.json').coverage_run?.skipped, run.skipped);
});

test('traceability counts its problems apart, whichever two of them are present', () => {
  const summary = (scenarios: FakeScenario[]) => gateOf(buildSignoff(input(scenarios)), 'Requirement traceability');
  assert.equal(summary([scenario('one', 10, { tags: ['@AISIM-1893'] }), scenario('untagged', 20, { tags: [] })]).passed, false, 'untraced and uncovered');
  assert.equal(summary([scenario('both', 10, { tags: ['@AISIM-1893', '@LAG-1', '@AISIM-9999'] }), scenario('untagged', 20, { tags: [] })]).passed, false, 'untraced and unknown');
});

test('a scenario only in the second run, or in another feature file, gets its own place; short digests, status words', () => {
  const model = buildSignoff(input([scenario('one', 10)], [scenario('one', 10), scenario('new', 20)]));
  assert.match(gateOf(model, 'Determinism').summary, /1 scenario differed between the two runs: "new"/);
  assert.deepEqual(model.views.map((v) => [v.scenario.name, v.changed]), [['one', false]]);
  const twoFiles = buildSignoff(input([scenario('one', 10), scenario('two', 10, { uri: 'features/engine/admission.feature' }), scenario('three', 20)]));
  assert.deepEqual(twoFiles.features.map((group) => [group.uri, group.views.map((v) => v.scenario.name)]), [
    ['features/engine/admission.feature', ['two']],
    ['features/router/lag.feature', ['one', 'three']],
  ]);
  assert.equal(shortDigest(null), '—');
  assert.equal(shortDigest(`sha256:${'0123456789abcdef'.repeat(4)}`), 'sha256:0123456789ab…');
  assert.equal(shortDigest('sha256:0123'), 'sha256:0123', 'a digest too short to cut is shown whole');
  assert.deepEqual(['NOT RUN', 'PASSED', 'UNDEFINED'].map((s) => statusWord(s as never)), ['not run', 'passed', 'undefined']);
});

test('without a second run the determinism proof has no rows and is not identical; a row without a digest says why', () => {
  const run = parseRun(fakeMessages([scenario('s', 10)]));
  assert.deepEqual(compareRuns(run, null), { rerun: false, rows: [], differences: [], identical: false, problem: 'the second run produced no message stream', perturbed: [] });
  assert.equal(compareRuns(run, run).rerun, true);
  const noDigest = parseRun(fakeMessages([scenario('s', 10, { evidence: { ...evidence, digest: null } })]));
  const rows = compareRuns(noDigest, parseRun(fakeMessages([scenario('s', 10, { evidence: { ...evidence, digest: null } }), scenario('t', 20, { evidence: { ...evidence, digest: null } })]))).rows;
  assert.deepEqual(rows.map((row) => [row.first, row.second]), [
    ['(no simulation; passed)', '(no simulation; passed)'],
    [null, '(no simulation; passed)'],
  ]);
  const failing = { ...evidence, timeline: { ...evidence.timeline, failure: { message: 'boom' } as never } };
  assert.equal(evidenceDifference(failing, evidence), `failure: boom vs ${evidence.timeline.failure?.message ?? 'none'}`);
});

// ── Reading the message stream: every envelope that decides a result is read (found by mutation testing the reader) ──

type Envelopes = Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
/** The run of these scenarios, its envelopes changed by `change` first. */
function editedRun(scenarios: FakeScenario[], change: (envelopes: Envelopes) => Envelopes | void): ReturnType<typeof parseRun> {
  const envelopes = fakeMessages(scenarios).trimEnd().split('\n').map((line) => JSON.parse(line) as Envelopes[number]);
  const changed = change(envelopes) ?? envelopes;
  return parseRun(`${changed.map((e) => JSON.stringify(e)).join('\n')}\n`);
}

test('a retried scenario is read from its last attempt, and the retry is a problem of the run that fails the scenarios gate', () => {
  const failedOnce = scenario('flaky', 10);
  const run = editedRun([failedOnce], (envelopes) => {
    // Attempt 0 fails its first step; attempt 1, after it, passes every step.
    const started = envelopes.find((e) => e.testCaseStarted)!.testCaseStarted;
    const steps = envelopes.filter((e) => e.testStepFinished && e.testStepFinished.testCaseStartedId === started.id);
    const retried = [{ testCaseStarted: { ...started, id: 'started-retry', attempt: 1 } }, ...steps.map((e) => ({ testStepFinished: { ...e.testStepFinished, testCaseStartedId: 'started-retry' } }))];
    steps[0].testStepFinished.testStepResult = { status: 'FAILED', message: 'boom', duration: { seconds: 0, nanos: 1 } };
    const end = envelopes.findIndex((e) => e.testRunFinished);
    return [...envelopes.slice(0, end), ...retried, ...envelopes.slice(end)];
  });
  assert.equal(run.scenarios[0].status, 'PASSED', 'the last attempt passed');
  assert.deepEqual(run.runErrors, ['features/router/lag.feature:10 "flaky" ran 2 times (cucumber\'s retry): a scenario that passes only on a retry is flaky; run without --retry']);
  const model = buildSignoff({ ...input([failedOnce]), run, determinism: compareRuns(run, run) });
  assert.deepEqual(gateOf(model, 'Scenarios'), { title: 'Scenarios', passed: false, summary: '1 of 1 scenario passed; the run itself reported 1 problem' });
});

test('a feature file that does not parse is a problem of the run, named with its file and line', () => {
  const run = editedRun([scenario('passes', 10)], (envelopes) => {
    envelopes.splice(1, 0, { parseError: { source: { uri: 'features/broken.feature', location: { line: 7 } }, message: 'expected: #TagLine, got: Scenari' } }, { parseError: { source: {}, message: 'no location' } });
  });
  assert.deepEqual(run.runErrors, ['features/broken.feature:7: expected: #TagLine, got: Scenari', '?: no location']);
});

test('the run\'s own end: a failure it reports is a problem; success, or a plain failed scenario, is not', () => {
  const finished = (result: Record<string, unknown>) => editedRun([scenario('passes', 10)], (envelopes) => envelopes.map((e) => (e.testRunFinished ? { testRunFinished: { ...result, timestamp: e.testRunFinished.timestamp } } : e))).runErrors;
  assert.deepEqual(finished({ success: false, exception: { message: 'BeforeAll hook threw' } }), ['the run reported: BeforeAll hook threw']);
  assert.deepEqual(finished({ success: false, message: 'step definitions could not load' }), ['the run reported: step definitions could not load']);
  assert.deepEqual(finished({ success: false }), [], 'a failed scenario fails its own gate, not the run');
  assert.deepEqual(finished({ success: true, message: 'all good' }), []);
});

test('a step without a result in a started scenario is UNKNOWN, and a scenario never started lists its steps as not run', () => {
  const cut = editedRun([scenario('cut short', 10)], (envelopes) => envelopes.filter((e) => !(e.testStepFinished && e === envelopes.filter((x) => x.testStepFinished).at(-2))));
  assert.equal(cut.scenarios[0].status, 'UNKNOWN');
  assert.deepEqual(cut.scenarios[0].steps.map((step) => step.status), ['PASSED', 'PASSED', 'UNKNOWN']);
  const never = parseRun(fakeMessages([scenario('never', 10, { notRun: true })]));
  assert.deepEqual(never.scenarios[0].steps.map((step) => [step.keyword, step.text, step.status]), [
    ['Given', 'a cluster of 2 aggregated workers with 4-token blocks', 'NOT RUN'],
    ['When', 'a request starting with "system prompt" arrives at 15 ms', 'NOT RUN'],
    ['Then', 'it is placed on worker 1, which holds it in G2', 'NOT RUN'],
  ]);
  assert.equal(never.scenarios[0].evidenceError, null, 'nothing ran, so no evidence is missing');
});

test('attachments: base64 text is decoded, the evidence is read apart and unreadable evidence says why, the perturbation note is found', () => {
  const run = editedRun([scenario('noted', 10)], (envelopes) => {
    const evidenceAt = envelopes.findIndex((e) => e.attachment);
    const { testCaseStartedId, testStepId } = envelopes[evidenceAt].attachment;
    const text = (body: string, fileName: string) => ({ attachment: { testCaseStartedId, testStepId, body: Buffer.from(body).toString('base64'), contentEncoding: 'BASE64', mediaType: 'text/plain', fileName } });
    envelopes.splice(evidenceAt + 1, 0, text('a note for the reader', 'why.txt'), text('one extra KV event', 'perturbation.txt'));
  });
  const [noted] = run.scenarios;
  assert.ok(noted.evidence !== null && noted.evidenceError === null);
  assert.deepEqual(noted.attachments.map((a) => [a.fileName, a.text]), [['why.txt', 'a note for the reader'], ['perturbation.txt', 'one extra KV event']], 'the evidence is not among them');
  assert.equal(noted.perturbation, 'one extra KV event');
  const unreadable = editedRun([scenario('garbled', 10)], (envelopes) => {
    const evidence = envelopes.find((e) => e.attachment)!.attachment;
    evidence.body = '{"format": "not evidence"';
  });
  assert.equal(unreadable.scenarios[0].evidence, null);
  assert.match(unreadable.scenarios[0].evidenceError!, /^evidence attachment unreadable: /);
  assert.equal(unreadable.scenarios[0].perturbation, null);
});

test("a scenario inside a Rule carries the rule's name and its steps' keywords; step definitions' phrases and the sources are read", () => {
  const run = editedRun([scenario('ruled', 10)], (envelopes) => {
    const document = envelopes.find((e) => e.gherkinDocument)!.gherkinDocument;
    document.feature.children = [{ rule: { name: 'a rule', children: document.feature.children } }];
    envelopes.push({ stepDefinition: { id: 'sd-1', pattern: { source: 'a cluster of {int} aggregated workers', type: 'CUCUMBER_EXPRESSION' } } });
  });
  assert.equal(run.scenarios[0].rule, 'a rule');
  assert.equal(run.scenarios[0].steps[0].keyword, 'Given');
  assert.deepEqual(run.phrases, ['a cluster of {int} aggregated workers']);
  assert.deepEqual(run.sources.map((s) => s.uri), ['features/router/lag.feature']);
  assert.equal(run.scenarios[0].feature.description, 'Why it matters.');
});

test('a line of the stream that is not JSON is a problem naming its line; scenarios are ordered by file and line', () => {
  const text = fakeMessages([scenario('b', 20), scenario('a', 10), scenario('z', 5, { uri: 'features/agentic/z.feature' })]);
  const run = parseRun(`${text.split('\n').slice(0, 2).join('\n')}\n{not json\n${text.split('\n').slice(2).join('\n')}`);
  assert.deepEqual(run.runErrors, ['message stream line 3 is not JSON (truncated run?)']);
  assert.deepEqual(run.scenarios.map((s) => s.key), ['features/agentic/z.feature:5', 'features/router/lag.feature:10', 'features/router/lag.feature:20']);
  assert.deepEqual(run.sources.map((s) => s.uri), ['features/agentic/z.feature', 'features/router/lag.feature']);
});

test('a passed scenario that ran no simulation and recorded no computation checked nothing: the scenarios gate fails, naming it', () => {
  const vacuous = scenario('claims sixteen shared blocks', 20, { evidence: emptyEvidence(1893, [measurement('leading blocks shared', 16, 'blocks')]) });
  const model = buildSignoff(input([scenario('sees the store', 10), vacuous]));
  assert.equal(model.verdict, 'NOT QUALIFIED');
  const gate = model.gates.find((g) => g.title === 'Scenarios')!;
  assert.equal(gate.passed, false);
  assert.match(gate.summary, /^2 of 2 scenarios passed; 1 passed scenario checked nothing \(no simulation ran and no computation was recorded, .*\): "claims sixteen shared blocks"$/);
  assert.ok(model.attention.some((a) => a.text.startsWith('Scenarios: ')), 'named under Needs attention');
  // One that failed already fails the gate as failed, not as having checked nothing.
  const failedEmpty = scenario('stops early', 20, { evidence: emptyEvidence(1893), steps: [{ keyword: 'Given', text: 'x', status: 'UNDEFINED' }] });
  assert.doesNotMatch(buildSignoff(input([scenario('sees the store', 10), failedEmpty])).gates[0].summary, /checked nothing/);
});

test('a passed scenario with no Then checked nothing: the gate fails naming it, Gaps and signoff.json list it, its requirements are not covered', () => {
  const given = { keyword: 'Given', text: 'a cluster of 2 aggregated workers with 4-token blocks', status: 'PASSED' as const };
  const when = { keyword: 'When', text: 'a request starting with "system prompt" arrives at 15 ms', status: 'PASSED' as const };
  const noThen = scenario('places a request and claims nothing', 20, { tags: ['@LAG-1'], steps: [given, when] });
  const model = buildSignoff(input([scenario('sees the store', 10, { tags: ['@AISIM-1893'] }), noThen]));
  assert.equal(model.verdict, 'NOT QUALIFIED');
  const gate = model.gates.find((g) => g.title === 'Scenarios')!;
  assert.equal(gate.passed, false);
  assert.equal(gate.summary, '2 of 2 scenarios passed; 1 passed scenario had no Then step, so nothing was asserted: "places a request and claims nothing"');
  assert.deepEqual(model.checkedNothing.map(({ view, why }) => [view.scenario.name, why]), [['places a request and claims nothing', 'had no Then step, so nothing was asserted']]);
  const lag = model.matrix.find((row) => row.requirement.id === 'LAG-1')!;
  assert.deepEqual([lag.ok, lag.status], [false, '1 of 1 passed but checked nothing']);
  assert.equal(model.matrix.find((row) => row.requirement.id === 'AISIM-1893')!.ok, true);
  const gaps = renderMarkdown(model).split('### Passed scenarios that checked nothing')[1].split('###')[0];
  assert.match(gaps, /places a request and claims nothing.*features\/router\/lag\.feature:20.*had no Then step, so nothing was asserted/);
  assert.match(renderHtml(model), /<h3>Passed scenarios that checked nothing<\/h3>\n<ul><li>.*places a request and claims nothing.*had no Then step/);
  const json = toSignoffJson(model);
  assert.deepEqual(json.gaps.checked_nothing, [{ key: 'features/router/lag.feature:20', why: 'had no Then step, so nothing was asserted' }]);
  // `*` steps are no Then either; an And after a Then is one; a stream without step types is read by the keyword.
  const bullets = scenario('bullets', 30, { steps: [{ ...given, keyword: '*' }, { ...when, keyword: '*' }] });
  const andAfterThen = scenario('and after then', 40, { steps: [given, { keyword: 'Then', text: 'x', status: 'PASSED' }, { keyword: 'And', text: 'y', status: 'PASSED' }] });
  const untypedThen = scenario('untyped then', 50, { steps: [{ ...given, type: null }, { keyword: 'Then', text: 'x', status: 'PASSED', type: null }] });
  const untypedNoThen = scenario('untyped without then', 60, { steps: [{ ...given, type: null }, { ...when, type: null }] });
  const names = buildSignoff(input([bullets, andAfterThen, untypedThen, untypedNoThen])).checkedNothing.map(({ view }) => view.scenario.name);
  assert.deepEqual(names, ['bullets', 'untyped without then']);
  // A scenario without a Then that failed is counted as failed, not as having checked nothing.
  const failed = scenario('fails early', 20, { steps: [given, { ...when, status: 'FAILED' }] });
  assert.deepEqual(buildSignoff(input([failed])).checkedNothing, []);
});

test('checked nothing for both reasons at once: the gate names each kind with its scenarios, in order; a requirement with a failed and an empty scenario says both; the keyword of another language is read by its type', () => {
  const given = { keyword: 'Given', text: 'a cluster of 2 aggregated workers with 4-token blocks', status: 'PASSED' as const };
  const when = { keyword: 'When', text: 'a request starting with "system prompt" arrives at 15 ms', status: 'PASSED' as const };
  const then = { keyword: 'Then', text: 'it is placed on worker 1, which holds it in G2', status: 'PASSED' as const };
  const tags = ['@LAG-1'];
  const scenarios = [
    scenario('first without then', 10, { tags, steps: [given, when] }),
    scenario('no digest', 20, { tags, evidence: emptyEvidence(1893) }),
    scenario('second without then', 30, { tags, steps: [given, when] }),
    scenario('fails', 40, { tags, steps: [given, when, { ...then, status: 'FAILED' }] }),
    // Gherkin in French: "Alors" is a Then by its type, though not by its keyword.
    scenario('en français', 50, { tags: ['@AISIM-1893'], steps: [{ ...given, keyword: 'Soit', type: 'Context' }, { ...when, keyword: 'Quand', type: 'Action' }, { ...then, keyword: 'Alors', type: 'Outcome' }] }),
  ];
  const model = buildSignoff(input(scenarios));
  assert.equal(
    model.gates.find((g) => g.title === 'Scenarios')!.summary,
    '4 of 5 scenarios passed (1 failed); 2 passed scenarios had no Then step, so nothing was asserted: "first without then", "second without then"' +
      '; 1 passed scenario checked nothing (no simulation ran and no computation was recorded, so nothing its Then steps could have checked): "no digest"',
  );
  assert.equal(model.matrix.find((row) => row.requirement.id === 'LAG-1')!.status, '1 of 4 not passed; 3 of 4 passed but checked nothing');
  assert.deepEqual(model.checkedNothing.map(({ view }) => view.scenario.name), ['first without then', 'no digest', 'second without then']);
  assert.equal(model.matrix.find((row) => row.requirement.id === 'AISIM-1893')!.ok, true);
});

test('evidence attached twice (a step of its own beside the hook) is a problem of the run, and the scenario has no evidence to compare', () => {
  const run = editedRun([scenario('files its own evidence', 10)], (envelopes) => {
    const at = envelopes.findIndex((e) => e.attachment);
    const fake = { ...envelopes[at].attachment, body: JSON.stringify(emptyEvidence(1893)) };
    envelopes.splice(at, 0, { attachment: fake });
  });
  const [only] = run.scenarios;
  assert.equal(only.evidence, null);
  assert.equal(only.evidenceError, 'evidence attached 2 times');
  assert.deepEqual(run.runErrors, ['features/router/lag.feature:10 "files its own evidence" attached its evidence 2 times: only kvqual\'s After hook attaches evidence, and a step\'s own could hide what the scenario really did']);
  assert.equal(compareRuns(run, run).identical, false, 'nothing to prove the scenario deterministic with');
});

test('determinism compares measured values too: the same digest with another measured value differs, naming the value', () => {
  const measured = (value: number) => scenario('measures a latency', 10, { evidence: { ...evidence, measurements: [measurement('host blocks counted on worker 1', 4, 'blocks'), measurement('audit latency', value, 'ms')] } });
  const a = parseRun(fakeMessages([measured(237)]));
  const b = parseRun(fakeMessages([measured(488)]));
  const result = compareRuns(a, b);
  assert.equal(result.identical, false);
  assert.deepEqual(result.differences.map((d) => d.reason), ['a measured value differs (audit latency: audit latency = 237 ms vs audit latency = 488 ms)']);
  const fewer = parseRun(fakeMessages([scenario('measures a latency', 10)]));
  assert.deepEqual(compareRuns(a, fewer).differences.map((d) => d.reason), ['a measured value differs (audit latency: audit latency = 237 ms vs none)']);
  assert.equal(compareRuns(a, parseRun(fakeMessages([measured(237)]))).identical, true);
});

test('what changed the suite or its gates is named under Needs attention: fewer generated workloads than the default, a subset suite or registry, a seed or unit folder set in the environment', () => {
  const clean = { ...input([scenario('passes', 10)]), coverage: MEASURED, coverageRun: { unitFiles: 1, unitTests: 1, scenarios: 1, failures: [], problems: [] }, generated: WHOLE_CAMPAIGN };
  const repository = { features: 'features', requirements: 'requirements.yaml', requirements_digest: `sha256:${'a'.repeat(64)}`, repository_suite: true };
  assert.deepEqual(buildSignoff({ ...clean, scope: repository, environment: [] }).attention, []);
  const texts = (changes: Partial<SignoffInput>) => buildSignoff({ ...clean, scope: repository, ...changes }).attention.map((a) => a.text);
  assert.deepEqual(texts({ generated: { ...WHOLE_CAMPAIGN, runs: 30, passed: 30 } }), ['Only 30 generated workloads ran (--fuzz-runs 30), fewer than the 1000 a sign-off runs by default: a counterexample further into the campaign would not be seen.']);
  const subset = { features: 'features/blocks', requirements: '/tmp/req-small.yaml', requirements_digest: `sha256:${'b'.repeat(64)}`, repository_suite: false };
  assert.deepEqual(texts({ scope: subset }), [`Not the repository's suite: the features of features/blocks/ and the requirements of /tmp/req-small.yaml (sha256:bbbbbbbbbbbb…) ran, where the repository's are features/ and requirements.yaml: this sign-off qualifies that suite only.`]);
  const model = buildSignoff({ ...clean, scope: subset });
  assert.match(renderMarkdown(model), /\| Requirements \| `\/tmp\/req-small\.yaml` `sha256:b{64}` — not the repository's suite \|/);
  assert.match(renderHtml(model), /<th>Requirements<\/th><td><code>\/tmp\/req-small\.yaml<\/code> .* — not the repository's suite/);
  assert.deepEqual(toSignoffJson(model).scope, subset);
  assert.deepEqual(texts({ environment: [{ name: 'KVQUAL_FIGURE_CACHE', value: '/tmp/figures', meaning: 'the figures were taken from, or not from, another figure cache than the per-user default' }] }), ['KVQUAL_FIGURE_CACHE=/tmp/figures: the figures were taken from, or not from, another figure cache than the per-user default.']);
  assert.deepEqual(texts({ coverage: null }), ['Coverage was not measured: not requested.'], 'a coverage run with no summary measured nothing');
});

test('the coverage run counts the unit tests that passed as TAP counts them: a skipped suite is not a test that did not pass', () => {
  const run = { unitFiles: 1, unitTests: 3, unitPassed: 1, scenarios: 1, failures: [], problems: [], skipped: [{ name: 'skipped', why: '' }, { name: 'to do', why: 'flaky' }, { name: 'whole suite skipped', why: '' }] };
  assert.match(gateOf(buildSignoff({ ...input([scenario('passes', 10)]), coverage: MEASURED, coverageRun: run }), 'Coverage run').summary, /^1 of 3 unit tests and all 1 scenario passed again/);
});

test('two feature files whose paths slug alike get anchors (and figure files) of their own; others keep the plain anchor', () => {
  const one = scenario('at 10 ms', 14, { uri: 'fx/same_instant.feature' });
  const two = scenario('at 20 ms', 14, { uri: 'fx/same-instant.feature' });
  const model = buildSignoff(input([one, two, scenario('elsewhere', 30)]));
  const anchors = model.views.map((v) => v.anchor);
  assert.equal(new Set(anchors).size, 3, anchors.join(', '));
  assert.deepEqual(anchors.map((a) => a.replace(/-[0-9a-f]{8}$/, '-HASH')).sort(), ['sc-features-router-lag-30', 'sc-fx-same-instant-14-HASH', 'sc-fx-same-instant-14-HASH']);
});

test('scenarios neither run ran (a merge missing their shard) are said to be not proven, not to have differed', () => {
  const never = scenario('never ran', 20, { notRun: true });
  const model = buildSignoff(input([scenario('ran', 10), never], [scenario('ran', 10), never]));
  assert.equal(gateOf(model, 'Determinism').summary, '1 scenario not run in either run, so not proven: "never ran"');
  const both = buildSignoff(input([scenario('ran', 10), never, scenario('gone', 30)], [scenario('ran', 10), never]));
  assert.equal(gateOf(both, 'Determinism').summary, '1 scenario differed between the two runs: "gone"; 1 scenario not run in either run, so not proven: "never ran"');
});

test('a scenario that did not pass in the compiled run fails the coverage run gate, named; a compiled run without a stream is a problem of it; the scenarios alone are counted', () => {
  const run = { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], skipped: [], problems: [] } as CoverageRun;
  const compiled = parseRun(fakeMessages([scenario('passes', 10), scenario('fails compiled', 20, { steps: [{ keyword: 'Then', text: 'it is placed on worker 1, which holds it in G2', status: 'FAILED', message: 'expected worker 1\nstack' }] })]));
  compiledScenarioFailures({ run: compiled, problem: null }, run, null);
  assert.deepEqual(run.failures, [{ kind: 'scenario', name: 'fails compiled', where: 'features/router/lag.feature:20', why: 'failed: expected worker 1' }]);
  const model = buildSignoff({ ...input([scenario('passes', 10), scenario('fails compiled', 20)]), coverage: MEASURED, coverageRun: run });
  assert.equal(gateOf(model, 'Coverage run').summary, 'on the compiled JavaScript, 1 scenario did not pass: "fails compiled"');
  assert.equal(gateOf(model, 'Coverage run').passed, false);
  const passing = { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], skipped: [], problems: [] } as CoverageRun;
  compiledScenarioFailures({ run: parseRun(fakeMessages([scenario('passes', 10)])), problem: null }, passing, null);
  assert.equal(gateOf(buildSignoff({ ...input([scenario('passes', 10)]), coverage: MEASURED, coverageRun: passing }), 'Coverage run').summary, 'all 1 scenario passed again on the compiled JavaScript');
  const none = { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], skipped: [], problems: [] } as CoverageRun;
  compiledScenarioFailures({ run: null, problem: 'cucumber wrote no message stream (coverage-messages.ndjson)' }, none, null);
  assert.deepEqual(none.problems, ['the compiled feature run: cucumber wrote no message stream (coverage-messages.ndjson)']);
  assert.equal(gateOf(buildSignoff({ ...input([scenario('passes', 10)]), coverage: MEASURED, coverageRun: none }), 'Coverage run').passed, false);
});

test('a scenario moved to another feature file (same name and steps) is matched with its baseline as moved, from where to where, not added and removed', () => {
  const before = toSignoffJson(buildSignoff(input([scenario('steady', 10), scenario('travels', 20)])));
  const moved = scenario('travels', 7, { uri: 'features/router/lag_moved.feature' });
  const model = buildSignoff({ ...input([scenario('steady', 10), moved]), baseline: before });
  const diff = model.baseline!;
  assert.deepEqual([diff.added, diff.removed], [[], []]);
  assert.deepEqual(diff.renamed.map((c) => [c.before, c.after]), [['features/router/lag.feature:20', 'features/router/lag_moved.feature:7']]);
  // Another name in another file is not a move: added and removed.
  const renamedAway = buildSignoff({ ...input([scenario('steady', 10), scenario('elsewhere', 7, { uri: 'features/router/lag_moved.feature' })]), baseline: before }).baseline!;
  assert.deepEqual([renamedAway.added.map((c) => c.name), renamedAway.removed.map((c) => c.name)], [['elsewhere'], ['travels']]);
});

test('"Produced by" gives each argument as a shell reads it back: a folder with a space, a quote, a $ or backticks stays one word, unexpanded', () => {
  const options = parseQualifyArgs(['--out', 'my reports/$HOME `x`', '--campaign', "it's", '--fuzz-runs', '5']);
  assert.equal(commandOf(options, { perturbation: null, planted: false }), "npm run qualify -- --out 'my reports/$HOME `x`' --campaign 'it'\\''s' --fuzz-runs 5");
});
