// Prefix hit rates in the three published definitions and the infinite-cache ceiling: the
// published ceilings of the FAST'25 Mooncake traces reproduced from the traces themselves, the
// ceiling the simulator computes from its own block hashes, and the arithmetic on requests made by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import { PrefixCeiling, prefixHitRates, requestedBlocks, type RequestReuse } from '../../src/report/prefixHitRates';
import { tracePrompt } from '../../src/prompt';
import { WORDS_PER_BLOCK } from '../../src/hash';
import { traceFolder } from '../../src/traceFolder';
import { ROOT } from '../support/paths';

const TRACES = traceFolder(ROOT);
const haveTraces = fs.existsSync(path.join(TRACES, 'conversation_trace.jsonl')) && fs.existsSync(path.join(TRACES, 'synthetic_trace.jsonl'));
const skip = !haveTraces && `no published traces at ${TRACES} (set KVQUAL_TRACES)`;

interface TraceRow {
  input_length: number;
  hash_ids: number[];
}

function rows(name: string): TraceRow[] {
  return fs
    .readFileSync(path.join(TRACES, name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TraceRow);
}

/** The ceiling as the paper counts it: each trace hash id is a 512-token block (a partial last one included), its id standing for its whole prefix. */
function publishedCeiling(name: string) {
  const ceiling = new PrefixCeiling();
  const requests: RequestReuse[] = rows(name).map((row) => {
    const words = new Int32Array(2 * row.hash_ids.length);
    row.hash_ids.forEach((id, i) => (words[2 * i] = id));
    const hits = ceiling.observe(words, 2);
    return { input_tokens: row.input_length, requested_blocks: row.hash_ids.length, hit_blocks: 0, hit_tokens: 0, ceiling_hit_blocks: hits, ceiling_hit_tokens: Math.min(hits * 512, row.input_length) };
  });
  return prefixHitRates(requests, 512).ceiling;
}

test('the block-weighted ceiling of the conversation trace at 512-token blocks is the published 36.64 %', { skip }, () => {
  assert.equal(publishedCeiling('conversation_trace.jsonl').block_weighted.toFixed(4), '0.3664');
});

test('the block-weighted ceiling of the synthetic trace is the published 63.96 %', { skip }, () => {
  assert.equal(publishedCeiling('synthetic_trace.jsonl').block_weighted.toFixed(4), '0.6396');
});

test("the simulator's ceiling from its own block hashes: only complete blocks are cached, so partial last blocks never hit (36.60 % by block, 37.34 % by token)", { skip }, () => {
  const ceiling = new PrefixCeiling();
  const requests: RequestReuse[] = rows('conversation_trace.jsonl').map((row) => {
    const hits = ceiling.observe(tracePrompt(row.hash_ids, row.input_length, 512).computeBlockWords(512), WORDS_PER_BLOCK);
    return { input_tokens: row.input_length, requested_blocks: requestedBlocks(row.input_length, 512), hit_blocks: 0, hit_tokens: 0, ceiling_hit_blocks: hits, ceiling_hit_tokens: hits * 512 };
  });
  const rates = prefixHitRates(requests, 512).ceiling;
  assert.equal(rates.block_weighted.toFixed(4), '0.3660');
  assert.equal(rates.token_weighted.toFixed(4), '0.3734');
});

test("a request's ceiling hit is the longest prefix of its blocks that any earlier request had, not every block it shares", () => {
  const ceiling = new PrefixCeiling();
  const blocks = (...keys: number[]) => Int32Array.from(keys.flatMap((key) => [key, 7]));
  assert.equal(ceiling.observe(blocks(1, 2, 3), 2), 0);
  assert.equal(ceiling.observe(blocks(1, 2, 4), 2), 2);
  assert.equal(ceiling.observe(blocks(9, 2, 3), 2), 0, 'blocks 2 and 3 were seen, but not after block 9');
  assert.equal(ceiling.observe(blocks(9, 2, 3, 5), 2), 3);
  assert.equal(ceiling.observe(Int32Array.from([1, 8]), 2), 0, 'both key words count');
});

test('the three definitions differ as the published figures do, and the realised share is measured ÷ ceiling', () => {
  // A: 10 tokens in 3 blocks of 4, 2 blocks hit (ceiling 2); B: 4 tokens in 1 block, none hit (ceiling 1).
  const rates = prefixHitRates(
    [
      { input_tokens: 10, requested_blocks: 3, hit_blocks: 2, hit_tokens: 8, ceiling_hit_blocks: 2, ceiling_hit_tokens: 8 },
      { input_tokens: 4, requested_blocks: 1, hit_blocks: 0, hit_tokens: 0, ceiling_hit_blocks: 1, ceiling_hit_tokens: 4 },
    ],
    4,
  );
  assert.deepEqual(
    { token: rates.measured.token_weighted, block: rates.measured.block_weighted, request: rates.measured.request_averaged },
    { token: 8 / 14, block: 2 / 4, request: (2 / 3 + 0) / 2 },
  );
  assert.deepEqual(
    { token: rates.ceiling.token_weighted, block: rates.ceiling.block_weighted, request: rates.ceiling.request_averaged },
    { token: 12 / 14, block: 3 / 4, request: (2 / 3 + 1) / 2 },
  );
  assert.equal(rates.of_ceiling.block_weighted, 0.5 / 0.75);
  assert.equal(rates.requested_blocks, 4);
  assert.equal(requestedBlocks(10, 4), 3, 'a partial last block is requested');
});

test('with nothing to reuse the ceiling is 0 and the realised share is not measured (null), not 0', () => {
  const rates = prefixHitRates([{ input_tokens: 4, requested_blocks: 1, hit_blocks: 0, hit_tokens: 0, ceiling_hit_blocks: 0, ceiling_hit_tokens: 0 }], 4);
  assert.deepEqual(rates.of_ceiling, { token_weighted: null, block_weighted: null, request_averaged: null });
});

test('the ceiling counts what a set of every block seen counts, the hash 0 and table growth included', () => {
  const block = fc.tuple(fc.integer({ min: -2, max: 2 }), fc.integer({ min: -1, max: 1 }));
  fc.assert(
    fc.property(fc.array(fc.array(block, { maxLength: 40 }), { maxLength: 60 }), fc.array(fc.nat(), { minLength: 1, maxLength: 50 }), (prompts, salts) => {
      const ceiling = new PrefixCeiling();
      const seen = new Set<string>();
      prompts.forEach((prompt, n) => {
        // Blocks as the chain of a prompt: each block's words depend on its prefix, some prompts sharing leading blocks.
        const words = new Int32Array(2 * prompt.length);
        prompt.forEach(([low, high], i) => {
          words[2 * i] = low === 2 ? salts[n % salts.length] + i * 7919 : low;
          words[2 * i + 1] = high;
        });
        const keys = prompt.map((_, i) => `${words[2 * i]}:${words[2 * i + 1]}`);
        let expected = 0;
        while (expected < keys.length && seen.has(keys[expected])) expected++;
        for (const key of keys) seen.add(key);
        assert.equal(ceiling.observe(words, 2), expected);
      });
    }),
    { numRuns: 300 },
  );
});
