// Unit tests of the plain failure sentence: chai's equality, ordering and inclusion failures read
// as "label: expected …, measured …" with the unit the step recorded; other errors are left alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expect } from 'chai';
import { plainSentence } from '../../src/signoff/plainFailure';

function failure(check: () => void): Error & { actual?: unknown; expected?: unknown } {
  try {
    check();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the check passed');
}

test('an equality failure names the check, the expected and the measured value with its unit', () => {
  const error = failure(() => expect(2, 'H2D wait of r2').to.equal(4));
  assert.equal(plainSentence(error, () => 'ms'), 'H2D wait of r2: expected 4 ms, measured 2 ms.');
});

test('ordering, inclusion, deep equality and null read as sentences too', () => {
  assert.equal(plainSentence(failure(() => expect(0, '1-lane residency').to.be.greaterThan(0)), () => 'blocks'), '1-lane residency: expected more than 0 blocks, measured 0 blocks.');
  assert.equal(plainSentence(failure(() => expect('setup failed', 'the error a user reads').to.contain('block_size'))), 'the error a user reads: expected something that includes "block_size", measured "setup failed".');
  assert.equal(plainSentence(failure(() => expect([1, 2], 'placements').to.deep.equal([1]))), 'placements: expected [1], measured [1,2].');
  assert.equal(plainSentence(failure(() => expect('line one\nline two', 'guard error').to.equal(null))), 'guard error: expected none, measured "line one / line two".');
});

test('an error that is not an assertion keeps its own message', () => {
  assert.equal(plainSentence(new Error('describe the cluster first')), null);
});
