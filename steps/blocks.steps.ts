// Steps about blocks and their hashes (HASH-1, HASH-2): prompts cut into blocks of a block size,
// which blocks two prompts share, and the hash values themselves, pinned across machines.
import { DataTable } from '@cucumber/cucumber';
import { Then, When } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import { namedChunk, Prompt, tracePrompt } from '../src/prompt';
import type { HashedBlock } from '../src/hash';

/** `"1, 2, 3"` as trace hash ids. */
function hashIds(list: string): number[] {
  const ids = list.split(',').map((item) => Number(item.trim()));
  if (ids.some((id) => !Number.isSafeInteger(id) || id < 0)) throw new Error(`"${list}" is not a list of trace hash ids such as "1, 2, 3"`);
  return ids;
}

/** How many leading blocks two prompts share (equal sequence hashes). */
function sharedBlocks(a: HashedBlock[], b: HashedBlock[]): number {
  let shared = 0;
  while (shared < a.length && shared < b.length && a[shared].block_hash === b[shared].block_hash) shared++;
  return shared;
}

/** Blocks `from`.. of two prompts whose sequence hashes are equal (none, once they have differed). */
function equalAfter(a: HashedBlock[], b: HashedBlock[], from: number): number[] {
  const equal: number[] = [];
  for (let i = from; i < Math.min(a.length, b.length); i++) if (a[i].block_hash === b[i].block_hash) equal.push(i + 1);
  return equal;
}

function hex(hash: bigint): string {
  return `0x${hash.toString(16).padStart(16, '0')}`;
}

/** Cuts prompts into blocks for the `Then` steps, and records every block's hashes as the scenario's evidence. */
function cutInto(world: KvWorld, block_size: number, prompts: Prompt[]): void {
  world.cut = { block_size, prompts };
  const blocks = prompts.map((prompt) => ({
    tokens: prompt.length_tokens,
    blocks: prompt.blocks(block_size).map((block) => ({ sequence_hash: hex(block.block_hash), local_hash: hex(block.tokens_hash) })),
  }));
  world.recordComputation('blocks', { block_size, prompts: blocks });
}

When('a {tokens} prompt is cut into {tokens} blocks', { domain: 'blocks', level: 'either', says: 'Cuts a prompt of this many tokens into blocks of this size (no cluster needed).' }, function (this: KvWorld, length: number, blockSize: number) {
  cutInto(this, blockSize, [new Prompt([namedChunk('a prompt of its own', length)])]);
});

When('two prompts that start with {string} and then differ are cut into {tokens} blocks', { domain: 'blocks', level: 'either', says: 'Cuts two prompts that share the named prefix and then differ into blocks of this size.' }, function (this: KvWorld, prefix: string, blockSize: number) {
  const start = this.prefix(prefix);
  const prompts = ['first', 'second'].map((which) => new Prompt([start, namedChunk(`the ${which} prompt's own text`, 2 * blockSize)]));
  cutInto(this, blockSize, prompts);
});

When(
  'the prompts {string} then {string}, and {string} then {string}, are cut into {tokens} blocks', { domain: 'blocks', level: 'either', says: 'Cuts two prompts, each two named prefixes one after the other, into blocks of this size.' },
  function (this: KvWorld, firstStart: string, firstEnd: string, secondStart: string, secondEnd: string, blockSize: number) {
    const prompts = [
      new Prompt([this.prefix(firstStart), this.prefix(firstEnd)]),
      new Prompt([this.prefix(secondStart), this.prefix(secondEnd)]),
    ];
    cutInto(this, blockSize, prompts);
  },
);

When(
  'the trace prompts with hash ids {string} and {string}, {tokens} per id, are cut into {tokens} blocks', { domain: 'blocks', level: 'either', says: 'Cuts two trace prompts, given as lists of trace hash ids of this many tokens each, into blocks of this size.' },
  function (this: KvWorld, first: string, second: string, traceBlock: number, blockSize: number) {
    const prompts = [first, second].map((list) => {
      const ids = hashIds(list);
      return tracePrompt(ids, ids.length * traceBlock, traceBlock);
    });
    cutInto(this, blockSize, prompts);
  },
);

When('the trace prompt with hash ids {string}, {tokens} per id, is cut into {tokens} blocks', { domain: 'blocks', level: 'either', says: 'Cuts one trace prompt, given as trace hash ids of this many tokens each, into blocks of this size.' }, function (this: KvWorld, list: string, traceBlock: number, blockSize: number) {
  const ids = hashIds(list);
  cutInto(this, blockSize, [tracePrompt(ids, ids.length * traceBlock, traceBlock)]);
});

