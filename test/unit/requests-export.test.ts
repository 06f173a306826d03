// Tests of the per-request export: CSV quoting of awkward ids (RFC 4180), empty cells for missing
// values, and the format chosen by the file extension.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { requestsFormatOf, writeRequests } from '../../src/report/requestsExport';

test('the extension chooses the format', () => {
  assert.equal(requestsFormatOf('a/b.JSONL'), 'jsonl');
  assert.equal(requestsFormatOf('x.csv'), 'csv');
  assert.equal(requestsFormatOf('x.json'), null);
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
