// The Kubernetes and CI-matrix examples of sweep and qualification shards (examples/k8s/,
// examples/ci/) are never applied to a cluster or run by a CI service here. This test checks their structure and wiring (an Indexed
// Job of N completions runs shards 1..N of N into the volume the merge Job reads; the CI matrix
// lists shards 1..N, uploads what the merge downloads) and then runs each pod's own shell command
// on this machine, with /input, /results and /opt/kvqual mapped to local folders, so the shard
// arithmetic, the sweep in the ConfigMap and the merge glob are exercised for real. The
// qualification Job's pod commands are run the same way on the sign-off fixture suite (the whole
// suite would take minutes per shard); the qualification CI matrix is checked for its wiring.
// Each sweep shard pod's command, and each qualification shard pod's but the first, is expanded by
// the shell as the pod's is (its shard and folder from JOB_COMPLETION_INDEX), and the command it
// names (kvqual, `npm run qualify`) is then run with those arguments in this process: what a shard
// computes is the command's own behaviour, tested here without a Node start and a load of the
// sources per shard (sweep.test.ts runs sweep shards as processes). The first qualification shard
// pod's command and each merge pod's run as they are, a real shell and processes end to end (the
// merge's glob, `npm run qualify --` and its suite runs), on what the shards wrote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { ROOT } from '../support/paths';
import { scratchFolder } from '../support/scratch';
import { NARROWED_EXIT_STATUS } from '../../src/signoff/narrowed';
import { kvqualInProcessAsync } from '../support/cli';
import { qualifyInProcess } from '../support/qualify';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const K8S = path.join(ROOT, 'examples', 'k8s');
const docsOf = (file: string): Doc[] => parseAllDocuments(fs.readFileSync(file, 'utf8')).map((doc) => doc.toJS() as Doc);
const KVQUAL_IN_IMAGE = '/opt/kvqual/bin/kvqual.js';

/**
 * The arguments a pod's shell command gives the command it starts with (`program`, e.g.
 * `npm run qualify --`), as the shell expands them with `env`: the program replaced by printf.
 */
