// What makes a shard's folder worth merging: each shard records (in its manifest's `trust`) the
// SHA-256 of each message stream it published, the nonce the driver gave each of its runs (carried
// in the run's own stream as the name of a BeforeAll hook, steps/support/runNonce.ts), the commit's
// tree, the registry's digest, its options and variables, and what its channels check found; with
// KVQUAL_SIGNING_KEY set it signs the manifest (HMAC-SHA-256 over its canonical JSON, which holds the
// stream digests, so the streams are signed too). The merge checks every one of these and names
// each mismatch; a shard it cannot trust is left out, which fails the Shards gate. Also the merge's
// own checkout: the shards' commit and tree, clean, its registry the commit's. Pure: the nonces
// come from the caller (scripts/qualify.ts), as the clock does.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../report/canonical';
import type { RunVariable } from './narrowed';

/** The variable that gives a cucumber run its nonce, and the prefix of the BeforeAll hook name that carries it into the stream. */
export const RUN_NONCE_ENV = 'KVQUAL_RUN_NONCE';
export const NONCE_HOOK_PREFIX = 'kvqual run nonce ';
/** The variable holding the key that signs shard manifests and that the merge checks them with. */
export const SIGNING_KEY_ENV = 'KVQUAL_SIGNING_KEY';

/** "sha256:<hex>" of a text. */
export function sha256Of(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The nonces a message stream carries (its BeforeAll hooks named NONCE_HOOK_PREFIX + nonce). */
export function streamNonces(ndjson: string): string[] {
  const nonces: string[] = [];
  for (const line of ndjson.split('\n')) {
    if (!line.startsWith('{"hook"')) continue;
    try {
      const name = (JSON.parse(line) as { hook: { name?: string } }).hook.name ?? '';
      if (name.startsWith(NONCE_HOOK_PREFIX)) nonces.push(name.slice(NONCE_HOOK_PREFIX.length));
    } catch {
      // a broken line is named by the stream's own checks
    }
  }
  return nonces;
}

/** Whether a stream carries exactly this run's nonce: null when it does, else the problem in words (after "<label>: "). */
export function nonceProblem(ndjson: string, nonce: string): string | null {
  const carried = streamNonces(ndjson);
  if (carried.length === 1 && carried[0] === nonce) return null;
  if (carried.length === 0) return 'carries no run nonce: not the stream of the run that was given one';
  return `carries the nonce ${carried.map((c) => c.slice(0, 8)).join(', ')}…, not its run's ${nonce.slice(0, 8)}…: the stream of another run`;
}

/** The ids cucumber gives per run (pickles, test cases, their attempts, the run), from a stream. */
function runIds(ndjson: string): Set<string> {
  const ids = new Set<string>();
  for (const line of ndjson.split('\n')) {
    const kind = /^\{"(pickle|testCase|testCaseStarted|testRunStarted)":/.exec(line)?.[1];
    if (kind === undefined) continue;
    try {
      const id = (JSON.parse(line) as Record<string, { id?: unknown }>)[kind].id;
      if (typeof id === 'string') ids.add(id);
    } catch {
      // a broken line is named by the stream's own checks
    }
  }
  return ids;
}

/**
 * Whether a second run's stream is a copy of the first's, edited or not: two runs of cucumber never
 * give a pickle, test case or attempt the same id (random UUIDs), so any id in both is a copy's.
 * The problem in words, or null.
 */
export function copiedStreamProblem(first: string, second: string): string | null {
  const firstIds = runIds(first);
  const shared = [...runIds(second)].filter((id) => firstIds.has(id));
  if (shared.length === 0) return null;
  return `the message stream of its second run shares ${shared.length} of cucumber's per-run ids with its first (${shared[0]}…): a copy of the first, however edited, not a second run`;
}

/**
 * Whether each of a run's two streams is its own run's: it carries that run's nonce, and the second
 * shares no per-run id with the first. Each problem in words, naming the run; empty when both are.
 */
export function ownStreamProblems(streams: { first: string | null; second: string | null }, nonces: { first: string; second: string }): string[] {
  const problems: string[] = [];
  for (const [run, label] of [['first', 'run 1 of 2'], ['second', 'run 2 of 2']] as const) {
    const text = streams[run];
    const wrong = text === null ? null : nonceProblem(text, nonces[run]);
    if (wrong !== null) problems.push(`${label}: its message stream ${wrong}`);
  }
  const copy = streams.first === null || streams.second === null ? null : copiedStreamProblem(streams.first, streams.second);
  if (copy !== null) problems.push(`run 2 of 2: ${copy}`);
  return problems;
}

/** A published stream's seal: its SHA-256 and the nonce its run was given. */
export interface StreamSeal {
  sha256: string;
  nonce: string;
}

/** What a shard records so the merge can verify it (a manifest's `trust`). */
export interface ShardTrust {
  /** The tree of the commit it ran (`git rev-parse HEAD^{tree}`), null without git. */
  tree: string | null;
  requirements: { file: string; digest: string };
  /** Its qualify options, without --shard and --out (those of one set are the same). */
  options: string[];
  environment: RunVariable[];
  /** What the channels check (channels.ts) found in its runs; empty when they agreed. */
  channels: string[];
  streams: { first: StreamSeal | null; second: StreamSeal | null };
}

/** A shard's options as the shards of one set share them: without --shard i/n and --out DIR. */
export function sharedOptions(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--shard' || argv[i] === '--out') i++;
    else out.push(argv[i]);
  }
  return out;
}

/** The HMAC-SHA-256 (hex) of a manifest's canonical JSON without its signature. */
export function signatureOf(manifest: object, key: string): string {
  const { signature: _ignored, ...signed } = manifest as { signature?: unknown };
  return createHmac('sha256', key).update(canonicalJson(signed)).digest('hex');
}

/** Whether a manifest is signed with this key: null when it is, else the problem in words. */
export function signatureProblem(manifest: { signature?: unknown }, key: string): string | null {
  if (typeof manifest.signature !== 'string' || manifest.signature === '') return `it is not signed, and the merge has ${SIGNING_KEY_ENV}: refused`;
  const expected = Buffer.from(signatureOf(manifest, key), 'hex');
  const given = Buffer.from(manifest.signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return `its signature does not match (${SIGNING_KEY_ENV}): its manifest or streams were changed after it signed them, or another key signed it; refused`;
  return null;
}

/** One shard as the merge verifies it. */
export interface VerifiedShard {
  dir: string;
  manifest: { shard: { index: number; count: number }; trust?: ShardTrust; signature?: string };
  first: string | null;
  second: string | null;
}

/** What the merge knows of its own side: the signing key (if any) and the registry it reads. */
export interface MergeSide {
  key: string | undefined;
  requirementsDigest: string;
}

/**
 * Verifies each shard the merge would use: signature (with a key), the recorded trust, each
 * stream's SHA-256 and nonce, no nonce given twice, the second run no copy of the first, one set of
 * options and one registry. A stream that fails is set to null (left out); a shard that cannot be
 * trusted at all is returned in `refused`. Every finding is named.
 */
export function verifyShards(shards: VerifiedShard[], side: MergeSide): { problems: string[]; refused: Set<VerifiedShard> } {
  const problems: string[] = [];
  const refused = new Set<VerifiedShard>();
  const nonceOwners = new Map<string, string>();
  const reference = shards.find((s) => s.manifest.trust !== undefined)?.manifest.trust;
  for (const shard of shards) {
    const label = `shard ${shard.manifest.shard.index} of ${shard.manifest.shard.count} (${shard.dir})`;
    const refuse = (why: string) => {
      problems.push(`${label}: ${why}`);
      refused.add(shard);
    };
    if (side.key !== undefined) {
      const wrong = signatureProblem(shard.manifest, side.key);
      if (wrong !== null) {
        refuse(wrong);
        continue;
      }
    }
    const trust = shard.manifest.trust;
    if (trust === undefined) {
      refuse('its manifest records no stream digests or run nonces (an older kvqual wrote it, or it was edited): it cannot be verified; refused');
      continue;
    }
    if (reference !== undefined && trust.options.join(' ') !== reference.options.join(' ')) problems.push(`${label}: it ran with the options "${trust.options.join(' ')}", not "${reference.options.join(' ')}"`);
    if (trust.requirements.digest !== side.requirementsDigest) problems.push(`${label}: it checked the requirements ${trust.requirements.file} (${trust.requirements.digest.slice(0, 19)}…), the merge reads another registry (${side.requirementsDigest.slice(0, 19)}…)`);
    for (const run of ['first', 'second'] as const) {
      const text = shard[run];
      const seal = trust.streams[run];
      if (text === null) continue;
      const name = `the message stream of its ${run} run`;
      if (seal === null) {
        problems.push(`${label}: ${name} is there but its manifest records none; left out`);
        shard[run] = null;
        continue;
      }
      if (sha256Of(text) !== seal.sha256) {
        problems.push(`${label}: ${name} is not the one it recorded (its SHA-256 differs): changed after the run; left out`);
        shard[run] = null;
        continue;
      }
      const nonce = nonceProblem(text, seal.nonce);
      if (nonce !== null) {
        problems.push(`${label}: ${name} ${nonce}; left out`);
        shard[run] = null;
        continue;
      }
      const owner = nonceOwners.get(seal.nonce);
      if (owner !== undefined) problems.push(`${label}: the nonce of ${name} is also that of ${owner}: one run recorded twice`);
      else nonceOwners.set(seal.nonce, `${label}, ${run} run`);
    }
    if (shard.first !== null && shard.second !== null) {
      const copy = copiedStreamProblem(shard.first, shard.second);
      if (copy !== null) {
        problems.push(`${label}: ${copy}; it was left out`);
        shard.second = null;
      }
    }
  }
  return { problems, refused };
}

/** The merge's own checkout, as the caller's git describes it. */
export interface Checkout {
  commit: string;
  worktree: string;
  tree: string | null;
  /** Whether the registry the merge reads is the commit's (its blob): null when git cannot say (not tracked). */
  registryCommitted: boolean | null;
  registry: string;
}

/**
 * What is wrong with merging in this checkout for shards that ran `commit` and `tree`: another
 * commit or tree, or a registry that is not the commit's (the merge reads it here). In words; empty
 * when it is the shards' commit. (A working tree that otherwise differs narrows the merge: mergeNarrowed.)
 */
export function checkoutProblems(here: Checkout, shards: { commit: string; tree: string | null }): string[] {
  const problems: string[] = [];
  if (here.commit !== shards.commit) problems.push(`the merge runs on commit ${here.commit.slice(0, 12)}, the shards ran ${shards.commit.slice(0, 12)}: merge on the commit the shards ran (its requirements are read here)`);
  else if (shards.tree !== null && here.tree !== shards.tree) problems.push(`the merge's checkout has the tree ${String(here.tree).slice(0, 12)}, the shards ran ${shards.tree.slice(0, 12)}: another content under the same commit id`);
  if (here.registryCommitted !== true) problems.push(`the merge reads ${here.registry}, which is ${here.registryCommitted === false ? 'not the commit\'s (an uncommitted edit)' : 'not in the commit'}: merge with the registry the shards' commit holds`);
  return problems;
}

/** Why a merge in this checkout is not a release sign-off although the shards may be: its own working tree is not the commit. */
export function mergeNarrowed(here: Checkout): string[] {
  return here.worktree === 'clean working tree' ? [] : [`the merge's checkout: ${here.worktree}: the glossary and files it reads may not be the commit's`];
}
