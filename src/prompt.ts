// Prompts as token chunks (HASH-2): named prefixes, trace hash ids and per-request unique text,
// with their block hashes computed once per block size.
import type { BlockWords } from './hash';
import { HashedBlock, TokenChunk, hashPromptBlocks, hashPromptWords, idKey, promptLength, stringKey } from './hash';

export class Prompt {
  readonly length_tokens: number;
  private readonly hashed = new Map<number, HashedBlock[]>();

  constructor(readonly chunks: readonly TokenChunk[]) {
    this.length_tokens = promptLength(chunks);
  }

  /** Complete blocks of this prompt for a block size, hashed once and cached. */
  blocks(blockSize: number): HashedBlock[] {
    let blocks = this.hashed.get(blockSize);
    if (!blocks) {
      blocks = hashPromptBlocks(this.chunks, blockSize);
      this.hashed.set(blockSize, blocks);
    }
    return blocks;
  }

  /** Hashes without keeping the result on the prompt (a simulation holds blocks only while needed). */
  computeBlocks(blockSize: number): HashedBlock[] {
    return this.hashed.get(blockSize) ?? hashPromptBlocks(this.chunks, blockSize);
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
  return { ...idKey(hashId, stringKey(`trace:${namespace}`)), length_tokens };
}

/**
 * A prompt for trace hash ids where each id stands for `traceBlockSize` tokens; the last id covers
 * what remains of `inputLength` (it may be a partial trace block).
 */
export function tracePrompt(hashIds: readonly number[], inputLength: number, traceBlockSize: number, namespace = 'global'): Prompt {
  const chunks: TokenChunk[] = [];
  let remaining = inputLength;
  for (let i = 0; i < hashIds.length && remaining > 0; i++) {
    const length = i === hashIds.length - 1 ? remaining : Math.min(traceBlockSize, remaining);
    chunks.push(traceChunk(hashIds[i], length, namespace));
    remaining -= length;
  }
  if (remaining > 0) chunks.push(namedChunk(`trace-tail:${namespace}:${hashIds.join(',')}`, remaining));
  return new Prompt(chunks);
}
