// The pure parts of qualification in shards (src/signoff/shards.ts): `--shard i/n` parsing, the
// share of a shard (cucumber's rule: index modulo n is i − 1), and the merge of message streams:
// ids of the other shards mapped onto the first stream's, test cases in the suite's order, one
// testRunFinished that fails when any shard's did, and a shard left out leaving its pickles without
// a test case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkShards, mergeStreams, parseShardManifest, parseShardSpec, SHARD_FORMAT, shareOf, suiteIdentity, type ShardInput, type ShardManifest } from '../../src/signoff/shards';
import { coverageClaimProblems, mergedSubject } from '../../src/signoff/driver';
import { figure } from '../../src/signoff/coverage';
import { fakeMessages } from '../support/messages';
import { parseRun } from '../../src/signoff/messages';
import type { CampaignResult } from '../../src/fuzz/campaign';

test('--shard i/n: 1 ≤ i ≤ n, whole numbers only', () => {
  assert.deepEqual(parseShardSpec('2/3'), { index: 2, count: 3 });
  assert.deepEqual(parseShardSpec('1/1'), { index: 1, count: 1 });
  assert.equal(parseShardSpec('0/3'), '--shard 0/3: the shard index must be from 1 to 3');
  assert.equal(parseShardSpec('4/3'), '--shard 4/3: the shard index must be from 1 to 3');
  assert.equal(parseShardSpec('1/0'), '--shard 1/0: the number of shards must be at least 1');
  for (const bad of ['x', '1/', '/3', '1.5/3', '-1/3', '1/3/4', ' 1/3']) assert.match(String(parseShardSpec(bad)), /expected i\/n/, bad);
});

test("each pickle is in exactly one shard's share, by its index modulo n", () => {
  const pickles = Array.from({ length: 10 }, (_, i) => `f.feature:${i + 1}`);
  const shares = [1, 2, 3].map((index) => shareOf(pickles, { index, count: 3 }));
  assert.deepEqual(shares[0], ['f.feature:1', 'f.feature:4', 'f.feature:7', 'f.feature:10']);
  assert.deepEqual(shares.flat().sort(), [...pickles].sort());
});

