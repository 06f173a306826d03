// Unit tests of block hashing and prompts (HASH-1, HASH-2): stable 64-bit values, sequence hashes
// that identify whole prefixes, complete blocks only, trace prompts that hash by their tokens, and
// the hashes a replay's Stored events carry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HashedBlock, TokenChunk, chunkToken, hashPromptBlocks, hashPromptWords, sequenceHash, stringKey } from '../../src/hash';
import { Prompt, namedChunk, traceChunk, tracePrompt } from '../../src/prompt';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseReplayConfig } from '../../src/config/load';
import { runReplay } from '../../src/replay';
import { ROOT } from '../support/paths';

const U64_LIMIT = 1n << 64n;

function sequenceHashes(chunks: TokenChunk[], blockSize: number): bigint[] {
  return hashPromptBlocks(chunks, blockSize).map((block) => block.block_hash);
}

function localHashes(blocks: HashedBlock[]): bigint[] {
  return blocks.map((block) => block.tokens_hash);
}

/** How many leading blocks two block lists share (equal sequence hashes). */
function sharedPrefixBlocks(a: HashedBlock[], b: HashedBlock[]): number {
  let shared = 0;
  while (shared < a.length && shared < b.length && a[shared].block_hash === b[shared].block_hash) shared++;
  return shared;
}

// Pinned values: run twice in separate processes and on every CI machine they must not move,
// since reports and captured event logs carry these hashes (HASH-1: deterministic across runs).
// They moved once, on purpose, with report version 2 (blocks inside a chunk hashed from its key).
test('hashes are pinned 64-bit values', () => {
  assert.deepEqual(stringKey('system prompt'), { key_lo: 2783318863, key_hi: 1810998189 });
  const blocks = hashPromptBlocks([namedChunk('system prompt', 8)], 4);
  assert.deepEqual(
    blocks.map((block) => [block.block_hash, block.tokens_hash]),
    [
      [0x9746a9b25b2117a5n, 0x28012c2c35522434n],
      [0xb6c074fa4d7e229cn, 0x28d8e7d0a6aa4157n],
    ],
  );
  assert.equal(sequenceHash(null, 1n), 0x35bbfc58a0aa4155n);
  assert.equal(sequenceHash(0x35bbfc58a0aa4155n, 2n), 0x684d31d630fb9ec8n);
  assert.deepEqual(tracePrompt([1, 2], 16, 8).blockHashes(8), [0x7e054fcac6f39bbdn, 0xca485d977bcf87b8n]);
});

test('every hash fits in 64 bits and hashing twice gives the same blocks', () => {
  const chunks = [namedChunk('system prompt', 40), traceChunk(7, 24)];
  const first = hashPromptBlocks(chunks, 8);
  assert.deepEqual(hashPromptBlocks(chunks, 8), first);
  for (const block of first) {
    for (const hash of [block.block_hash, block.tokens_hash]) assert.ok(hash >= 0n && hash < U64_LIMIT);
  }
});

test('a sequence hash chains the parent sequence hash with the local hash', () => {
  const blocks = hashPromptBlocks([namedChunk('chain', 12)], 4);
  assert.equal(blocks.length, 3);
  assert.equal(blocks[0].block_hash, sequenceHash(null, blocks[0].tokens_hash));
  assert.equal(blocks[1].block_hash, sequenceHash(blocks[0].block_hash, blocks[1].tokens_hash));
  assert.equal(blocks[2].block_hash, sequenceHash(blocks[1].block_hash, blocks[2].tokens_hash));
});

test('prompts with an equal prefix have equal sequence hashes for the blocks of that prefix', () => {
  const a = sequenceHashes([namedChunk('system prompt', 16), namedChunk('question a', 8)], 4);
  const b = sequenceHashes([namedChunk('system prompt', 16), namedChunk('question b', 8)], 4);
  assert.equal(a.length, 6);
  assert.deepEqual(a.slice(0, 4), b.slice(0, 4));
  assert.notEqual(a[4], b[4]);
  assert.notEqual(a[5], b[5]);
});

test('one differing token changes every later sequence hash, though later local hashes stay equal', () => {
  // Tokens 0..5 from "p", then 10 tokens of "q". In b, token 5 comes from "r" instead.
  const a = hashPromptBlocks([namedChunk('p', 6), namedChunk('q', 10)], 4);
  const b = hashPromptBlocks([namedChunk('p', 5), namedChunk('r', 1), namedChunk('q', 10)], 4);
  assert.notEqual(chunkToken(namedChunk('p', 6), 5), chunkToken(namedChunk('r', 1), 0));
  assert.equal(a.length, 4);
  assert.equal(b.length, 4);
  assert.equal(a[0].block_hash, b[0].block_hash, 'block 0 (tokens 0..3) is the same');
  assert.notEqual(a[1].tokens_hash, b[1].tokens_hash, 'block 1 holds the differing token 5');
  assert.deepEqual(localHashes(a.slice(2)), localHashes(b.slice(2)), 'blocks 2..3 hold the same tokens of "q"');
  for (const index of [1, 2, 3]) assert.notEqual(a[index].block_hash, b[index].block_hash, `block ${index}`);
});

