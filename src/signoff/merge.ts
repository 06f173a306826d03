// `--merge DIR…`: the shards' manifests and streams checked and merged into one run's streams,
// cucumber's reports rendered from them and one sign-off built with the same gates; every gap of the
// set (a missing, repeated, foreign or untrusted shard) fails the Shards gate that names it.
import fs from 'node:fs';
import path from 'node:path';
import { RERUN_MESSAGES, SignoffModel, Subject } from './model';
import { mergeFaultChecks } from './faults';
import { newRunDir, removeStale } from './write';
import { checkShards, mergeStreams, ShardManifest } from './shards';
import { ownerTag } from '../processes';
import { blobId } from './provenance';
import { channelsGate } from './channels';
import { checkoutProblems, mergeNarrowed, SIGNING_KEY_ENV, verifyShards } from './shardTrust';
import { exitStatusOf } from './narrowed';
import { countOf } from './context';
import type { DriverContext } from './context';
import type { Measured } from './coverageRun';
import { failuresToPrint, PhaseConsole, reportVerdict, reportWritten } from './phaseConsole';
import type { Prepared } from './prepare';
import { publishSignoff } from './publish';
import { readRun } from './runStreams';

/**
 * `--merge DIR…`: checks the shards (each of 1..n once, one suite, one commit, one set of
 * options, each having run exactly its share), merges each run's streams into the stream an
 * unsharded run writes, renders cucumber's reports from the merged stream and builds the one
 * sign-off with the same gates. Every gap of the set fails a *Shards* gate that names it.
 */
/**
 * What shard 1's manifest says its coverage run did, checked against the suite: a run with no
 * coverage summary measured nothing, and a run over fewer or more scenarios than the suite has
 * was not the whole suite's (a manifest is not signed: these are its claims, read back).
 */
export function coverageClaimProblems(coverage: NonNullable<ShardManifest['coverage']>, suiteScenarios: number, shardCount: number): string[] {
  const problems: string[] = [];
  if (coverage.summary === null && coverage.run.problems.length === 0) problems.push(`shard 1 of ${shardCount} records a coverage run without a coverage summary: nothing was measured`);
  if (coverage.run.scenarios !== suiteScenarios) problems.push(`shard 1 of ${shardCount} records a coverage run of ${countOf(coverage.run.scenarios, 'scenario')}, where the suite has ${suiteScenarios}`);
  return problems;
}

/**
 * The subject of a merge: the shards' commit and versions, with the working tree they all had (as
 * an unsharded run says it), or, when the shards' trees were not alike, every shard whose tree
 * differed from that commit, named.
 */
export function mergedSubject(manifests: readonly ShardManifest[]): Subject {
  const subject = manifests[0].subject;
  if (manifests.every((m) => m.subject.worktree === subject.worktree)) return subject;
  const differing = manifests.filter((m) => m.subject.worktree !== 'clean working tree');
  const which = differing.map((m) => `shard ${m.shard.index} (${m.subject.worktree})`).join(', ');
  return { ...subject, worktree: `working tree differed from the commit in ${which}` };
}

/** The merge's own checkout: its commit and tree, whether it is clean, and whether the registry it reads is the commit's blob. */
function mergeCheckout(ctx: DriverContext, prepared: Prepared): Parameters<typeof checkoutProblems>[0] {
  const here = ctx.subject();
  const file = prepared.requirements.file;
  const committed = file.startsWith('..') ? null : ctx.git?.(['rev-parse', `HEAD:${file}`]) ?? null;
  const onDisk = blobId(fs.readFileSync(path.join(ctx.root, file)));
  return { commit: here.commit, worktree: here.worktree, tree: ctx.git?.(['rev-parse', 'HEAD^{tree}']) ?? null, registry: file, registryCommitted: committed === null ? null : committed === onDisk };
}

