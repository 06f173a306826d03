// Unit tests of the narrowed verdict (src/signoff/narrowed.ts and the model's use of it): each way
// a run is narrowed gives "PASSED — NOT A RELEASE SIGN-OFF", exit status 3, `"qualified": false`
// with its reason and no approval block; a failing gate still gives NOT QUALIFIED; only the
// project's whole run from a clean tree, with no variable that changes it, is QUALIFIED.
import { unitSignoffInput } from '../support/signoffInput';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exitStatusOf, NARROWED_EXIT_STATUS, NARROWED_VERDICT, narrowedReasons, RunFacts, RUN_CHANGING_VARIABLES, TRANSPORT_GIT_VARIABLES, variablesThatChangeRun } from '../../src/signoff/narrowed';
import { buildSignoff, SignoffInput } from '../../src/signoff/model';
import { parseRun } from '../../src/signoff/messages';
import { compareRuns } from '../../src/signoff/determinism';
import { parseRegistry } from '../../src/signoff/requirements';
import { fakeMessages } from '../support/messages';
import { evidenceFromRouterReplay } from '../../src/report/evidence';
import { lagReplay } from '../support/replays';
import { toSignoffJson } from '../../src/signoff/json';
import { parseSignoffJson } from '../../src/signoff/jsonSchema';
import { renderMarkdown } from '../../src/signoff/markdown';
import { renderHtml } from '../../src/signoff/html';
import { QUALIFY_USAGE } from '../../src/signoff/driver';

const WHOLE: RunFacts = { features: 'features', requirements: 'requirements.yaml', coverage: true, fuzzRuns: 1000, worktree: 'clean working tree', variables: [] };

test("the project's whole run from a clean tree is not narrowed", () => {
  assert.deepEqual(narrowedReasons(WHOLE), []);
  assert.deepEqual(narrowedReasons({ ...WHOLE, fuzzRuns: 5000 }), [], 'more generated workloads than the default narrow nothing');
});