test('the local hash depends on the block tokens only, not on where the block sits', () => {
  const alone = hashPromptBlocks([namedChunk('q', 4)], 4);
  const after = hashPromptBlocks([namedChunk('p', 8), namedChunk('q', 4)], 4);
  assert.equal(after[2].tokens_hash, alone[0].tokens_hash);
  assert.notEqual(after[2].block_hash, alone[0].block_hash);
});

test('a partial last block is not hashed', () => {
  assert.equal(hashPromptBlocks([namedChunk('x', 15)], 4).length, 3);
  assert.equal(hashPromptBlocks([namedChunk('x', 16)], 4).length, 4);
  assert.deepEqual(hashPromptBlocks([namedChunk('x', 3)], 4), []);
  assert.deepEqual(hashPromptBlocks([], 4), []);
  // The 15-token prompt is a prefix of the 16-token one: its 3 complete blocks are the same.
  assert.deepEqual(sequenceHashes([namedChunk('x', 15)], 4), sequenceHashes([namedChunk('x', 16)], 4).slice(0, 3));
  assert.equal(new Prompt([namedChunk('x', 15)]).length_tokens, 15);
});

test('blocks cut across chunk boundaries: only the token stream matters', () => {
  // 6 + 10 tokens with 4-token blocks: block 1 holds p[4], p[5], q[0], q[1].
  const whole = sequenceHashes([namedChunk('p', 6), namedChunk('q', 10)], 4);
  const shorter = sequenceHashes([namedChunk('p', 6), namedChunk('q', 2)], 4);
  assert.deepEqual(shorter, whole.slice(0, 2));
  const extended = new Prompt([namedChunk('p', 6)]).extend([namedChunk('q', 10)]);
  assert.deepEqual(extended.blockHashes(4), whole);
});

test('a short chunk that completes a carried-over block leaves the next chunk to start the next block', () => {
  // 6 + 2 + 8 tokens with 4-token blocks: p[4..6] + q[0..2] make block 1; blocks 2 and 3 lie wholly inside r.
  const blocks = hashPromptBlocks([namedChunk('p', 6), namedChunk('q', 2), namedChunk('r', 8)], 4);
  assert.equal(blocks.length, 4);
  assert.deepEqual(localHashes(blocks.slice(2)), localHashes(hashPromptBlocks([namedChunk('r', 8)], 4)));
  assert.deepEqual(blocks.slice(0, 2), hashPromptBlocks([namedChunk('p', 6), namedChunk('q', 2)], 4));
});

test('a block size must be a positive integer', () => {
  for (const size of [0, -4, 2.5]) {
    assert.throws(() => hashPromptBlocks([namedChunk('x', 8)], size), new RegExp(`^RangeError: block size ${size} must be a positive integer$`));
    assert.throws(() => hashPromptWords([namedChunk('x', 8)], size), RangeError);
  }
});

test('a prompt hashes once per block size and keeps the result', () => {
  const prompt = new Prompt([namedChunk('system prompt', 16)]);
  assert.equal(prompt.blocks(4), prompt.blocks(4));
  assert.equal(prompt.blocks(4).length, 4);
  assert.equal(prompt.blocks(8).length, 2);
  assert.deepEqual(prompt.blockHashes(4), prompt.blocks(4).map((block) => block.block_hash));
});

test('a trace prompt is its trace ids as chunks of trace_block_size tokens', () => {
  const prompt = tracePrompt([1, 2], 16, 8);
  assert.deepEqual(prompt.chunks, [traceChunk(1, 8), traceChunk(2, 8)]);
  assert.equal(prompt.length_tokens, 16);
  // The last id covers what remains: 12 tokens are 8 of id 1 and 4 of id 2.
  assert.deepEqual(tracePrompt([1, 2], 12, 8).chunks, [traceChunk(1, 8), traceChunk(2, 4)]);
  // Ids past the prompt's length make no chunks; the last id needed covers all that remains, even
  // past one trace block; a prompt without ids is one chunk named by its namespace and (no) ids.
  assert.deepEqual(tracePrompt([1, 2, 3], 8, 8).chunks, [traceChunk(1, 8)]);
  assert.deepEqual(tracePrompt([1], 12, 8).chunks, [traceChunk(1, 12)]);
  assert.deepEqual(tracePrompt([], 5, 8, 'play-1').chunks, [namedChunk('trace-tail:play-1:', 5)]);
});