function expandedArgs(command: string, program: string, env: Record<string, string>): string[] {
  assert.ok(command.startsWith(`${program} `), `the pod's command starts with ${program}: ${command}`);
  const printed = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${command.slice(program.length + 1)}`], { env: { ...process.env, ...env }, encoding: 'utf8' });
  assert.equal(printed.status, 0, printed.stderr);
  return printed.stdout.split('\0').slice(0, -1);
}

function sweepParts() {
  const docs = docsOf(path.join(K8S, 'sweep-job.yaml'));
  assert.deepEqual(docs.map((doc) => doc.kind), ['PersistentVolumeClaim', 'ConfigMap', 'Job']);
  const [claim, configMap, job] = docs;
  const [merge] = docsOf(path.join(K8S, 'merge-job.yaml'));
  return { claim, configMap, job, merge };
}

/** Where a path inside a container lives: the volume mounted above it (its source) and the path below the mount. */
function volumeOf(pod: Doc, container: Doc, file: string): { volume: Doc; below: string } {
  const mount = (container.volumeMounts as Doc[]).find((m) => file === m.mountPath || file.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `${file} is on a mounted volume`);
  const volume = (pod.volumes as Doc[]).find((v) => v.name === mount.name);
  assert.ok(volume, `volume ${mount.name} is defined`);
  return { volume, below: path.posix.relative(mount.mountPath, file) };
}

/** An Indexed Job's spec, its completions (the shard count, run all at once) and its container's command line. */
function indexedJob(job: Doc): { spec: Doc; container: Doc; shards: number; command: string } {
  const spec = job.spec;
  assert.equal(spec.completionMode, 'Indexed');
  const shards: number = spec.completions;
  assert.ok(Number.isInteger(shards) && shards > 1);
  assert.equal(spec.parallelism, shards);
  const [container] = spec.template.spec.containers;
  return { spec, container, shards, command: container.args.join(' ') };
}

test('the Indexed Job runs shard JOB_COMPLETION_INDEX+1 of N into the claim the merge Job reads', () => {
  const { claim, configMap, job, merge } = sweepParts();
  const { spec, container, shards, command } = indexedJob(job);
  const shard = /--shard "\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)\/(\d+)"/.exec(command);
  assert.ok(shard, `the shard comes from JOB_COMPLETION_INDEX: ${command}`);
  assert.equal(Number(shard[1]), shards, '--shard i/N uses the Job completions as N');
  const sweepFile = /sweep (\/\S+\.yaml)/.exec(command)![1];
  const input = volumeOf(spec.template.spec, container, sweepFile);
  assert.equal(input.volume.configMap.name, configMap.metadata.name);
  assert.ok(input.below in configMap.data, `the ConfigMap holds ${input.below}`);
  const out = / --out (\S+)/.exec(command)![1];
  const results = volumeOf(spec.template.spec, container, out);
  assert.equal(results.volume.persistentVolumeClaim.claimName, claim.metadata.name);
  assert.ok(claim.spec.accessModes.includes('ReadWriteMany'), 'every shard pod writes the same volume');

  assert.equal(merge.kind, 'Job');
  const [mergeContainer] = merge.spec.template.spec.containers;
  const mergeCommand = mergeContainer.args.join(' ');
  const glob = /sweep merge (\S+)\/shard-\*-of-(\d+)\.json --out (\S+)/.exec(mergeCommand);
  assert.ok(glob, mergeCommand);
  assert.equal(Number(glob[2]), shards, 'the merge reads the files of N shards');
  const mergeInput = volumeOf(merge.spec.template.spec, mergeContainer, glob[1]);
  assert.equal(mergeInput.volume.persistentVolumeClaim.claimName, claim.metadata.name, 'the merge reads the claim the shards wrote');
  assert.equal(mergeInput.below, results.below, 'the merge reads the folder the shards wrote');
  for (const c of [container, mergeContainer]) assert.ok(c.args.join(' ').includes(KVQUAL_IN_IMAGE));
  assert.match(fs.readFileSync(path.join(K8S, 'Dockerfile'), 'utf8'), new RegExp(`WORKDIR ${path.posix.dirname(path.posix.dirname(KVQUAL_IN_IMAGE))}\\n`));
});

test("each pod's command, run here with its volumes as local folders, gives the whole sweep", async (t) => {
  const { configMap, job, merge } = sweepParts();
  const root = scratchFolder('k8s', t);
  const [input, results] = [path.join(root, 'input'), path.join(root, 'results')];
  fs.mkdirSync(input);
  fs.mkdirSync(results);
  for (const [name, text] of Object.entries(configMap.data as Record<string, string>)) fs.writeFileSync(path.join(input, name), text);
  assert.deepEqual(parse(configMap.data['base.yaml']), parse(fs.readFileSync(path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml'), 'utf8')), 'the ConfigMap carries the example config');
  const local = (command: string) => command.replaceAll(KVQUAL_IN_IMAGE, path.join(ROOT, 'bin', 'kvqual.js')).replaceAll('/input', input).replaceAll('/results', results);
  const run = (command: string, env: Record<string, string>) => spawnSync('/bin/sh', ['-c', local(command)], { env: { ...process.env, ...env }, encoding: 'utf8' });
  for (let index = 0; index < job.spec.completions; index++) {
    const args = expandedArgs(local(job.spec.template.spec.containers[0].args[0]), `node ${path.join(ROOT, 'bin', 'kvqual.js')}`, { JOB_COMPLETION_INDEX: String(index) });
    assert.ok(args.includes(`${index + 1}/${job.spec.completions}`), args.join(' '));
    // One worker process where the pod asks for its two cores' worth: the answer is the same on any --jobs (sweep.test.ts).
    const jobs = args.indexOf('--jobs');
    assert.ok(jobs > 0, args.join(' '));
    const pod = await kvqualInProcessAsync([...args.slice(0, jobs + 1), '1', ...args.slice(jobs + 2)]);
    assert.equal(pod.status, 0, pod.stderr);
  }
  const merged = run(merge.spec.template.spec.containers[0].args[0], {});
  assert.equal(merged.status, 0, merged.stderr);
  const sweep = JSON.parse(fs.readFileSync(path.join(results, 'sweep', 'sweep.json'), 'utf8'));
  assert.equal(sweep.points.length, 24);
  assert.ok(fs.existsSync(path.join(results, 'sweep', 'sweep.html')));
});

test('the CI matrix runs shards 1..N of N and the merge job downloads exactly what they upload', () => {
  const workflow = parse(fs.readFileSync(path.join(ROOT, 'examples', 'ci', 'sweep-matrix.yml'), 'utf8')) as Doc;
  const { sweep, merge } = workflow.jobs;
  const shards: number[] = sweep.strategy.matrix.shard;
  assert.deepEqual(shards, Array.from({ length: shards.length }, (_, i) => i + 1));
  const runs = (job: Doc) => (job.steps as Doc[]).filter((step) => step.run).map((step) => step.run as string);
  const shardRun = runs(sweep).find((line) => line.includes('--shard'))!;
  const m = /--shard \$\{\{ matrix\.shard \}\}\/(\d+) --out (\S+)/.exec(shardRun);
  assert.ok(m, shardRun);
  assert.equal(Number(m[1]), shards.length);
  assert.ok(fs.existsSync(path.join(ROOT, /sweep (\S+\.yaml)/.exec(shardRun)![1])), 'the sweep file exists');
  const upload = (sweep.steps as Doc[]).find((step) => String(step.uses).startsWith('actions/upload-artifact'))!;
  assert.equal(upload.with.path, `${m[2]}/shard-\${{ matrix.shard }}-of-${shards.length}.json`);
  assert.equal(merge.needs, 'sweep');
  const download = (merge.steps as Doc[]).find((step) => String(step.uses).startsWith('actions/download-artifact'))!;
  assert.equal(download.with.pattern, upload.with.name.replace('${{ matrix.shard }}', '*'));
  assert.equal(download.with['merge-multiple'], true);
  const mergeRun = runs(merge).find((line) => line.includes('sweep merge'))!;
  assert.equal(/sweep merge (\S+)\//.exec(mergeRun)![1], download.with.path);
  assert.ok(mergeRun.includes(`shard-*-of-${shards.length}.json`));
});

// ── qualification in shards (examples/k8s/qualify-*.yaml, examples/ci/qualify-matrix.yml) ──

const FIXTURE_SHARD = '--features test/fixtures/signoff/features --requirements test/fixtures/signoff/requirements.yaml --no-coverage --fuzz-runs 10';
const FIXTURE_MERGE = '--requirements test/fixtures/signoff/requirements.yaml';

function qualifyParts() {
  const docs = docsOf(path.join(K8S, 'qualify-job.yaml'));
  assert.deepEqual(docs.map((doc) => doc.kind), ['PersistentVolumeClaim', 'Job']);
  const [claim, job] = docs;
  const [merge] = docsOf(path.join(K8S, 'qualify-merge-job.yaml'));
  return { claim, job, merge };
}

test('the qualification Indexed Job runs shard JOB_COMPLETION_INDEX+1 of N, each into its own folder of the claim the merge Job reads', () => {
  const { claim, job, merge } = qualifyParts();
  const { spec, container, shards, command } = indexedJob(job);
  const shard = /npm run qualify -- --shard "\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)\/(\d+)" --out "(\/\S+)\/shard-\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)"/.exec(command);
  assert.ok(shard, `the shard and its folder come from JOB_COMPLETION_INDEX: ${command}`);
  assert.equal(Number(shard[1]), shards, '--shard i/N uses the Job completions as N');
  const results = volumeOf(spec.template.spec, container, shard[2]);
  assert.equal(results.volume.persistentVolumeClaim.claimName, claim.metadata.name);
  assert.ok(claim.spec.accessModes.includes('ReadWriteMany'), 'every shard pod writes the same volume');

  assert.equal(merge.kind, 'Job');
  const [mergeContainer] = merge.spec.template.spec.containers;
  const mergeCommand = mergeContainer.args.join(' ');
  const m = /npm run qualify -- --merge ((?:\S+ )+)--out (\S+)$/.exec(mergeCommand);
  assert.ok(m, mergeCommand);
  const folders = m[1].trim().split(' ');
  assert.deepEqual(folders, Array.from({ length: shards }, (_, i) => `${shard[2]}/shard-${i + 1}`), 'the merge reads the folders of shards 1..N');
  const mergeInput = volumeOf(merge.spec.template.spec, mergeContainer, folders[0]);
  assert.equal(mergeInput.volume.persistentVolumeClaim.claimName, claim.metadata.name, 'the merge reads the claim the shards wrote');
  assert.equal(mergeInput.below, path.posix.join(results.below, 'shard-1'), 'the merge reads the folders the shards wrote');
  for (const c of [container, mergeContainer]) assert.equal(c.image, container.image, 'shards and merge run one image');
  const dockerfile = fs.readFileSync(path.join(K8S, 'qualify.Dockerfile'), 'utf8');
  assert.match(dockerfile, /^RUN npm ci --no-audit --no-fund$/m, 'the image has the development dependencies (cucumber, tsc, c8)');
  assert.doesNotMatch(dockerfile, /--omit=dev/);
});

test("each qualification pod's command, run here on the fixture suite with its volume as a local folder, merges into one sign-off that passes every gate (a fixture suite: not a release sign-off)", async () => {
  const { job, merge } = qualifyParts();
  const results = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-k8s-qualify-'));
  try {
    // The pods' own commands, on the fixture suite (the whole suite is qualified by npm test's other tests).
    const local = (command: string, fixture: string) => command.replaceAll('/results', results).replace('npm run qualify --', `npm run --silent qualify -- ${fixture}`);
    const run = (command: string, env: Record<string, string>) =>
      new Promise<{ status: number | null; output: string }>((resolve) => {
        const child = spawn('/bin/sh', ['-c', command], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        child.on('close', (status) => resolve({ status, output }));
      });
    const shardCommand = local(job.spec.template.spec.containers[0].args[0], FIXTURE_SHARD);
    // The first pod's command as it is, a real shell, npm and qualify with its suite runs as processes, beside the others.
    const first = run(shardCommand, { JOB_COMPLETION_INDEX: '0' });
    for (let index = 1; index < job.spec.completions; index++) {
      const args = expandedArgs(shardCommand, 'npm run --silent qualify --', { JOB_COMPLETION_INDEX: String(index) });
      assert.ok(args.includes(path.join(results, `shard-${index + 1}`)), args.join(' '));
      const pod = await qualifyInProcess(args);
      assert.equal(pod.status, 0, pod.output);
    }
    const firstPod = await first;
    assert.equal(firstPod.status, 0, firstPod.output);
    const merged = await run(local(merge.spec.template.spec.containers[0].args[0], FIXTURE_MERGE), {});
    assert.equal(merged.status, NARROWED_EXIT_STATUS, merged.output);
    const signoff = fs.readFileSync(path.join(results, 'signoff', 'signoff.md'), 'utf8');
    assert.match(signoff, /\| Verdict \| \*\*PASSED — NOT A RELEASE SIGN-OFF\*\* ❌ \|/);
    assert.match(signoff, /\| Scenarios \| 3 of 3 scenarios passed \| ✅ \|/);
  } finally {
    fs.rmSync(results, { recursive: true, force: true });
  }
});

test('the qualification CI matrix runs shards 1..N of N and the merge job, always run, merges exactly what they upload', () => {
  const workflow = parse(fs.readFileSync(path.join(ROOT, 'examples', 'ci', 'qualify-matrix.yml'), 'utf8')) as Doc;
  const { shard, merge } = workflow.jobs;
  const shards: number[] = shard.strategy.matrix.shard;
  assert.deepEqual(shards, Array.from({ length: shards.length }, (_, i) => i + 1));
  assert.equal(shard.strategy['fail-fast'], false);
  const runs = (job: Doc) => (job.steps as Doc[]).filter((step) => step.run).map((step) => step.run as string);
  const shardRun = runs(shard).find((line) => line.includes('--shard'))!;
  const m = /npm run qualify -- --shard \$\{\{ matrix\.shard \}\}\/(\d+) --out (\S+)$/.exec(shardRun);
  assert.ok(m, shardRun);
  assert.equal(Number(m[1]), shards.length);
  const copy = runs(shard).find((line) => line.includes('cp -L'))!;
  const upload = (shard.steps as Doc[]).find((step) => String(step.uses).startsWith('actions/upload-artifact'))!;
  const uploaded = upload.with.path.replace(/\/$/, '');
  for (const name of ['shard.json', 'messages.ndjson', 'messages-rerun.ndjson']) assert.ok(copy.includes(`${m[2]}/${name}`), `the shard's ${name} is copied out of its links`);
  assert.ok(copy.trim().endsWith(` ${uploaded}/`), 'into the folder that is uploaded');
  assert.equal(upload.with.name, 'qualify-shard-${{ matrix.shard }}');
  assert.equal(merge.needs, 'shard');
  assert.equal(merge.if, '${{ always() }}', 'the merge runs even when a shard job failed, so the gap is named');
  const download = (merge.steps as Doc[]).find((step) => String(step.uses).startsWith('actions/download-artifact'))!;
  assert.equal(download.with.pattern, upload.with.name.replace('${{ matrix.shard }}', '*'));
  assert.notEqual(download.with['merge-multiple'], true, 'one folder per shard artifact');
  const mergeRun = runs(merge).find((line) => line.includes('--merge'))!;
  assert.equal(/--merge (\S+) --out/.exec(mergeRun)![1], `${download.with.path}/${download.with.pattern}`, 'the merge reads every downloaded shard folder');
});
