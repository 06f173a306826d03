// `kvqual replay` ends by naming each file it wrote, one a line with what it holds, as the command
// line named it: after the summary on standard output, or on standard error beside --json (whose
// standard output stays the report alone). A run that writes nothing lists nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliAsync } from '../../src/cli/main';
import { ROOT } from '../support/paths';

const CONFIG = path.join(ROOT, 'examples', 'configs', 'two-replicas-private.yaml');

async function replay(cwd: string, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const status = await runCliAsync(['replay', CONFIG, ...args], { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd });
  return { status, stdout, stderr };
}

test('replay ends by naming every file it wrote: the report, the requests, the events and each chart', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-written-'));
  try {
    fs.mkdirSync(path.join(dir, 'plots'));
    const run = await replay(dir, '--out', 'report.json', '--requests-out', 'requests.csv', '--events-out', 'events.jsonl', '--plot', 'plots');
    assert.equal(run.status, 0, run.stderr);
    const listed = run.stdout.slice(run.stdout.indexOf('\nwrote ') + 1).split('\n').filter(Boolean);
    assert.equal(listed[0], 'wrote 9 files:');
    const files = listed.slice(1).map((line) => line.trim().split(/\s{2,}/)[0]);
    const charts = ['ttft-cdf.svg', 'itl-cdf.svg', 'throughput.svg', 'queue-depth.svg', 'g1-reuse.svg', 'g2-reuse.svg'].map((name) => path.join('plots', name));
    assert.deepEqual(files, ['report.json', 'events.jsonl', 'requests.csv', ...charts]);
    for (const file of files) assert.ok(fs.statSync(path.join(dir, file)).size > 0, file);
    assert.match(run.stdout, /\n {2}report\.json {7,}the canonical report \(JSON\)\n/);
    assert.match(run.stdout, /\n {2}plots\/queue-depth\.svg {2}chart: most requests waiting for admission at once, over time\n/);
    assert.ok(run.stdout.indexOf('digest sha256:') < run.stdout.indexOf('\nwrote '), 'the list ends the output');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('beside --json the list goes to standard error, and a run that writes nothing lists nothing', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-written-'));
  try {
    const json = await replay(dir, '--json', '--out', 'report.json');
    assert.equal(json.status, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).digest, JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8')).digest);
    assert.equal(json.stderr, 'wrote 1 file:\n  report.json  the canonical report (JSON)\n');
    const nothing = await replay(dir);
    assert.equal(nothing.status, 0, nothing.stderr);
    assert.doesNotMatch(nothing.stdout + nothing.stderr, /wrote/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