test('trace prompts made one after another each keep their own ids, across the chunks they share', () => {
  // Ids of many prompts share chunks of 65,536: 3,000 prompts of 1 to 50 ids fill two and start a third,
  // and one prompt longer than a chunk gets one to itself. Ids past 32 bits or negative (an agentic
  // trace's stand-ins for 64-bit ids; every seventh prompt has some) go into chunks of their own kind,
  // between the others.
  const wide = (p: number, i: number) => [2 ** 53 - 1 - p * 100 - i, 2 ** 32 + p * 100 + i, -(p * 100 + i + 1)][Math.floor(p / 7) % 3];
  const idsOf = (p: number) => Array.from({ length: 1 + (p % 50) }, (_, i) => (p % 7 === 3 && i % 2 === 0 ? wide(p, i) : p * 100 + i));
  const longIds = Array.from({ length: 70_000 }, (_, i) => i);
  const prompts = Array.from({ length: 3000 }, (_, p) => (p === 1500 ? tracePrompt(longIds, 70_000 * 8, 8) : tracePrompt(idsOf(p), idsOf(p).length * 8 - 3, 8, `play-${p}`)));
  for (const [p, prompt] of prompts.entries()) {
    if (p === 1500) {
      assert.deepEqual(prompt.chunks, longIds.map((id) => traceChunk(id, 8)));
      continue;
    }
    const ids = idsOf(p);
    const expected = ids.map((id, i) => traceChunk(id, i === ids.length - 1 ? 5 : 8, `play-${p}`));
    assert.deepEqual(prompt.chunks, expected, `prompt ${p}`);
  }
});

test('trace prompts sharing their first trace block share exactly the engine blocks inside it', () => {
  // Trace blocks of 8 tokens: ids [1, 2] and [1, 3] share tokens 0..7 and differ from token 8 on.
  const a = tracePrompt([1, 2], 16, 8);
  const b = tracePrompt([1, 3], 16, 8);
  const expectedShared: [number, number][] = [
    [2, 4], // 8 shared tokens / 2-token blocks
    [4, 2],
    [8, 1],
    [16, 0], // the one 16-token block mixes both trace blocks
  ];
  for (const [blockSize, shared] of expectedShared) {
    assert.equal(sharedPrefixBlocks(a.blocks(blockSize), b.blocks(blockSize)), shared, `engine block size ${blockSize}`);
  }
});

test('a partial trace block materialises the first tokens of the full one', () => {
  const partial = tracePrompt([1, 2], 12, 8);
  const full = tracePrompt([1, 2], 16, 8);
  assert.deepEqual(partial.blockHashes(4), full.blockHashes(4).slice(0, 3));
});

test('the same ids under another trace block size are other tokens after the first trace block', () => {
  // Trace block 4: id 1 covers tokens 0..3, id 2 covers 4..15 (the last id takes the rest).
  // Trace block 8: id 1 covers tokens 0..7. Tokens 0..3 agree; token 4 is id 2's first vs id 1's fifth.
  const small = tracePrompt([1, 2], 16, 4);
  const large = tracePrompt([1, 2], 16, 8);
  assert.equal(sharedPrefixBlocks(small.blocks(4), large.blocks(4)), 1);
});

test('trace ids in different namespaces never share blocks', () => {
  const playA = tracePrompt([1, 2], 16, 8, 'play-a');
  const playB = tracePrompt([1, 2], 16, 8, 'play-b');
  assert.equal(sharedPrefixBlocks(playA.blocks(4), playB.blocks(4)), 0);
  assert.deepEqual(tracePrompt([1, 2], 16, 8, 'play-a').blockHashes(4), playA.blockHashes(4));
});

test('a block inside one chunk and the same tokens elsewhere inside that chunk kind hash alike; a block across chunks hashes from its tokens', () => {
  // The same trace id at another place in another prompt: its whole blocks have the same local hashes.
  const alone = hashPromptBlocks([traceChunk(7, 24)], 8);
  const later = hashPromptBlocks([namedChunk('lead', 16), traceChunk(7, 24)], 8);
  assert.deepEqual(localHashes(later.slice(2)), localHashes(alone));
  // Starting 4 tokens into the chunk is another token run: other local hashes.
  const shifted = hashPromptBlocks([namedChunk('lead', 4), traceChunk(7, 24)], 8);
  assert.notDeepEqual(localHashes(shifted.slice(1, 3)), localHashes(alone.slice(0, 2)));
  // A block across two chunks is hashed from its tokens, so it depends on both.
  const across = hashPromptBlocks([namedChunk('a', 4), namedChunk('b', 4)], 8);
  const acrossOther = hashPromptBlocks([namedChunk('a', 4), namedChunk('c', 4)], 8);
  assert.notEqual(across[0].tokens_hash, acrossOther[0].tokens_hash);
});

test('HASH-2 in the event stream: every block a replay stores carries its tokens hash, chained onto the block before it into its block hash', () => {
  for (const name of ['two-replicas-private.yaml', 'two-replicas-shared.yaml', 'lagged-events.yaml', 'prefill-decode.yaml']) {
    const file = path.join(ROOT, 'examples', 'configs', name);
    const outcome = runReplay(parseReplayConfig(readFileSync(file, 'utf8'), file), { keep_event_history: true });
    let stored = 0;
    for (const { batch } of outcome.result.batches) {
      for (const event of batch.events) {
        if (event.data.type !== 'Stored') continue;
        let parent = event.data.parent_hash;
        for (const block of event.data.blocks) {
          assert.equal(block.block_hash, sequenceHash(parent, block.tokens_hash), `${name}: event ${event.event_id} of worker ${batch.worker_id} (${event.tier}), block ${stored}`);
          parent = block.block_hash;
          stored++;
        }
      }
    }
    assert.ok(stored > 0, `${name} stores blocks`);
  }
});