/** The blocks of each prompt the last `When` cut. */
function cutBlocks(world: KvWorld, prompts_needed: 1 | 2): HashedBlock[][] {
  if (world.cut === null) throw new Error("no prompt has been cut into blocks yet: a When such as 'When a 9-token prompt is cut into 4-token blocks' does that");
  const { block_size, prompts } = world.cut;
  if (prompts.length < prompts_needed) throw new Error("this step compares two prompts, and the last When cut one: cut two with a When such as 'When two prompts that start with \"system prompt\" and then differ are cut into 4-token blocks'");
  return prompts.map((prompt) => prompt.blocks(block_size));
}

Then('it has {int} complete block(s), and its last {int} token(s) are not cached', { domain: 'blocks', level: 'either', says: 'Checks the prompt cut into exactly this many complete blocks, with this many tokens left over (a partial block is never cached).' }, function (this: KvWorld, complete: number, left: number) {
  const [blocks] = cutBlocks(this, 1);
  const { block_size, prompts } = this.cut!;
  const leftOver = prompts[0].length_tokens - blocks.length * block_size;
  this.measure('complete blocks', blocks.length, 'block(s)');
  this.measure('tokens in no complete block', leftOver, 'token(s)');
  expect({ complete: blocks.length, left: leftOver }, `a ${prompts[0].length_tokens}-token prompt in ${block_size}-token blocks`).to.deep.equal({ complete, left });
});

Then('their first {int} blocks are the same, and no later block is', { domain: 'blocks', level: 'either', says: 'Checks the two prompts share exactly this many leading blocks (equal sequence hashes) and no block after them.' }, function (this: KvWorld, shared: number) {
  const [a, b] = cutBlocks(this, 2);
  const leading = sharedBlocks(a, b);
  this.measure('leading blocks with equal sequence hashes', leading, 'block(s)');
  expect(leading, 'leading blocks with equal sequence hashes').to.equal(shared);
  expect(equalAfter(a, b, leading), 'later blocks with equal sequence hashes').to.deep.equal([]);
});

Then('their last {int} blocks hold the same tokens, yet no block of the two is the same', { domain: 'blocks', level: 'either', says: 'Checks the two prompts\' last blocks hold the same tokens, yet their sequence hashes all differ (a block\'s hash depends on all before it).' }, function (this: KvWorld, count: number) {
  const [a, b] = cutBlocks(this, 2);
  expect(a.length, 'blocks of the two prompts').to.equal(b.length);
  if (a.length < count) throw new Error(`the prompts have ${a.length} complete block(s) each, fewer than the ${count} the claim is about`);
  const sameTokens = a.slice(-count).filter((block, i) => block.tokens_hash === b[b.length - count + i].tokens_hash).length;
  this.measure('last blocks with equal local (token) hashes', sameTokens, 'block(s)');
  expect(sameTokens, `of the last ${count} blocks, those with equal local hashes`).to.equal(count);
  const shared = equalAfter(a, b, 0);
  this.measure('blocks with equal sequence hashes', shared.length, 'block(s)');
  expect(shared, 'blocks with equal sequence hashes').to.deep.equal([]);
});

Then('they share their first {int} of their {int} blocks', { domain: 'blocks', level: 'either', says: 'Checks both prompts cut into this many blocks and share exactly this many leading ones.' }, function (this: KvWorld, shared: number, total: number) {
  const [a, b] = cutBlocks(this, 2);
  const leading = sharedBlocks(a, b);
  this.measure('blocks each prompt has', a.length, 'block(s)');
  this.measure('leading blocks shared', leading, 'block(s)');
  expect({ shared: leading, total: a.length }, 'blocks shared, of each prompt').to.deep.equal({ shared, total });
  expect(b.length, 'blocks of the second prompt').to.equal(total);
  expect(equalAfter(a, b, leading), 'later blocks with equal sequence hashes').to.deep.equal([]);
});

Then('its blocks have these hashes, on every machine:', { domain: 'blocks', level: 'either', says: 'Checks each block\'s sequence and local hash are exactly the values in the table (pinned, so every machine computes the same).' }, function (this: KvWorld, table: DataTable) {
  const [blocks] = cutBlocks(this, 1);
  for (const row of table.hashes()) {
    const index = Number(row.block);
    if (!Number.isInteger(index) || index < 1 || index > blocks.length) throw new Error(`block ${row.block}: the prompt has blocks 1 to ${blocks.length}`);
    const block = blocks[index - 1];
    const actual = { block: row.block, 'sequence hash': hex(block.block_hash), 'local hash': hex(block.tokens_hash) };
    this.measure(`sequence hash of block ${index}`, index, '', `block ${index}: sequence hash ${actual['sequence hash']}, local hash ${actual['local hash']}`);
    const expected = Object.fromEntries(Object.keys(row).map((column) => [column, row[column]]));
    const compared = Object.fromEntries(Object.keys(row).map((column) => [column, actual[column as keyof typeof actual]]));
    for (const column of Object.keys(row)) if (!(column in actual)) throw new Error(`unknown column "${column}"; use: ${Object.keys(actual).join(', ')}`);
    expect(compared, `block ${index}`).to.deep.equal(expected);
  }
});
