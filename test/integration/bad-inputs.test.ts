// The bad-input corpus (issue 11): every case of test/fixtures/bad-inputs/cases.yaml goes through
// the kvqual command line — most in this process through runCliAsync (sweeps included), the cases
// marked `process: true` as a real `node bin/kvqual.js` — and must exit with its status, print its one message (no stack
// trace, no "internal error"), leave no output file behind (its --out folder stays empty and the
// corpus folder unchanged), and finish in under 5 s.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { runCliAsync } from '../../src/cli/main';
import type { CliIo } from '../../src/cli/io';

const ROOT = path.join(__dirname, '..', '..');
const CORPUS = path.join(ROOT, 'test', 'fixtures', 'bad-inputs');
const BIN = path.join(ROOT, 'bin', 'kvqual.js');
/**
 * A case that takes longer hangs or blows up (an exponential YAML expansion, a loop): a guard, not a
 * measure of speed. Generous, as a fresh clone's first processes compile the sources (a loaded CI
 * machine took 6.6 s for one that takes 0.5 s here); a blow-up takes minutes or all the memory.
 */
const CASE_LIMIT_MS = 30_000;
const LINE_LIMIT = 8 * 1024 * 1024;

interface Case {
  case: string;
  args: string[];
  exit: number;
  message: string;
  setup?: string;
  absent?: string[];
  process?: boolean;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

const cases = parse(fs.readFileSync(path.join(CORPUS, 'cases.yaml'), 'utf8')) as Case[];
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-bad-inputs-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Every file under a folder, relative to it, sorted (to prove a run wrote nothing there). */
function listing(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map(String).sort();
}

const corpusBefore = listing(CORPUS);

const BASE_CLUSTER = [
  'cluster:',
  '  workers:',
  '    - role: aggregated',
  '      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 0.5 } } }',
].join('\n');

const mooncakeConfig = (trace: string, blockSize = 4) => `${BASE_CLUSTER}\nworkload:\n  trace_block_size: ${blockSize}\n  mooncake:\n    trace: ${trace}\n`;
const mooncakeRow = '{"timestamp": 0, "input_length": 8, "output_length": 2, "hash_ids": [1, 2]}';

/** Inputs too large, or too special (a FIFO, a symbolic link), to keep in the repository: made in `gen`. */
const SETUPS: Record<string, (gen: string) => void> = {
  'fifo-config': (gen) => {
    const made = spawnSync('mkfifo', [path.join(gen, 'config.yaml')]);
    assert.equal(made.status, 0, 'mkfifo failed');
  },
  'large-config': (gen) => fs.writeFileSync(path.join(gen, 'config.yaml'), `${'# padding\n'.repeat(420_000)}${BASE_CLUSTER}\n`),
  'million-hash-ids': (gen) => {
    const ids = Array.from({ length: 1_000_000 }, (_, i) => i).join(',');
    fs.writeFileSync(path.join(gen, 'trace.jsonl'), `{"timestamp": 0, "input_length": 512000000, "output_length": 2, "hash_ids": [${ids}]}\n`);
    fs.writeFileSync(path.join(gen, 'config.yaml'), mooncakeConfig('trace.jsonl', 512));
  },
  'long-line-trace': (gen) => {
    fs.writeFileSync(path.join(gen, 'trace.jsonl'), `${mooncakeRow}\n{"timestamp": 1, "pad": "${'x'.repeat(LINE_LIMIT)}"}\n`);
    fs.writeFileSync(path.join(gen, 'config.yaml'), mooncakeConfig('trace.jsonl'));
  },
  'symlink-trace': (gen) => {
    fs.symlinkSync('/etc/passwd', path.join(gen, 'trace.jsonl'));
    fs.writeFileSync(path.join(gen, 'config.yaml'), mooncakeConfig('trace.jsonl'));
  },
  'deep-nesting-events': (gen) => fs.writeFileSync(path.join(gen, 'events.jsonl'), `${'['.repeat(200_000)}${']'.repeat(200_000)}\n`),
  'long-line-events': (gen) => {
    const line = '{"worker_id": 1, "event": {"event_id": 0, "data": "cleared"}}';
    fs.writeFileSync(path.join(gen, 'events.jsonl'), `${line}\n${' '.repeat(LINE_LIMIT + 1)}\n`);
  },
};

async function inProcess(args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: CORPUS };
  try {
    return { status: await runCliAsync(args, io), stdout, stderr };
  } catch (error) {
    return { status: 3, stdout, stderr: `${stderr}kvqual: internal error (please report): ${(error as Error).stack}\n` };
  }
}

function asProcess(args: string[]): Run {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd: CORPUS, encoding: 'utf8', timeout: 2 * CASE_LIMIT_MS });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('the corpus holds at least 60 cases, each named once, some run as real processes', () => {
  assert.ok(cases.length >= 60, `${cases.length} cases`);
  assert.equal(new Set(cases.map((c) => c.case)).size, cases.length, 'case names are unique');
  assert.ok(cases.filter((c) => c.process).length >= 5, 'at least five cases go through a real process');
  for (const c of cases) assert.ok(c.message && c.args?.length, `${c.case}: args and message are given`);
});

for (const c of cases) {
  test(`bad input: ${c.case}`, async () => {
    const dir = fs.mkdtempSync(path.join(scratch, `${c.case}-`));
    const out = path.join(dir, 'out');
    const gen = path.join(dir, 'gen');
    fs.mkdirSync(out);
    fs.mkdirSync(gen);
    if (c.setup) {
      assert.ok(SETUPS[c.setup], `unknown setup ${c.setup}`);
      SETUPS[c.setup](gen);
    }
    const generated = listing(gen);
    const fill = (text: string) => text.replaceAll('{out}', out).replaceAll('{gen}', gen);
    const args = c.args.map(fill);
    if (args[0] === 'replay' && !args.includes('--out') && !args.includes('--events-out')) {
      args.push('--out', path.join(out, 'report.json'), '--events-out', path.join(out, 'events.jsonl'));
    }
    const started = Date.now();
    const run = c.process ? asProcess(args) : await inProcess(args);
    const elapsed = Date.now() - started;
    const output = `${run.stdout}${run.stderr}`;
    assert.equal(run.status, c.exit, `exit status; output:\n${output}`);
    assert.ok(run.stderr.includes(fill(c.message)), `expected the message\n  ${fill(c.message)}\nin\n${output}`);
    assert.match(run.stderr, /^kvqual[ :]/, 'the message comes from kvqual');
    assert.equal(run.stdout, '', 'nothing on standard output');
    assert.doesNotMatch(output, /^\s+at .+(:\d+:\d+\)?|\(native\))$/m, 'no stack trace');
    assert.doesNotMatch(output, /internal error/, 'no internal error');
    for (const text of c.absent ?? []) assert.ok(!output.includes(text), `must not print ${JSON.stringify(text)}`);
    assert.deepEqual(listing(out), [], 'no output file (or temporary file) is left behind');
    assert.deepEqual(listing(gen), generated, 'nothing is written beside the inputs');
    assert.ok(elapsed < CASE_LIMIT_MS, `took ${elapsed} ms`);
  });
}

test('no case wrote into the corpus folder', () => {
  assert.deepEqual(listing(CORPUS), corpusBefore);
});