/** A message stream of a two-scenario suite in which this shard ran `ran` (pickle indexes), with its own ids. */
function stream(prefix: string, ran: number[], success = true): string {
  const id = (name: string) => `${prefix}-${name}-0000`;
  const lines: object[] = [
    { meta: { implementation: { name: 'cucumber-js', version: '12.9.0' } } },
    { source: { uri: 'a.feature', data: 'Feature: a', mediaType: 'text/x.cucumber.gherkin+plain' } },
    { gherkinDocument: { uri: 'a.feature', feature: { name: 'a', description: '', children: [] } } },
    ...[0, 1].map((i) => ({ pickle: { id: id(`pickle${i}`), uri: 'a.feature', location: { line: 3 + i * 4 }, name: `scenario ${i}`, tags: [], astNodeIds: [], steps: [{ id: id(`pstep${i}`), text: 'a step', astNodeIds: [] }] } })),
    { stepDefinition: { id: id('def'), pattern: { source: 'a step', type: 'CUCUMBER_EXPRESSION' } } },
    { testRunStarted: { id: id('run'), timestamp: { seconds: 1, nanos: 0 } } },
  ];
  for (const i of ran) lines.push({ testCase: { id: id(`case${i}`), pickleId: id(`pickle${i}`), testRunStartedId: id('run'), testSteps: [{ id: id(`tstep${i}`), pickleStepId: id(`pstep${i}`), stepDefinitionIds: [id('def')] }] } });
  for (const i of ran) {
    lines.push({ testCaseStarted: { id: id(`started${i}`), testCaseId: id(`case${i}`), attempt: 0, timestamp: { seconds: 1, nanos: 0 } } });
    lines.push({ testStepFinished: { testCaseStartedId: id(`started${i}`), testStepId: id(`tstep${i}`), testStepResult: { status: 'PASSED', duration: { seconds: 0, nanos: 1 } } } });
    lines.push({ testCaseFinished: { testCaseStartedId: id(`started${i}`), willBeRetried: false, timestamp: { seconds: 1, nanos: 0 } } });
  }
  lines.push({ testRunFinished: { testRunStartedId: id('run'), success, timestamp: { seconds: 2, nanos: 0 }, ...(success ? {} : { message: `${prefix} broke` }) } });
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

test('two shards merge into the stream of one run: ids mapped onto the first, every scenario run once, in the suite order', () => {
  const one = stream('aaaaaaaa', [0]);
  const two = stream('bbbbbbbb', [1]);
  assert.equal(suiteIdentity(one).digest, suiteIdentity(two).digest, 'one suite, whatever the ids');
  assert.deepEqual(suiteIdentity(two).ran, ['a.feature:7']);
  const merged = mergeStreams([
    { shard: 2, text: two },
    { shard: 1, text: one },
  ]);
  // The first stream given is the reference (the merge gives shard 1's first).
  assert.doesNotMatch(merged, /aaaaaaaa-(pickle|pstep|def|run)/, "the other stream's pickle, step, step definition and run ids are mapped onto the reference's");
  assert.match(merged, /"testCase":\{"id":"aaaaaaaa-case0-0000","pickleId":"bbbbbbbb-pickle0-0000"/, 'its own test case ids stay (they are unique)');
  const run = parseRun(merged);
  assert.deepEqual(
    run.scenarios.map((s) => [s.key, s.status]),
    [
      ['a.feature:3', 'PASSED'],
      ['a.feature:7', 'PASSED'],
    ],
  );
  assert.deepEqual(run.runErrors.filter((e) => !e.includes('evidence')), []);
  assert.equal(merged.split('\n').filter((line) => line.startsWith('{"testRunFinished"')).length, 1);
  assert.equal(merged.split('\n').filter((line) => line.startsWith('{"pickle"')).length, 2, 'the definitions once');
});

test('a failed shard run fails the merged run with its message; a shard left out leaves its scenario not run', () => {
  const merged = parseRun(mergeStreams([{ shard: 1, text: stream('aaaaaaaa', [0]) }, { shard: 2, text: stream('bbbbbbbb', [1], false) }]));
  assert.ok(merged.runErrors.includes('the run reported: shard 2: bbbbbbbb broke'), merged.runErrors.join('; '));
  const partial = parseRun(mergeStreams([{ shard: 1, text: stream('aaaaaaaa', [0]) }]));
  assert.deepEqual(
    partial.scenarios.map((s) => s.status),
    ['PASSED', 'NOT RUN'],
  );
});

// ── The merge's completeness check (checkShards) and the manifest reader, in this process ──

const SUITE = ['a', 'b', 'c'].map((name, i) => ({
  uri: 'features/router/lag.feature',
  line: 10 * (i + 1),
  name,
  tags: ['@LAG-1'],
  steps: [{ keyword: 'Then', text: `${name} holds`, status: 'PASSED' as const }],
}));

/** The message stream of shard `index` of `count`: its share run, the other pickles compiled but not run. */
function shardStream(index: number, count: number, suite = SUITE): string {
  return fakeMessages(suite.map((s, k) => (k % count === index - 1 ? s : { ...s, notRun: true })));
}

function manifest(index: number, count: number, change: { commit?: string; fuzzRuns?: number; digest?: string } = {}): ShardManifest {
  return {
    format: SHARD_FORMAT,
    shard: { index, count },
    suite: { digest: change.digest ?? suiteIdentity(shardStream(1, 1)).digest, scenarios: SUITE.length, features: 'features' },
    subject: { packageName: 'kvqual', packageVersion: '0.1.0', commit: change.commit ?? 'a'.repeat(40), worktree: 'clean working tree', node: 'v20.20.2' },
    settings: { fuzzRuns: change.fuzzRuns ?? 0, fuzzSeed: 1893, coverage: false },
    perturbation: null,
    command: 'npm run qualify -- --shard',
    generated: index === 1 && (change.fuzzRuns ?? 0) > 0 ? wholeCampaign(change.fuzzRuns!, 1893) : null,
    coverage: null,
  };
}

/** A campaign of `runs` cases that all passed. */
function wholeCampaign(runs: number, seed: number): CampaignResult {
  return { runs, seed, excluded_areas: [], only: [], passed: runs, too_heavy: 0, counterexample: null };
}

function shard(index: number, count: number, change: Parameters<typeof manifest>[2] = {}, streams: { first?: string | null; second?: string | null } = {}): ShardInput {
  const stream = shardStream(index, count);
  // The second run starts a second later: its stream is its own, not a copy of the first.
  const rerun = stream.replace('"testRunStarted":{"id":"run-1","timestamp":{"seconds":0,', '"testRunStarted":{"id":"run-1","timestamp":{"seconds":1,');
  return { dir: `s${index}`, manifest: manifest(index, count, change), first: streams.first === undefined ? stream : streams.first, second: streams.second === undefined ? rerun : streams.second };
}

test('a complete set of shards has no problem, and is used in shard order', () => {
  const check = checkShards([shard(3, 3), shard(1, 3), shard(2, 3)]);
  assert.deepEqual(check.problems, []);
  assert.deepEqual(check.used.map((s) => s.manifest.shard.index), [1, 2, 3]);
});

test('shard 1\'s generated-workload campaign must be the one the shards ran: there, of their cases and seed, and whole', () => {
  const withCampaign = (campaign: CampaignResult | null, settings = { fuzzRuns: 20, fuzzSeed: 1893, coverage: false }) => {
    const first = shard(1, 2, { fuzzRuns: 20 });
    first.manifest = { ...first.manifest, settings, generated: campaign };
    return checkShards([first, shard(2, 2, { fuzzRuns: 20 })]).problems;
  };
  assert.deepEqual(withCampaign(wholeCampaign(20, 1893)), []);
  assert.deepEqual(withCampaign(null), ['shard 1 of 2 (s1): it ran with --fuzz-runs 20 but records no generated-workload campaign']);
  assert.deepEqual(withCampaign({ ...wholeCampaign(20, 1893), passed: 3 }), ['shard 1 of 2 (s1): its generated-workload campaign counts 3 of 20 cases passed and no counterexample: not a whole campaign']);
  assert.deepEqual(withCampaign(wholeCampaign(1, 1893)), ['shard 1 of 2 (s1): its generated-workload campaign is of 1 cases with seed 1893, not the 20 with seed 1893 it ran with']);
  assert.deepEqual(withCampaign(wholeCampaign(20, 7)), ['shard 1 of 2 (s1): its generated-workload campaign is of 20 cases with seed 7, not the 20 with seed 1893 it ran with']);
  assert.deepEqual(withCampaign({ ...wholeCampaign(20, 1893), too_heavy: 21 }), ['shard 1 of 2 (s1): its generated-workload campaign counts 20 cases passed and 21 too heavy of 20: not possible']);
});

test('a message stream cut short or with a damaged line is a gap naming the shard, the run and the line, and is left out of the merge', () => {
  const whole = shardStream(2, 2);
  const cut = whole.slice(0, Math.floor(whole.length / 2));
  const damaged = shard(2, 2, {}, { second: `${whole}{"garbage\n` });
  const check = checkShards([shard(1, 2), shard(2, 2, {}, { first: cut })]);
  assert.equal(check.problems.length, 1, check.problems.join('\n'));
  assert.match(check.problems[0], /^shard 2 of 2 \(s2\): line \d+ of the message stream of its first run is not JSON \(cut short or damaged\); the stream was left out$/);
  assert.equal(check.used[1].first, null);
  const second = checkShards([shard(1, 2), damaged]).problems;
  assert.match(second[0], new RegExp(`^shard 2 of 2 \\(s2\\): line ${whole.split('\n').length} of the message stream of its second run is not JSON`));
});

test('a second run\'s stream that is a copy of the first is no second run: a gap, left out', () => {
  const stream = shardStream(2, 2);
  const check = checkShards([shard(1, 2), shard(2, 2, {}, { first: stream, second: `${stream}\n\n` })]);
  assert.deepEqual(check.problems, ['shard 2 of 2 (s2): the message stream of its second run is a copy of its first (the same ids and times), not a second run; it was left out', 'shard 2 of 2 (s2) has no message stream of its second run']);
});

test('a shard manifest with a damaged field is refused naming the field, not read into a crash', () => {
  const text = (change: (m: Record<string, unknown>) => void) => {
    const m = manifest(1, 2, { fuzzRuns: 20 }) as unknown as Record<string, unknown>;
    change(m);
    return JSON.stringify(m);
  };
  assert.doesNotThrow(() => parseShardManifest(text(() => {}), 's1/shard.json'));
  assert.throws(() => parseShardManifest(text((m) => (m.subject = {})), 's1/shard.json'), /^Error: s1\/shard\.json: subject\.packageName: /);
  assert.throws(() => parseShardManifest(text((m) => (m.generated = {})), 's1/shard.json'), /^Error: s1\/shard\.json: generated\.runs: /);
  assert.throws(() => parseShardManifest(text((m) => (m.coverage = {})), 's1/shard.json'), /^Error: s1\/shard\.json: coverage\.summary: /);
});

test('a shard missing, or given twice, is named; shard 1 missing says it makes the generated workloads and the coverage run', () => {
  assert.deepEqual(checkShards([shard(1, 3), shard(3, 3)]).problems, ['shard 2 of 3 missing: its scenarios did not run']);
  assert.deepEqual(checkShards([shard(1, 3), shard(2, 3)]).problems, ['shard 3 of 3 missing: its scenarios did not run'], 'the last shard too');
  assert.deepEqual(checkShards([shard(2, 2)]).problems, ['shard 1 of 2 missing: its scenarios did not run'], 'without generated workloads or coverage, shard 1 is like any other');
  assert.deepEqual(checkShards([shard(1, 2, { fuzzRuns: 10 })]).problems, ['shard 2 of 2 missing: its scenarios did not run'], 'only shard 1 makes them');
  assert.deepEqual(checkShards([shard(2, 2, { fuzzRuns: 10 })]).problems, ['shard 1 of 2 missing: its scenarios did not run (it runs the generated workloads and the coverage run)']);
  const twice = { ...shard(2, 2), dir: 'again' };
  const check = checkShards([shard(1, 2), shard(2, 2), twice]);
  assert.deepEqual(check.problems, ['shard 2 of 2 given twice (s2 and again); only the first was used']);
  assert.deepEqual(check.used.map((s) => s.dir), ['s1', 's2']);
});

test('a shard of another count, suite, commit or settings is left out naming how it differs; the reference is the most common, ties to the first given', () => {
  const other = checkShards([shard(1, 2), shard(2, 2), shard(2, 3, { commit: 'b'.repeat(40), fuzzRuns: 5, digest: 'sha256:ffffffffffffffffffff' })]);
  assert.deepEqual(other.problems, [
    's2 (shard 2 of 3) is not of this set and was left out: it is one of 3 shards, not 2; it ran another suite (sha256:ffffffffffff… vs ' +
      `${manifest(1, 2).suite.digest.slice(0, 19)}…); it ran commit bbbbbbbbbbbb, not aaaaaaaaaaaa; it ran with --fuzz-runs 5, seed 1893, without the coverage run, not --fuzz-runs 0, seed 1893, without the coverage run`,
  ]);
  // Two of one commit against one of another: the two make the set, whatever the order.
  const majority = checkShards([shard(1, 2, { commit: 'c'.repeat(40) }), shard(1, 2), shard(2, 2)]);
  assert.equal(majority.reference.subject.commit, 'a'.repeat(40));
  assert.match(majority.problems[0], /^s1 \(shard 1 of 2\) is not of this set and was left out: it ran commit cccccccccccc, not aaaaaaaaaaaa$/);
  // One each: the first given is the reference.
  const tie = checkShards([shard(1, 2, { commit: 'c'.repeat(40) }), shard(2, 2)]);
  assert.equal(tie.reference.subject.commit, 'c'.repeat(40));
});

test("a shard's streams must exist, be of its suite and have run exactly its share", () => {
  assert.deepEqual(checkShards([shard(1, 2, {}, { second: null }), shard(2, 2)]).problems, ['shard 1 of 2 (s1) has no message stream of its second run']);
  const foreign = fakeMessages([{ ...SUITE[0], name: 'something else' }]);
  assert.deepEqual(checkShards([shard(1, 2, {}, { first: foreign }), shard(2, 2)]).problems, ['shard 1 of 2 (s1): the message stream of its first run is of another suite than its manifest names']);
  const everything = shardStream(1, 1);
  assert.deepEqual(checkShards([shard(1, 2), shard(2, 2, {}, { second: everything })]).problems, ['shard 2 of 2 (s2): its second run ran 3 scenarios, not exactly its share of 1']);
  assert.throws(() => checkShards([]), /no shard to merge/);
});

test('a shard manifest that is not JSON, not of this format, out of range or incomplete is refused, naming the file', () => {
  const text = (value: unknown) => JSON.stringify(value);
  assert.throws(() => parseShardManifest('{', 'x/shard.json'), /^Error: x\/shard\.json: not JSON$/);
  assert.throws(() => parseShardManifest('null', 'x/shard.json'), /x\/shard\.json: not a kvqual-qualify-shard\/1 shard manifest/);
  assert.throws(() => parseShardManifest(text({ ...manifest(1, 2), format: 'other' }), 'x'), /not a kvqual-qualify-shard\/1 shard manifest/);
  for (const bad of [{ index: 0, count: 2 }, { index: 3, count: 2 }, { index: 1.5, count: 2 }, { index: 1, count: 'two' }, null]) {
    assert.throws(() => parseShardManifest(text({ ...manifest(1, 2), shard: bad }), 'x'), /x: the shard number is missing or out of range/, JSON.stringify(bad));
  }
  for (const field of ['suite', 'subject', 'settings'] as const) {
    assert.throws(() => parseShardManifest(text({ ...manifest(1, 2), [field]: undefined }), 'x'), /x: the suite, subject or settings are missing/, field);
  }
  assert.throws(() => parseShardManifest(text({ ...manifest(1, 2), suite: { digest: 7 } }), 'x'), /the suite, subject or settings are missing/);
  assert.deepEqual(parseShardManifest(text(manifest(2, 2)), 'x').shard, { index: 2, count: 2 });
});

test('a merge names every shard whose working tree differed from the commit; shards that all ran it clean keep the subject as it was', () => {
  const clean = [manifest(1, 3), manifest(2, 3), manifest(3, 3)];
  assert.deepEqual(mergedSubject(clean), clean[0].subject);
  const edited = manifest(2, 3);
  edited.subject = { ...edited.subject, worktree: 'working tree differs from the commit in 1 file' };
  assert.equal(mergedSubject([clean[0], edited, clean[2]]).worktree, 'working tree differed from the commit in shard 2 (working tree differs from the commit in 1 file)');
});

test("shard 1's coverage claims are read back against the suite: no summary measured nothing, and another scenario count is not the suite's run", () => {
  const summary = { scope: 'x', lines: figure(1, 2), branches: figure(1, 2), functions: figure(1, 2), groups: [] };
  const run = { unitFiles: 52, unitTests: 551, scenarios: 139, failures: [], problems: [] };
  assert.deepEqual(coverageClaimProblems({ summary, run, note: '' }, 139, 3), []);
  assert.deepEqual(coverageClaimProblems({ summary: null, run, note: '' }, 139, 3), ['shard 1 of 3 records a coverage run without a coverage summary: nothing was measured']);
  assert.deepEqual(coverageClaimProblems({ summary, run: { ...run, scenarios: 46 }, note: '' }, 139, 3), ['shard 1 of 3 records a coverage run of 46 scenarios, where the suite has 139']);
  // A run that says why it could not complete already fails the gate: its missing summary is not a second problem.
  assert.deepEqual(coverageClaimProblems({ summary: null, run: { ...run, problems: ['tsc produced no JavaScript'] }, note: '' }, 139, 3), []);
});

test('shards whose trees all differ alike keep the unsharded wording', () => {
  const dirty = [manifest(1, 2), manifest(2, 2)].map((m) => ({ ...m, subject: { ...m.subject, worktree: 'working tree differs from the commit in 3 files' } }));
  assert.equal(mergedSubject(dirty).worktree, 'working tree differs from the commit in 3 files');
});
