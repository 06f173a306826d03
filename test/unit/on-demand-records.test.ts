// A report's per-request records are made when read (onDemandArray): they read as the array of
// records everywhere (indexes, iteration, array methods, JSON, canonical text and digest, deep
// equality, Object.keys, console output), each read makes an equal record, and writing throws.
import { sharedPrefixConfig } from './fixtures';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { canonicalJson, canonicalJsonPretty, digestOf } from '../../src/report/canonical';
import { onDemandArray } from '../../src/report/onDemand';

const CONFIG = sharedPrefixConfig(1, (i) => 5 + i);

test('the records read as an array: indexes, length, iteration, array methods, JSON and canonical text, keys and deep equality', () => {
  const { report } = runReplay(parseReplayConfig(CONFIG, 'on-demand.yaml'));
  const records = report.per_request;
  const copy = records.map((record) => ({ ...record }));
  assert.equal(records.length, 6);
  assert.ok(Array.isArray(records));
  assert.deepEqual([...records].map((record) => record.request_id), ['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
  assert.equal(records[3].request_id, 'r3');
  assert.equal(records.at(-1)!.request_id, 'r5');
  assert.equal(records[6], undefined);
  assert.equal(records.find((record) => record.request_id === 'r2')!.ordinal, 2);
  assert.deepEqual(records.filter((record) => record.ordinal % 2 === 0).map((record) => record.request_id), ['r0', 'r2', 'r4']);
  assert.ok(2 in records && !(6 in records));
  assert.deepEqual(Object.keys(records), ['0', '1', '2', '3', '4', '5']);
  assert.deepEqual(records, copy, 'deep equality with the same records held in an array');
  assert.equal(JSON.stringify(records), JSON.stringify(copy));
  assert.equal(canonicalJson(report), canonicalJson({ ...report, per_request: copy }));
  assert.equal(canonicalJsonPretty(report), canonicalJsonPretty({ ...report, per_request: copy }));
  assert.equal(digestOf({ summary: report.summary, per_request: records }), report.digest);
  assert.equal(digestOf({ summary: report.summary, per_request: copy }), report.digest);
  assert.match(inspect(records, { depth: 0 }), /^\[\s*\[Object\],/, 'console output shows the records, not empty slots');
});

test('each read makes an equal record, not the same object; writing to the records throws', () => {
  const made: number[] = [];
  const items = onDemandArray(3, (i) => {
    made.push(i);
    return { i };
  });
  assert.notEqual(items[1], items[1]);
  assert.deepEqual(items[1], items[1]);
  assert.deepEqual(made, [1, 1, 1, 1]);
  assert.throws(() => ((items as { i: number }[])[0] = { i: 9 }), TypeError);
  assert.throws(() => (items as { i: number }[]).push({ i: 3 }), TypeError);
  assert.throws(() => delete (items as { i: number }[])[0], TypeError);
  assert.throws(() => Object.defineProperty(items, 'extra', { value: 1 }), TypeError);
  assert.equal(items.length, 3);
  assert.deepEqual(onDemandArray(0, () => 1), []);
});
