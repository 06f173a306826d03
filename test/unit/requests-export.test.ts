// Tests of the per-request export: CSV quoting of awkward ids (RFC 4180), empty cells for missing
// values, and the format chosen by the file extension.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { requestsFormatOf, writeRequests } from '../../src/report/requestsExport';
import { handComputedRun } from '../support/configs';

test('the extension chooses the format', () => {
  assert.equal(requestsFormatOf('a/b.JSONL'), 'jsonl');
  assert.equal(requestsFormatOf('x.csv'), 'csv');
  assert.equal(requestsFormatOf('x.json'), null);
});

test('a record holds every column, in order, named as AIPerf names them, with the report\'s figures', () => {
  // Two requests on one rank, fixed timing (test/unit/request-metrics.test.ts computes the same run by hand).
  const config = parseReplayConfig(handComputedRun(), 't.yaml');
  const { report } = runReplay(config);
  let jsonl = '';
  writeRequests(report, 'jsonl', (text) => (jsonl += text));
  const b = JSON.parse(jsonl.trimEnd().split('\n')[1]);
  assert.deepEqual(Object.entries(b), [
    ['request_id', 'b'],
    ['ordinal', 1],
    ['session_id', null],
    ['status', 'finished'],
    ['worker_id', 0],
    ['dp_rank', 0],
    ['arrival_ms', 2.5],
    ['input_sequence_length', 4],
    ['output_sequence_length', 2],
    ['time_to_first_token_ms', 3.5],
    ['time_to_second_token_ms', 1],
    ['inter_token_latency_ms', 1],
    ['time_per_output_token_ms', 1],
    ['request_latency_ms', 4.5],
    ['output_token_throughput_per_user', 1000],
    ['queue_time_ms', 0.5],
    ['h2d_wait_ms', 0],
    ['g1_reused_tokens', 0],
    ['g2_reused_tokens', 0],
    ['requested_blocks', 1],
    ['hit_blocks', 0],
    ['ceiling_hit_blocks', 0],
    ['preemptions', 0],
    ['failure_reason', null],
  ]);
  let csv = '';
  writeRequests(report, 'csv', (text) => (csv += text));
  const [header, , row] = csv.trimEnd().split('\n');
  assert.equal(header, Object.keys(b).join(','));
  assert.equal(row, 'b,1,,finished,0,0,2.5,4,2,3.5,1,1,1,4.5,1000,0.5,0,0,0,1,0,0,0,');
});

test('CSV quotes ids with commas and quotes, and leaves a missing value empty', () => {
  const config = parseReplayConfig(
    `
cluster:
  workers:
    - role: aggregated
      engine: { block_size: 4, num_gpu_blocks: 16, timing: { fixed: { prefill_ms: 1, decode_ms: 1 } } }
workload:
  requests:
    - { id: 'a,"b"', arrival_ms: 0, prompt: [{ tokens: 4 }], output_length: 1 }
`,
    't.yaml',
  );
  const { report } = runReplay(config);
  let csv = '';
  writeRequests(report, 'csv', (text) => (csv += text));
  const [header, row] = csv.trimEnd().split('\n');
  assert.ok(row.startsWith('"a,""b""",0,,finished,'), row);
  const columns = header.split(',');
  // one output token: no second token, no inter-token latency
  const cells = row.replace('"a,""b"""', 'id').split(',');
  assert.equal(cells[columns.indexOf('time_to_second_token_ms')], '');
  assert.equal(cells[columns.indexOf('inter_token_latency_ms')], '');
  assert.equal(cells[columns.indexOf('time_to_first_token_ms')], '1');
  let jsonl = '';
  writeRequests(report, 'jsonl', (text) => (jsonl += text));
  assert.equal(JSON.parse(jsonl).request_id, 'a,"b"');
});