export async function mergeShards(prepared: Prepared, ctx: DriverContext): Promise<{ status: number; model: SignoffModel }> {
  const { options, out } = prepared;
  const started = ctx.now();
  const check = checkShards(prepared.shards);
  const n = check.reference.shard.count;
  // Every shard verified (signature, stream digests and nonces, no copied run, one registry and set of options); one that cannot be trusted is left out.
  const key = ctx.env[SIGNING_KEY_ENV];
  const verified = verifyShards(check.used, { key: key === undefined || key === '' ? undefined : key, requirementsDigest: prepared.requirements.digest });
  check.problems.push(...verified.problems);
  check.used = check.used.filter((s) => !verified.refused.has(s));
  // The sign-off names what the shards ran; the merge reads this checkout's requirements and glossary, so it must be the same clean commit.
  const checkout = mergeCheckout(ctx, prepared);
  check.problems.push(...checkoutProblems(checkout, { commit: check.reference.subject.commit, tree: check.reference.trust?.tree ?? null }));
  const phases = new PhaseConsole(ctx, [
    `merge: ${countOf(prepared.shards.length, 'shard folder')} for ${countOf(n, 'shard')}, both runs' streams merged, cucumber's reports rendered`,
    'sign-off: signoff.md, signoff.html, signoff.json',
  ]);
  phases.announce(false);
  const removed = removeStale(out);
  if (removed.length > 0) phases.note(`removed what earlier runs left unfinished: ${removed.join(', ')}`);
  const runDir = newRunDir(out, `run-${ctx.now()}-${ownerTag()}`);
  await phases.run(0, async () => {
    for (const problem of check.problems) phases.note(`   ✗ ${problem}`);
    const merged = (which: 'first' | 'second') =>
      mergeStreams(check.used.filter((s) => s[which] !== null).map((s) => ({ shard: s.manifest.shard.index, text: s[which]! })));
    const firstText = merged('first');
    fs.writeFileSync(path.join(runDir, 'messages.ndjson'), firstText);
    fs.writeFileSync(path.join(runDir, RERUN_MESSAGES), merged('second'));
    if (ctx.cucumberReports) {
      const reports = await ctx.cucumberReports(firstText);
      fs.writeFileSync(path.join(runDir, 'cucumber.html'), reports.html);
      fs.writeFileSync(path.join(runDir, 'junit.xml'), reports.junit);
    } else {
      const note = `the reports of each shard are in its own folder: ${check.used.map((s) => s.dir).join(', ')}\n`;
      fs.writeFileSync(path.join(runDir, 'cucumber.html'), `<!doctype html><title>merged shards</title><p>${note.replace(/[<&]/g, '')}</p>\n`);
      fs.writeFileSync(path.join(runDir, 'junit.xml'), `<?xml version="1.0" encoding="UTF-8"?>\n<!-- ${note.replace(/--/g, '- -').trim()} -->\n<testsuites/>\n`);
    }
  });
  const shardOne = check.used.find((s) => s.manifest.shard.index === 1)?.manifest ?? null;
  const settings = check.reference.settings;
  const coverage = shardOne?.coverage ?? null;
  const noCoverage = shardOne === null ? `shard 1 of ${n}, which makes the coverage run, is missing` : `shard 1 of ${n} records no coverage run although the shards ran with it`;
  const measured: Measured | null = settings.coverage
    ? coverage !== null
      ? { summary: coverage.summary, run: { ...coverage.run, problems: [...coverage.run.problems, ...coverageClaimProblems(coverage, check.reference.suite.scenarios, n)] }, note: coverage.note }
      : { summary: null, run: { unitFiles: 0, unitTests: 0, scenarios: 0, failures: [], problems: [noCoverage] }, note: noCoverage }
    : null;
  const perturbations = [...new Set(check.used.map((s) => s.manifest.perturbation).filter((p): p is string => p !== null))];
  // Every shard refused: the sign-off still names what the set claimed to run.
  const subject = mergedSubject(check.used.length > 0 ? check.used.map((s) => s.manifest) : [check.reference]);
  const model = await phases.run(1, () =>
    publishSignoff(prepared, ctx, runDir, {
      first: readRun(path.join(runDir, 'messages.ndjson')),
      second: readRun(path.join(runDir, RERUN_MESSAGES)),
      perturbation: perturbations.length > 0 ? perturbations.join('|') : null,
      generated: settings.fuzzRuns > 0 ? shardOne?.generated ?? null : null,
      measured,
      shardProblems: check.problems,
      subject,
      features: check.reference.suite.features,
      faults: mergeFaultChecks(check.used.map((s) => ({ index: s.manifest.shard.index, count: s.manifest.shard.count, faults: s.manifest.faults }))),
      isolation: null,
      settings: { coverage: settings.coverage, fuzzRuns: settings.fuzzRuns },
      environment: check.used.flatMap((s) => s.manifest.trust?.environment ?? []),
      checks: [channelsGate(check.used.flatMap((s) => (s.manifest.trust?.channels ?? []).map((p) => `shard ${s.manifest.shard.index} of ${n}, ${p}`)))],
      // The merge's own tree when the shards' were clean (a tree the shards share is named once, by the subject).
      narrowed: subject.worktree === 'clean working tree' ? mergeNarrowed(checkout) : [],
    }),
  );
  phases.close();
  reportVerdict(ctx, model, failuresToPrint(model, measured));
  reportWritten(ctx, options.out, ctx.now() - started);
  return { status: exitStatusOf(model), model };
}
