// The pure parts of qualification in shards (src/signoff/shards.ts): `--shard i/n` parsing, the
// share of a shard (cucumber's rule: index modulo n is i − 1), and the merge of message streams:
// ids of the other shards mapped onto the first stream's, test cases in the suite's order, one
// testRunFinished that fails when any shard's did, and a shard left out leaving its pickles without
// a test case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeStreams, parseShardSpec, shareOf, suiteIdentity } from '../../src/signoff/shards';
import { parseRun } from '../../src/signoff/messages';

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