test('each way of narrowing a run is named, all at once', () => {
  const cases: [Partial<RunFacts>, RegExp][] = [
    [{ features: 'test/fixtures/x/features' }, /^the features of test\/fixtures\/x\/features\/ ran, not the project's features\/$/],
    [{ requirements: 'other.yaml' }, /^the requirements of other\.yaml were checked, not the project's requirements\.yaml$/],
    [{ coverage: false }, /^--no-coverage: /],
    [{ fuzzRuns: 999 }, /^--fuzz-runs 999: fewer generated workloads than the 1000 of a release sign-off$/],
    [{ fuzzRuns: 0 }, /^--fuzz-runs 0: /],
    [{ worktree: 'working tree differs from the commit in 2 files' }, /^working tree differs from the commit in 2 files: what ran may not be the commit named$/],
    [{ worktree: 'no git information' }, /^no git information: /],
    [{ variables: [{ name: 'NODE_OPTIONS', value: '--require x', meaning: 'loads code' }] }, /^NODE_OPTIONS is set \(NODE_OPTIONS=--require x\): loads code$/],
  ];
  for (const [change, expected] of cases) {
    const reasons = narrowedReasons({ ...WHOLE, ...change });
    assert.equal(reasons.length, 1, JSON.stringify(change));
    assert.match(reasons[0], expected);
  }
  const all = narrowedReasons({ features: 'f', requirements: 'r.yaml', coverage: false, fuzzRuns: 0, worktree: 'no git information', variables: [{ name: 'A', value: '1', meaning: 'm' }, { name: 'B', value: '2', meaning: 'n' }] });
  assert.equal(all.length, 7);
});

test("the variables that change a run: each listed one, any GIT_* but git's network ones, KVQUAL_SEED only when not the default; nothing else", () => {
  const env: NodeJS.ProcessEnv = { PATH: '/bin', HOME: '/h', KVQUAL_DEBUG: '1', KVQUAL_SIGNING_KEY: 'k', GIT_DIR: '/x/.git', GIT_WORK_TREE: '/y', GIT_SSL_CAINFO: '/etc/ssl/ca.crt', GIT_SSH_COMMAND: 'ssh', NODE_OPTIONS: '--require ./x.js', KVQUAL_SEED: '1893' };
  for (const name of Object.keys(RUN_CHANGING_VARIABLES)) if (name !== 'NODE_OPTIONS' && name !== 'KVQUAL_SEED') env[name] = 'v';
  const found = variablesThatChangeRun(env);
  const names = found.map((v) => v.name);
  assert.deepEqual(names, [...names].sort(), 'in name order');
  assert.deepEqual(new Set(names), new Set([...Object.keys(RUN_CHANGING_VARIABLES).filter((n) => n !== 'KVQUAL_SEED'), 'GIT_DIR', 'GIT_WORK_TREE']));
  assert.equal(found.find((v) => v.name === 'NODE_OPTIONS')!.value, '--require ./x.js');
  assert.match(found.find((v) => v.name === 'GIT_DIR')!.meaning, /git variable/);
  assert.equal(found.find((v) => v.name === 'KVQUAL_FIGURE_CACHE')!.meaning, RUN_CHANGING_VARIABLES.KVQUAL_FIGURE_CACHE);
  assert.deepEqual(variablesThatChangeRun({ KVQUAL_SEED: '' }), [], 'an empty seed is the default');
  assert.deepEqual(variablesThatChangeRun({ KVQUAL_SEED: '7' }), [{ name: 'KVQUAL_SEED', value: '7', meaning: 'the scenarios and the generated workloads ran with seed 7, not the default 1893' }]);
  assert.deepEqual(variablesThatChangeRun({ KVQUAL_FIGURE_CACHE: '' }).map((v) => v.name), ['KVQUAL_FIGURE_CACHE'], 'set, even empty');
  assert.deepEqual(variablesThatChangeRun({ KVQUAL_FUZZ_TEST_RUNS: '5', KVQUAL_TRACE_MUTATIONS: '5', KVQUAL_COVERAGE_UNITS: 'x', KVQUAL_BUILD: 'b' }), [], 'the unit tests\' variables: qualify runs no unit test');
  assert.deepEqual(variablesThatChangeRun({ NODE_OPTIONS: undefined }), []);
});

test("each variable's meaning says what it changes; each of git's network variables alone changes nothing", () => {
  for (const [name, meaning] of Object.entries(RUN_CHANGING_VARIABLES)) assert.match(meaning, /^(every|the) .{30,}$/, name);
  assert.deepEqual(TRANSPORT_GIT_VARIABLES.filter((name) => !name.startsWith('GIT_')), []);
  for (const name of TRANSPORT_GIT_VARIABLES) assert.deepEqual(variablesThatChangeRun({ [name]: 'x' }), [], name);
  assert.deepEqual(TRANSPORT_GIT_VARIABLES, ['GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'GIT_ASKPASS', 'GIT_TERMINAL_PROMPT', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_HTTP_USER_AGENT', 'GIT_PROXY_COMMAND']);
});

test('the usage names the narrowed verdict, its exit status and every variable', () => {
  assert.match(QUALIFY_USAGE, new RegExp(`${NARROWED_EXIT_STATUS} ${NARROWED_VERDICT}`));
  for (const name of ['GIT_*', ...Object.keys(RUN_CHANGING_VARIABLES)]) assert.ok(QUALIFY_USAGE.includes(name), name);
});

const REGISTRY = parseRegistry('requirements:\n  - { id: LAG-1, title: Lag is exact, source: semantics.md, owner: QA }\n');

function signoffInput(narrowed: string[] | undefined, status: 'PASSED' | 'FAILED' = 'PASSED'): SignoffInput {
  const scenarios = [
    {
      uri: 'features/a.feature',
      line: 3,
      name: 'lag',
      tags: ['@LAG-1'],
      steps: [
        { keyword: 'Given', text: 'a cluster', status: 'PASSED' as const },
        { keyword: 'Then', text: 'it holds', status },
      ],
      evidence: evidenceFromRouterReplay(lagReplay(), 1893),
    },
  ];
  const run = parseRun(fakeMessages(scenarios));
  return unitSignoffInput(run, REGISTRY, {
    determinism: compareRuns(run, parseRun(fakeMessages(scenarios))),
    coverageNote: 'n',
    ...(narrowed === undefined ? {} : { narrowed }),
  });
}

test('a narrowed run that passed every gate: its own verdict and exit status, qualified false with its reasons, no approval block', () => {
  const model = buildSignoff(signoffInput(['--no-coverage: x', 'NODE_OPTIONS is set']));
  assert.ok(model.gates.every((g) => g.passed));
  assert.equal(model.verdict, NARROWED_VERDICT);
  assert.equal(model.qualified, false);
  assert.equal(exitStatusOf(model), 3);
  assert.match(model.attention[0].text, /^Not a release sign-off: --no-coverage: x; NODE_OPTIONS is set\.$/);
  const json = toSignoffJson(model);
  assert.equal(json.qualified, false);
  assert.equal(json.verdict, NARROWED_VERDICT);
  assert.deepEqual(json.narrowed, ['--no-coverage: x', 'NODE_OPTIONS is set']);
  assert.deepEqual(parseSignoffJson(JSON.stringify(json), 's.json'), json, 'read back');
  const md = renderMarkdown(model);
  assert.match(md, /\| Verdict \| \*\*PASSED — NOT A RELEASE SIGN-OFF\*\* ❌ \|/);
  assert.doesNotMatch(md, /## Approval|Approved by/);
  assert.match(md, /## Not a release sign-off\n\n.*\n\n- --no-coverage: x\n- NODE\\?_OPTIONS is set\n/);
  const html = renderHtml(model);
  assert.doesNotMatch(html, /id="approval"|Approved by/);
  assert.match(html, /id="not-a-sign-off".*<li>--no-coverage: x<\/li><li>NODE_OPTIONS is set<\/li>/);
  assert.match(html, /class="verdict bad"/);
});

test('a whole run is QUALIFIED with its approval block; a failing gate is NOT QUALIFIED however narrowed', () => {
  for (const narrowed of [undefined, []]) {
    const model = buildSignoff(signoffInput(narrowed));
    assert.equal(model.verdict, 'QUALIFIED');
    assert.equal(exitStatusOf(model), 0);
    assert.match(renderMarkdown(model), /## Approval/);
    assert.match(renderHtml(model), /id="approval"/);
  }
  const failed = buildSignoff(signoffInput(['--no-coverage: x'], 'FAILED'));
  assert.equal(failed.verdict, 'NOT QUALIFIED');
  assert.equal(exitStatusOf(failed), 1);
  assert.deepEqual(toSignoffJson(failed).narrowed, ['--no-coverage: x'], 'its reasons are still recorded');
  assert.doesNotMatch(renderMarkdown(failed), /## Not a release sign-off/);
  assert.ok(!failed.attention.some((a) => a.text.startsWith('Not a release sign-off')));
});

test('a check computed outside the model fails the verdict when it failed', () => {
  const model = buildSignoff({ ...signoffInput(undefined), checks: [{ title: 'Channels', passed: false, summary: 'disagree' }] });
  assert.equal(model.verdict, 'NOT QUALIFIED');
  assert.equal(buildSignoff({ ...signoffInput(undefined), checks: [{ title: 'Channels', passed: true, summary: 'agree' }] }).verdict, 'QUALIFIED');
});

test('a signoff.json whose narrowed verdict contradicts its gates or its reasons is not one kvqual wrote', () => {
  const json = toSignoffJson(buildSignoff(signoffInput(['--no-coverage: x'])));
  const text = JSON.stringify(json);
  assert.throws(() => parseSignoffJson(JSON.stringify({ ...json, narrowed: [] }), 'e.json'), /it is PASSED — NOT A RELEASE SIGN-OFF but every gate passed and it names nothing that narrowed it/);
  assert.throws(() => parseSignoffJson(JSON.stringify({ ...json, verdict: 'NOT QUALIFIED' }), 'e.json'), /it is NOT QUALIFIED but every gate passed and it names why it is not a release sign-off/);
  const failedGate = { ...json, gates: [{ title: 'Scenarios', passed: false, summary: 's' }] };
  assert.throws(() => parseSignoffJson(JSON.stringify(failedGate), 'e.json'), /it is PASSED — NOT A RELEASE SIGN-OFF but the gate "Scenarios" failed/);
  assert.throws(() => parseSignoffJson(JSON.stringify({ ...json, verdict: 'QUALIFIED', qualified: true }), 'e.json'), /it is QUALIFIED but every gate passed and it names why/);
  assert.ok(parseSignoffJson(text, 'ok.json'));
});
