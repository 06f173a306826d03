// Block hashing (HASH-1, HASH-2): prompts as chunks of deterministic tokens, 64-bit local and
// sequence hashes of complete blocks. Pure functions of the token sequence, stable across runs:
// a block inside one chunk is hashed from the chunk key and its place (which fix its tokens), a
// block across chunks from its tokens.
import { faultPlanted } from './fuzz/simulatorFaults';

/** A 64-bit block hash (u64 on the wire). */
export type BlockHash = bigint;

export interface HashedBlock {
  /** Sequence hash: the whole prefix up to and including this block. */
  block_hash: BlockHash;
  /** Local hash: this block's tokens only. */
  tokens_hash: BlockHash;
}

/**
 * A run of tokens that all derive from one key: a named prefix ("system prompt"), a trace block
 * id (HASH-2) or a request's own unique text. Token `i` of the chunk is a pure function of
 * (key, i), so the same chunk always materialises to the same tokens.
 */
export interface TokenChunk {
  key_lo: number;
  key_hi: number;
  length_tokens: number;
}

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function fmix32(input: number): number {
  let h = input;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function murmurStep(lane: number, word: number): number {
  let k = Math.imul(word, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  let h = lane ^ k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** 64-bit FNV-1a-style key of a string, as two 32-bit lanes. */
export function stringKey(text: string): { key_lo: number; key_hi: number } {
  let lo = 0x811c9dc5;
  let hi = 0x2545f491;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    lo = Math.imul(lo ^ code, 0x01000193);
    hi = murmurStep(hi, code);
  }
  return { key_lo: fmix32(lo), key_hi: fmix32(hi ^ text.length) };
}

/**
 * 64-bit key of a list of safe integers (each as its low and high 32-bit words), as two 32-bit
 * lanes: for keys made often from numbers, where building a string to hash would cost more.
 */
export function integersKey(values: ArrayLike<number>): { key_lo: number; key_hi: number } {
  let lo = 0x811c9dc5;
  let hi = 0x2545f491;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    const low = value >>> 0;
    const high = Math.floor(value / 0x100000000) | 0;
    lo = murmurStep(murmurStep(lo, low), high);
    hi = murmurStep(murmurStep(hi, high ^ 0x9e3779b9), low);
  }
  return { key_lo: fmix32(lo ^ values.length), key_hi: fmix32(hi) };
}

/** A 64-bit key for a numeric id inside a namespace (e.g. a trace hash id inside one play). */
export function idKey(id: number, namespace: { key_lo: number; key_hi: number }): { key_lo: number; key_hi: number } {
  const idLo = id >>> 0;
  const idHi = Math.floor(id / 0x100000000) >>> 0;
  const lo = fmix32(murmurStep(murmurStep(namespace.key_lo, idLo), idHi) ^ 0x5bd1e995);
  const hi = fmix32(murmurStep(murmurStep(namespace.key_hi, idHi), idLo) ^ 0x27d4eb2f);
  return { key_lo: lo, key_hi: hi };
}

/** Token `index` of a chunk: a 32-bit value derived from the chunk key. */
export function chunkToken(chunk: TokenChunk, index: number): number {
  return fmix32(murmurStep(chunk.key_lo, index) ^ chunk.key_hi);
}

const u64Scratch = new DataView(new ArrayBuffer(8));

/** The u64 (hi << 32) | lo, built in one step (shifting and or-ing bigints allocates four of them). */
export function toU64(lo: number, hi: number): BlockHash {
  u64Scratch.setUint32(0, lo >>> 0, true);
  u64Scratch.setUint32(4, hi >>> 0, true);
  return u64Scratch.getBigUint64(0, true);
}

const MASK32 = 0xffffffffn;
const ROOT_LO = 0x9e3779b9;
const ROOT_HI = 0x7f4a7c15;

/** Sequence-hash mixing on 32-bit lanes: parent (lo, hi) with local (lo, hi) → [lo, hi]. */
function mixSequence(parentLo: number, parentHi: number, localLo: number, localHi: number, out: Int32Array): void {
  let lo = murmurStep(murmurStep(0x3c6ef372, parentLo), localLo);
  let hi = murmurStep(murmurStep(0xa54ff53a, parentHi), localHi);
  lo = murmurStep(lo, hi);
  hi = murmurStep(hi, lo);
  out[0] = fmix32(lo ^ 8);
  out[1] = fmix32(hi ^ 16);
}

const scratch = new Int32Array(2);

/** Sequence hash of a block: its parent's sequence hash combined with its local hash. */
export function sequenceHash(parent: BlockHash | null, local: BlockHash): BlockHash {
  const parentLo = parent === null ? ROOT_LO : Number(parent & MASK32);
  const parentHi = parent === null ? ROOT_HI : Number(parent >> 32n);
  mixSequence(parentLo, parentHi, Number(local & MASK32), Number(local >> 32n), scratch);
  return toU64(scratch[0], scratch[1]);
}

/** Total tokens of a chunk list. */
export function promptLength(chunks: readonly TokenChunk[]): number {
  let total = 0;
  for (const chunk of chunks) total += chunk.length_tokens;
  return total;
}

/**
 * Block hashes as 32-bit words, four per block: sequence hash low and high, local hash low and
 * high (block i at 4i). Compact, and nothing for the garbage collector to trace.
 */
export type BlockWords = Int32Array;

/** Words per block in BlockWords. */
export const WORDS_PER_BLOCK = 4;

/** Local-hash lanes [lo, hi] of the block being filled. */
const lanes = new Int32Array(2);
const LANE_LO = 0x12345678;
const LANE_HI = 0x9abcdef0;

/** Mixes tokens [from, to) of a chunk into `lanes` (chunkToken then murmurStep, written out: this loop is the cost of hashing). */
function mixTokens(chunk: TokenChunk, from: number, to: number): void {
  const keyLo = chunk.key_lo;
  const keyHi = chunk.key_hi;
  let lo = lanes[0];
  let hi = lanes[1];
  for (let i = from; i < to; i++) {
    let token = Math.imul(i, C1);
    token = Math.imul((token << 15) | (token >>> 17), C2) ^ keyLo;
    token = (Math.imul((token << 13) | (token >>> 19), 5) + 0xe6546b64) ^ keyHi;
    token ^= token >>> 16;
    token = Math.imul(token, 0x85ebca6b);
    token ^= token >>> 13;
    token = Math.imul(token, 0xc2b2ae35);
    token ^= token >>> 16;
    let k = Math.imul(token, C1);
    k = Math.imul((k << 15) | (k >>> 17), C2) ^ lo;
    lo = (Math.imul((k << 13) | (k >>> 19), 5) + 0xe6546b64) | 0;
    k = Math.imul(token ^ 0xa5a5a5a5, C1);
    k = Math.imul((k << 15) | (k >>> 17), C2) ^ hi;
    hi = (Math.imul((k << 13) | (k >>> 19), 5) + 0xe6546b64) | 0;
  }
  lanes[0] = lo;
  lanes[1] = hi;
}

const KEYED_LO = 0x2f6b7c1d;
const KEYED_HI = 0x63d83595;

/**
 * Local hash lanes of the block of `blockSize` tokens from token `start` of a chunk, when the block
 * lies wholly inside the chunk (HASH-1/2). Its tokens are a pure function of (chunk key, start,
 * block size), so hashing those three is hashing the tokens: equal token runs give equal local
 * hashes, wherever they sit, and no token is generated (a 512-token trace block costs a few
 * multiplications per engine block, not 512 token mixes). A block that straddles chunks is
 * hashed from its tokens (mixTokens); no token run can be both.
 */
function keyedBlockLanes(chunk: TokenChunk, start: number, blockSize: number): void {
  let lo = murmurStep(murmurStep(murmurStep(KEYED_LO, chunk.key_lo), chunk.key_hi), start);
  let hi = murmurStep(murmurStep(murmurStep(KEYED_HI, chunk.key_hi), chunk.key_lo), start ^ 0x5bd1e995);
  lo = murmurStep(lo, hi);
  hi = murmurStep(hi, lo);
  lanes[0] = fmix32(lo ^ blockSize);
  lanes[1] = fmix32(hi ^ Math.imul(blockSize, 0x9e3779b1));
}

/**
 * Hashes the complete blocks of a prompt given as chunks. A partial last block is not hashed
 * (only complete blocks are cacheable). A block inside one chunk is hashed from the chunk's key
 * and its place (keyedBlockLanes); a block across chunks from its tokens, generated on the fly.
 */
export function hashPromptBlocks(chunks: readonly TokenChunk[], blockSize: number): HashedBlock[] {
  const words = hashPromptWords(chunks, blockSize);
  const blocks: HashedBlock[] = [];
  for (let at = 0; at < words.length; at += WORDS_PER_BLOCK) {
    blocks.push({ block_hash: toU64(words[at], words[at + 1]), tokens_hash: toU64(words[at + 2], words[at + 3]) });
  }
  return blocks;
}

/** hashPromptBlocks as BlockWords: the same hashes without a bigint or an object per block. */
export function hashPromptWords(chunks: readonly TokenChunk[], givenBlockSize: number): BlockWords {
  if (!Number.isInteger(givenBlockSize) || givenBlockSize <= 0) throw new RangeError(`block size ${givenBlockSize} must be a positive integer`);
  const blockSize = givenBlockSize + (faultPlanted('long-blocks') ? 1 : faultPlanted('short-blocks') && givenBlockSize > 1 ? -1 : 0); // planted fault (src/fuzz/simulatorFaults.ts)
  const words = new Int32Array(Math.floor(promptLength(chunks) / blockSize) * WORDS_PER_BLOCK);
  let written = 0;
  const sequence = new Int32Array([ROOT_LO, ROOT_HI]);
  const chainFault = faultPlanted('chain'); // planted fault (src/fuzz/simulatorFaults.ts), read once per prompt
  const appendBlock = (localLo: number, localHi: number) => {
    if (chainFault) sequence.set([ROOT_LO, ROOT_HI]); // planted fault (src/fuzz/simulatorFaults.ts)
    mixSequence(sequence[0], sequence[1], localLo, localHi, sequence);
    words[written++] = sequence[0];
    words[written++] = sequence[1];
    words[written++] = localLo;
    words[written++] = localHi;
  };
  /** Tokens in the block being filled, which may have started in an earlier chunk. */
  let filled = 0;
  lanes[0] = LANE_LO;
  lanes[1] = LANE_HI;
  for (const chunk of chunks) {
    const length = chunk.length_tokens;
    // The block carried over from earlier chunks, completed by this one if it is long enough.
    const head = filled === 0 ? 0 : Math.min(length, blockSize - filled);
    mixTokens(chunk, 0, head);
    filled += head;
    if (filled < blockSize && filled > 0) continue;
    if (filled === blockSize) appendBlock(fmix32(lanes[0] ^ blockSize), fmix32(lanes[1] ^ blockSize));
    // The blocks wholly inside this chunk.
    const whole = Math.floor((length - head) / blockSize);
    for (let block = 0; block < whole; block++) {
      keyedBlockLanes(chunk, head + block * blockSize, blockSize);
      appendBlock(lanes[0], lanes[1]);
    }
    // The tokens after them start the next block.
    const tailStart = head + whole * blockSize;
    lanes[0] = LANE_LO;
    lanes[1] = LANE_HI;
    mixTokens(chunk, tailStart, length);
    filled = length - tailStart;
  }
  return words;
}
