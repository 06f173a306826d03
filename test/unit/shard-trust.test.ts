// Unit tests of src/signoff/shardTrust.ts: run nonces carried in a stream, a second run that is a
// copy of the first however edited, manifest signatures (HMAC), the merge's verification of each
// shard (signature, recorded trust, stream digests and nonces, one nonce per run, one set of
// options, one registry) and of its own checkout (commit, tree, registry from the commit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkoutProblems,
  copiedStreamProblem,
  mergeNarrowed,
  NONCE_HOOK_PREFIX,
  nonceProblem,
  RUN_NONCE_ENV,
  ownStreamProblems,
  sha256Of,
  sharedOptions,
  ShardTrust,
  signatureOf,
  signatureProblem,
  streamNonces,
  verifyShards,
  VerifiedShard,
} from '../../src/signoff/shardTrust';

/** A small stream of one run: its nonce hook, a pickle, a test case and its attempt, each id prefixed by `run`. */
function stream(run: string, nonce: string | null, extraHooks: string[] = []): string {
  const lines: object[] = [
    { meta: { implementation: { name: 'cucumber-js', version: '12.9.0' } } },
    { pickle: { id: `${run}-pickle-1`, uri: 'a.feature', name: 'a', steps: [] } },
    ...(nonce === null ? [] : [{ hook: { id: `${run}-hook`, type: 'BEFORE_TEST_RUN', name: `${NONCE_HOOK_PREFIX}${nonce}` } }]),
    ...extraHooks.map((name, i) => ({ hook: { id: `${run}-h${i}`, type: 'BEFORE_TEST_RUN', name } })),
    { hook: { id: `${run}-plain`, type: 'BEFORE_TEST_CASE' } },
    { testRunStarted: { id: `${run}-run`, timestamp: { seconds: 1, nanos: 0 } } },
    { testCase: { id: `${run}-case-1`, pickleId: `${run}-pickle-1`, testSteps: [] } },
    { testCaseStarted: { attempt: 0, id: `${run}-started-1`, testCaseId: `${run}-case-1`, timestamp: { seconds: 1, nanos: 0 } } },
    { testRunFinished: { success: true, timestamp: { seconds: 2, nanos: 0 } } },
  ];
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

test('the nonce variable the support file reads, and a text\'s SHA-256 as "sha256:<hex>"', () => {
  assert.equal(RUN_NONCE_ENV, 'KVQUAL_RUN_NONCE');
  assert.equal(sha256Of(''), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test("a stream carries its run's nonce in a named BeforeAll hook; none, another or two are named", () => {
  assert.deepEqual(streamNonces(stream('r1', 'n1')), ['n1']);
  assert.deepEqual(streamNonces(stream('r1', null)), []);
  assert.deepEqual(streamNonces('{"hook":broken\n'), []);
  assert.equal(nonceProblem(stream('r1', 'n1'), 'n1'), null);
  assert.equal(nonceProblem(stream('r1', null), 'n1'), 'carries no run nonce: not the stream of the run that was given one');
  assert.equal(nonceProblem(stream('r1', 'aaaaaaaaaaaa'), 'bbbbbbbbbbbb'), "carries the nonce aaaaaaaa…, not its run's bbbbbbbb…: the stream of another run");
  assert.match(nonceProblem(stream('r1', 'n1', [`${NONCE_HOOK_PREFIX}n2`]), 'n1')!, /carries the nonce n1, n2…/);
  assert.equal(nonceProblem(stream('r1', 'n1', ['another hook']), 'n1'), null, 'other hooks are not nonces');
});

test('a second run that is the first, however edited, shares its per-run ids; a real second run shares none', () => {
  const first = stream('r1', 'n1');
  assert.equal(copiedStreamProblem(first, stream('r2', 'n2')), null);
  const edited = first.replace('"attempt":0', '"attempt": 0').replace('n1', 'n2');
  assert.match(copiedStreamProblem(first, edited)!, /^the message stream of its second run shares 4 of cucumber's per-run ids with its first \(r1-pickle-1…\): a copy of the first, however edited, not a second run$/);
  const onlyOne = stream('r2', 'n2').replace('r2-started-1', 'r1-started-1');
  assert.match(copiedStreamProblem(first, onlyOne)!, /shares 1 of cucumber's per-run ids with its first \(r1-started-1…\)/);
  assert.equal(copiedStreamProblem(first, '{"testCase":broken\n'), null);
  const idless = (t: string) => t.replace(/"id":"[^"]*-run",/, '').replace(/\{"pickle":\{"id":"[^"]*",/, '{"pickle":{');
  assert.equal(copiedStreamProblem(idless(first), idless(stream('r2', 'n2'))), null, 'an envelope without an id shares nothing');
});

test("an unsharded run's two streams: each must carry its own run's nonce, and the second be no copy of the first", () => {
  const nonces = { first: 'n1', second: 'n2' };
  assert.deepEqual(ownStreamProblems({ first: stream('r1', 'n1'), second: stream('r2', 'n2') }, nonces), []);
  assert.deepEqual(ownStreamProblems({ first: null, second: null }, nonces), [], 'a missing stream is named elsewhere');
  assert.deepEqual(ownStreamProblems({ first: stream('r1', 'n1'), second: stream('r1', 'n1') }, nonces), [
    "run 2 of 2: its message stream carries the nonce n1…, not its run's n2…: the stream of another run",
    "run 2 of 2: the message stream of its second run shares 4 of cucumber's per-run ids with its first (r1-pickle-1…): a copy of the first, however edited, not a second run",
  ]);
  assert.deepEqual(ownStreamProblems({ first: stream('r1', null), second: stream('r2', 'n2') }, nonces), ['run 1 of 2: its message stream carries no run nonce: not the stream of the run that was given one']);
  assert.deepEqual(ownStreamProblems({ first: stream('r1', 'n1'), second: null }, nonces), []);
});

test('a shard shares its options without --shard and --out', () => {
  assert.deepEqual(sharedOptions(['--features', 'f', '--shard', '2/3', '--out', 'q2', '--no-coverage']), ['--features', 'f', '--no-coverage']);
  assert.deepEqual(sharedOptions([]), []);
});

const KEY = 'secret';

test('a signature covers the whole manifest but itself; unsigned, edited, another key and garbage are refused', () => {
  const manifest: Record<string, unknown> = { shard: { index: 1, count: 2 }, trust: { channels: [] }, coverage: { failures: ['x'] } };
  manifest.signature = signatureOf(manifest, KEY);
  assert.match(manifest.signature as string, /^[0-9a-f]{64}$/);
  assert.equal(signatureOf(manifest, KEY), manifest.signature, 'the signature itself is not signed');
  assert.equal(signatureProblem(manifest, KEY), null);
  const edited: Record<string, unknown> = { ...manifest, coverage: { failures: [] } };
  assert.match(signatureProblem(edited, KEY)!, /^its signature does not match \(KVQUAL_SIGNING_KEY\): its manifest or streams were changed after it signed them, or another key signed it; refused$/);
  assert.match(signatureProblem(manifest, 'another')!, /^its signature does not match/);
  assert.match(signatureProblem({ ...manifest, signature: 'abc' }, KEY)!, /^its signature does not match/);
  assert.match(signatureProblem({ ...manifest, signature: `${manifest.signature}00` }, KEY)!, /^its signature does not match/);
  assert.equal(signatureProblem({ ...manifest, signature: undefined }, KEY), 'it is not signed, and the merge has KVQUAL_SIGNING_KEY: refused');
  assert.equal(signatureProblem({ ...manifest, signature: '' }, KEY), 'it is not signed, and the merge has KVQUAL_SIGNING_KEY: refused');
  assert.equal(signatureProblem({ ...manifest, signature: 7 }, KEY), 'it is not signed, and the merge has KVQUAL_SIGNING_KEY: refused');
});

const REGISTRY = 'sha256:' + 'r'.repeat(64);

/** A shard of `count` whose streams are its own two runs, with their digests and nonces recorded. */
function shard(index: number, count = 2, change: (trust: ShardTrust) => void = () => {}): VerifiedShard {
  const [n1, n2] = [`nonce-${index}-1`, `nonce-${index}-2`];
  const first = stream(`s${index}r1`, n1);
  const second = stream(`s${index}r2`, n2);
  const trust: ShardTrust = {
    tree: 't'.repeat(40),
    requirements: { file: 'requirements.yaml', digest: REGISTRY },
    options: ['--fuzz-runs', '0'],
    environment: [],
    channels: [],
    streams: { first: { sha256: sha256Of(first), nonce: n1 }, second: { sha256: sha256Of(second), nonce: n2 } },
  };
  change(trust);
  return { dir: `q${index}`, manifest: { shard: { index, count }, trust }, first, second };
}

const SIDE = { key: undefined, requirementsDigest: REGISTRY };

test('shards whose streams are the ones they recorded, each with its own nonce, are trusted', () => {
  const shards = [shard(1), shard(2)];
  assert.deepEqual(verifyShards(shards, SIDE), { problems: [], refused: new Set() });
  assert.ok(shards.every((s) => s.first !== null && s.second !== null), 'nothing left out');
});

test('with a key: a signed shard is trusted, an unsigned or wrongly signed one refused, named', () => {
  const signed = shard(1);
  signed.manifest.signature = signatureOf(signed.manifest, KEY);
  const unsigned = shard(2);
  const wrong = shard(3, 3);
  wrong.manifest.signature = signatureOf(wrong.manifest, 'other');
  const result = verifyShards([signed, unsigned, wrong], { key: KEY, requirementsDigest: REGISTRY });
  assert.deepEqual([...result.refused].map((s) => s.dir), ['q2', 'q3']);
  assert.deepEqual(result.problems, [
    'shard 2 of 2 (q2): it is not signed, and the merge has KVQUAL_SIGNING_KEY: refused',
    'shard 3 of 3 (q3): its signature does not match (KVQUAL_SIGNING_KEY): its manifest or streams were changed after it signed them, or another key signed it; refused',
  ]);
  assert.deepEqual(verifyShards([shard(1)], SIDE).problems, [], 'without a key, signatures are not asked for');
});

test('a manifest without its trust record is refused', () => {
  const old = shard(1);
  delete old.manifest.trust;
  const result = verifyShards([old, shard(2)], SIDE);
  assert.deepEqual([...result.refused], [old]);
  assert.deepEqual(result.problems, ['shard 1 of 2 (q1): its manifest records no stream digests or run nonces (an older kvqual wrote it, or it was edited): it cannot be verified; refused']);
  const alone = shard(2);
  delete alone.manifest.trust;
  assert.equal(verifyShards([alone], SIDE).refused.size, 1, 'with no shard recording its trust');
});

test('an edited stream, a stream not recorded, a stream of another run, a nonce recorded twice and a copied second run: each named, the stream left out', () => {
  const edited = shard(1);
  edited.first = edited.first!.replace('"success":true', '"success":true ');
  const unrecorded = shard(2, 2, (t) => (t.streams.second = null));
  const foreign = shard(3, 3);
  foreign.second = stream('x', 'someone-else');
  foreign.manifest.trust!.streams.second = { sha256: sha256Of(foreign.second), nonce: 'nonce-3-2' };
  const copied = shard(4, 4);
  const copy = copied.first!.replace('"attempt":0', '"attempt": 0');
  copied.second = copy;
  copied.manifest.trust!.streams.second = { sha256: sha256Of(copy), nonce: 'nonce-4-1' };
  const result = verifyShards([edited, unrecorded, foreign, copied], SIDE);
  assert.deepEqual(result.problems, [
    'shard 1 of 2 (q1): the message stream of its first run is not the one it recorded (its SHA-256 differs): changed after the run; left out',
    'shard 2 of 2 (q2): the message stream of its second run is there but its manifest records none; left out',
    "shard 3 of 3 (q3): the message stream of its second run carries the nonce someone-…, not its run's nonce-3-…: the stream of another run; left out",
    'shard 4 of 4 (q4): the nonce of the message stream of its second run is also that of shard 4 of 4 (q4), first run: one run recorded twice',
    "shard 4 of 4 (q4): the message stream of its second run shares 4 of cucumber's per-run ids with its first (s4r1-pickle-1…): a copy of the first, however edited, not a second run; it was left out",
  ]);
  assert.deepEqual([edited.first, unrecorded.second, foreign.second, copied.second], [null, null, null, null]);
  assert.ok(edited.second !== null && copied.first !== null, 'the other stream of each is kept');
  assert.equal(result.refused.size, 0);
});

test('one nonce in two shards, other options and another registry are named', () => {
  const one = shard(1);
  const two = shard(2, 2, (t) => {
    t.options = ['--fuzz-runs', '5'];
    t.requirements = { file: 'other.yaml', digest: 'sha256:' + 'o'.repeat(64) };
  });
  two.first = one.first;
  two.manifest.trust!.streams.first = one.manifest.trust!.streams.first;
  const problems = verifyShards([one, two], SIDE).problems;
  assert.deepEqual(problems, [
    'shard 2 of 2 (q2): it ran with the options "--fuzz-runs 5", not "--fuzz-runs 0"',
    'shard 2 of 2 (q2): it checked the requirements other.yaml (sha256:oooooooooooo…), the merge reads another registry (sha256:rrrrrrrrrrrr…)',
    'shard 2 of 2 (q2): the nonce of the message stream of its first run is also that of shard 1 of 2 (q1), first run: one run recorded twice',
  ]);
  assert.deepEqual(verifyShards([shard(1), { ...shard(2), first: null, second: null }], SIDE).problems, [], 'a missing stream is named by checkShards, not here');
});

test("the merge's checkout: the shards' commit and tree, the registry the commit's; its own dirty tree narrows it", () => {
  const here = { commit: 'c'.repeat(40), worktree: 'clean working tree', tree: 't'.repeat(40), registryCommitted: true, registry: 'requirements.yaml' };
  const shards = { commit: 'c'.repeat(40), tree: 't'.repeat(40) };
  assert.deepEqual(checkoutProblems(here, shards), []);
  assert.deepEqual(checkoutProblems(here, { ...shards, tree: null }), [], 'shards without git record no tree');
  assert.deepEqual(checkoutProblems(here, { ...shards, commit: 'd'.repeat(40) }), ['the merge runs on commit cccccccccccc, the shards ran dddddddddddd: merge on the commit the shards ran (its requirements are read here)']);
  assert.deepEqual(checkoutProblems(here, { ...shards, tree: 'u'.repeat(40) }), ["the merge's checkout has the tree tttttttttttt, the shards ran uuuuuuuuuuuu: another content under the same commit id"]);
  assert.deepEqual(checkoutProblems({ ...here, registryCommitted: false }, shards), ["the merge reads requirements.yaml, which is not the commit's (an uncommitted edit): merge with the registry the shards' commit holds"]);
  assert.deepEqual(checkoutProblems({ ...here, registryCommitted: null }, shards), ["the merge reads requirements.yaml, which is not in the commit: merge with the registry the shards' commit holds"]);
  assert.deepEqual(mergeNarrowed(here), []);
  assert.deepEqual(mergeNarrowed({ ...here, worktree: 'working tree differs from the commit in 1 file' }), ["the merge's checkout: working tree differs from the commit in 1 file: the glossary and files it reads may not be the commit's"]);
});
