// Prompts as token chunks (HASH-2): named prefixes, trace hash ids and per-request unique text,
// with their block hashes computed once per block size.
import type { BlockWords } from './hash';
import { HashedBlock, TokenChunk, hashPromptBlocks, hashPromptWords, idKey, promptLength, stringKey } from './hash';

export class Prompt {
  readonly length_tokens: number;
  /** Blocks hashed by blocks(), per block size (made on first use). */
  private hashed: Map<number, HashedBlock[]> | null = null;
  private readonly chunkList: readonly TokenChunk[] | null;
  private readonly makeChunks: (() => TokenChunk[]) | null;

  /**
   * A prompt of chunks, or of a function that makes them when they are needed, with the prompt's
   * length (a replay holds thousands of trace prompts before they arrive: each keeps only its ids).
   */
  constructor(chunks: readonly TokenChunk[] | (() => TokenChunk[]), length_tokens?: number) {
    this.chunkList = typeof chunks === 'function' ? null : chunks;
    this.makeChunks = typeof chunks === 'function' ? chunks : null;
    this.length_tokens = length_tokens ?? promptLength(this.chunks);
  }

  get chunks(): readonly TokenChunk[] {
    return this.chunkList ?? this.makeChunks!();
  }

  /** Complete blocks of this prompt for a block size, hashed once and cached. */
  blocks(blockSize: number): HashedBlock[] {
    this.hashed ??= new Map();
    let blocks = this.hashed.get(blockSize);
    if (!blocks) {
      blocks = hashPromptBlocks(this.chunks, blockSize);
      this.hashed.set(blockSize, blocks);
    }
    return blocks;
  }

  /** Hashes without keeping the result on the prompt (a simulation holds blocks only while needed). */
  computeBlocks(blockSize: number): HashedBlock[] {
    return this.hashed?.get(blockSize) ?? hashPromptBlocks(this.chunks, blockSize);
  }

  /** The same hashes as 32-bit words, not kept on the prompt (what a simulation attaches to a request). */
  computeBlockWords(blockSize: number): BlockWords {
    return hashPromptWords(this.chunks, blockSize);
  }

  blockHashes(blockSize: number): bigint[] {
    return this.blocks(blockSize).map((block) => block.block_hash);
  }

  /** This prompt followed by more chunks (a resumed conversation extends its prior context). */
  extend(more: readonly TokenChunk[]): Prompt {
    return new Prompt([...this.chunks, ...more]);
  }
}

/** A chunk of `length_tokens` tokens derived from a name ("system prompt"). */
export function namedChunk(name: string, length_tokens: number): TokenChunk {
  return { ...stringKey(`named:${name}`), length_tokens };
}

/** A chunk for one trace hash id inside a namespace (a play, or the global trace space). */
export function traceChunk(hashId: number, length_tokens: number, namespace = 'global'): TokenChunk {
  return keyedTraceChunk(hashId, length_tokens, stringKey(`trace:${namespace}`));
}

function keyedTraceChunk(hashId: number, length_tokens: number, namespaceKey: { key_lo: number; key_hi: number }): TokenChunk {
  const { key_lo, key_hi } = idKey(hashId, namespaceKey);
  return { key_lo, key_hi, length_tokens };
}

/**
 * A prompt for trace hash ids where each id stands for `traceBlockSize` tokens; the last id covers
 * what remains of `inputLength` (it may be a partial trace block).
 */
export function tracePrompt(hashIds: readonly number[], inputLength: number, traceBlockSize: number, namespace = 'global'): Prompt {
  // Only the ids are kept (8 bytes each); the chunks are made when the request arrives.
  const ids = Float64Array.from(hashIds);
  return new Prompt(() => traceChunks(ids, inputLength, traceBlockSize, namespace), inputLength);
}

function traceChunks(hashIds: Float64Array, inputLength: number, traceBlockSize: number, namespace: string): TokenChunk[] {
  const chunks: TokenChunk[] = [];
  const namespaceKey = stringKey(`trace:${namespace}`);
  let remaining = inputLength;
  for (let i = 0; i < hashIds.length && remaining > 0; i++) {
    const length = i === hashIds.length - 1 ? remaining : Math.min(traceBlockSize, remaining);
    chunks.push(keyedTraceChunk(hashIds[i], length, namespaceKey));
    remaining -= length;
  }
  if (remaining > 0) chunks.push(namedChunk(`trace-tail:${namespace}:${Array.from(hashIds).join(',')}`, remaining));
  return chunks;
}
