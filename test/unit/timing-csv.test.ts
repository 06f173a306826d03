// Tests of pass-time tables read from a CSV file: the same points as inline, each problem named by
// file and line, and the command line (run in this process) reading the file beside the config
// (same digest as inline).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { scratchFolder } from '../support/scratch';
import * as path from 'node:path';
import { parseTimingCsv, TimingCsvError } from '../../src/config/timingCsv';
import { kvqualInProcess } from '../support/cli';

const HEADER = 'pass,new_tokens,batch_size,context_tokens,ms';

test('a CSV table gives the same points as an inline one; blank and # lines are skipped', () => {
  const points = parseTimingCsv(`${HEADER}\nprefill,400,,,20\n# measured on the bench\n\nprefill,4000,,,110.5\ndecode,,1,1000,5\r\n`, 't.csv');
  assert.deepEqual(points, { prefill: [{ tokens: 400, ms: 20 }, { tokens: 4000, ms: 110.5 }], decode: [{ batch_size: 1, context_tokens: 1000, ms: 5 }] });
});

test('a bad CSV table names the file, the line and the problem', () => {
  const problem = (text: string) => {
    try {
      parseTimingCsv(text, 't.csv');
    } catch (error) {
      assert.ok(error instanceof TimingCsvError, String(error));
      return error.message;
    }
    assert.fail('accepted');
  };
  assert.equal(problem('tokens,ms\n'), 't.csv:1: the header must be pass,new_tokens,batch_size,context_tokens,ms');
  assert.equal(problem(`${HEADER}\nprefill,400,,20\n`), 't.csv:2: 4 fields; a row has 5 (pass,new_tokens,batch_size,context_tokens,ms)');
  assert.equal(problem(`${HEADER}\nprefill,4e2,,,20\n`), 't.csv:2: new_tokens "4e2" is not a non-negative number');
  assert.equal(problem(`${HEADER}\nprefill,400,1,,20\n`), 't.csv:2: a prefill row leaves batch_size empty');
  assert.equal(problem(`${HEADER}\nwarmup,400,,,20\n`), 't.csv:2: pass "warmup" must be prefill or decode');
  assert.equal(problem(`${HEADER}\nprefill,400,,,20\ndecode,,1,8,1\nprefill,300,,,20\n`), 't.csv: table.prefill points must have strictly increasing tokens');
  assert.match(problem(`${HEADER}\nprefill,400,,,20\ndecode,,1,8,1\ndecode,,2,8,0.0000001\n`), /^t\.csv:4: .*decimals/);
  assert.equal(problem(`${HEADER}\nprefill,400,,,20\n`), 't.csv: table.decode needs at least one point');
});

test('kvqual replay reads timing.table.csv beside the config: the same digest as the inline table', (t) => {
  const run = (file: string) => kvqualInProcess(['replay', file, '--json']);
  const dir = scratchFolder('csv', t);
  const timing = (table: string) => `
cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 64, max_num_batched_tokens: 16, timing: { table: ${table} } }
workload:
  requests:
    - { id: a, arrival_ms: 0, prompt: [{ tokens: 40 }], output_length: 3 }
    - { id: b, arrival_ms: 1, prompt: [{ tokens: 7 }], output_length: 4 }
`;
  writeFileSync(path.join(dir, 'points.csv'), `${HEADER}\nprefill,4,,,1\nprefill,16,,,2.5\ndecode,,1,8,0.5\ndecode,,2,8,0.75\n`);
  writeFileSync(path.join(dir, 'csv.yaml'), timing('{ csv: points.csv, source: bench }'));
  writeFileSync(path.join(dir, 'inline.yaml'), timing('{ prefill: [{ tokens: 4, ms: 1 }, { tokens: 16, ms: 2.5 }], decode: [{ batch_size: 1, context_tokens: 8, ms: 0.5 }, { batch_size: 2, context_tokens: 8, ms: 0.75 }], source: bench }'));
  const [fromCsv, inline] = [run(path.join(dir, 'csv.yaml')), run(path.join(dir, 'inline.yaml'))];
  assert.equal(fromCsv.status, 0, fromCsv.stderr);
  assert.equal(JSON.parse(fromCsv.stdout).digest, JSON.parse(inline.stdout).digest);
  assert.equal(JSON.parse(fromCsv.stdout).summary.fidelity, 'calibrated: bench');
  writeFileSync(path.join(dir, 'missing.yaml'), timing('{ csv: nowhere.csv }'));
  const missing = run(path.join(dir, 'missing.yaml'));
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /cluster\.workers\[0\]\.engine\.timing\.table\.csv: cannot read .*nowhere\.csv: no such file/);
  mkdirSync(path.join(dir, 'sub'));
  writeFileSync(path.join(dir, 'sub', 'outside.yaml'), timing('{ csv: ../points.csv }'));
  const outside = run(path.join(dir, 'sub', 'outside.yaml'));
  assert.equal(outside.status, 2);
  assert.match(outside.stderr, /timing\.table\.csv: .*points\.csv is outside the config's folder; keep the table beside the config/);
  writeFileSync(path.join(dir, 'bad.csv'), `${HEADER}\nprefill,4,,,1\ndecode,,1,8,x\n`);
  writeFileSync(path.join(dir, 'bad.yaml'), timing('{ csv: bad.csv }'));
  const bad = run(path.join(dir, 'bad.yaml'));
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /timing\.table\.csv: .*bad\.csv:3: ms "x" is not a non-negative number/);
  assert.equal(readFileSync(path.join(dir, 'points.csv'), 'utf8').split('\n').length, 6);
});
