// Prompts as token chunks (HASH-2): named prefixes, trace hash ids and per-request unique text,
// with their block hashes computed once per block size.
import type { BlockWords } from './hash';
import { HashedBlock, TokenChunk, hashPromptBlocks, hashPromptWords as importedHashPromptWords, idKey as importedIdKey, promptLength, stringKey } from './hash';
import { faultPlanted } from './fuzz/simulatorFaults';

// Read per request and per trace hash id: copied into this module once (every read of an imported
// binding is a getter call, esbuild's live bindings, under tsx).
const hashPromptWords = importedHashPromptWords;
const idKey = importedIdKey;

/** Makes a prompt's chunks when they are needed (see tracePrompt). */
export interface ChunkSource {
  chunks(): TokenChunk[];
}

export class Prompt {
  readonly length_tokens: number;
  /** Blocks hashed by blocks(), per block size (made on first use). */
  private hashed: Map<number, HashedBlock[]> | null = null;
  private readonly chunkList: readonly TokenChunk[] | null;
  private readonly source: ChunkSource | null;

  /**
   * A prompt of chunks, or of a source that makes them when they are needed, with the prompt's
   * length (a replay holds thousands of trace prompts before they arrive: each keeps only its ids).
   */
  constructor(chunks: readonly TokenChunk[] | ChunkSource, length_tokens?: number) {
    this.chunkList = isChunkSource(chunks) ? null : chunks;
    this.source = isChunkSource(chunks) ? chunks : null;
    this.length_tokens = length_tokens ?? promptLength(this.chunks);
  }

  get chunks(): readonly TokenChunk[] {
    return this.chunkList ?? this.source!.chunks();
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
  const { key_lo, key_hi } = stringKey(`named:${name}`);
  return { key_lo, key_hi, length_tokens };
}

/** A chunk for one trace hash id inside a namespace (a play, or the global trace space). */
export function traceChunk(hashId: number, length_tokens: number, namespace = 'global'): TokenChunk {
  return keyedTraceChunk(hashId, length_tokens, stringKey(`trace:${namespace}`));
}

function keyedTraceChunk(hashId: number, length_tokens: number, namespaceKey: { key_lo: number; key_hi: number }): TokenChunk {
  const { key_lo, key_hi } = idKey(hashId, namespaceKey);
  return { key_lo, key_hi, length_tokens };
}

function isChunkSource(chunks: readonly TokenChunk[] | ChunkSource): chunks is ChunkSource {
  return !Array.isArray(chunks);
}

/**
 * A prompt for trace hash ids where each id stands for `traceBlockSize` tokens; the last id covers
 * what remains of `inputLength` (it may be a partial trace block).
 */
export function tracePrompt(hashIds: readonly number[], inputLength: number, traceBlockSize: number, namespace = 'global'): Prompt {
  const blockSize = faultPlanted('trace-blocks') ? Math.max(1, Math.floor(traceBlockSize / 2)) : traceBlockSize; // planted fault (src/fuzz/simulatorFaults.ts)
  return new Prompt(new TraceIds(hashIds, inputLength, blockSize, namespace), inputLength);
}

/** Ids of trace prompts, in shared chunks of this many (a chunk lives while a prompt in it does). */
const ID_CHUNK_LENGTH = 1 << 16;
let idChunk = new Float64Array(0);
let idChunkUsed = 0;

/**
 * A trace prompt's hash ids, copied into a chunk shared with the prompts read before it: 8 bytes an
 * id and one small object per prompt, not a buffer of its own (a replay holds every prompt of its
 * trace from the start). The chunks are made when the request arrives.
 */
class TraceIds implements ChunkSource {
  private readonly ids: Float64Array;
  private readonly start: number;
  private readonly count: number;

  constructor(
    hashIds: readonly number[],
    private readonly inputLength: number,
    private readonly traceBlockSize: number,
    private readonly namespace: string,
  ) {
    if (idChunkUsed + hashIds.length > idChunk.length) {
      idChunk = new Float64Array(Math.max(ID_CHUNK_LENGTH, hashIds.length));
      idChunkUsed = 0;
    }
    this.ids = idChunk;
    this.start = idChunkUsed;
    this.count = hashIds.length;
    for (let i = 0; i < hashIds.length; i++) idChunk[idChunkUsed++] = hashIds[i];
  }

  chunks(): TokenChunk[] {
    const chunks: TokenChunk[] = [];
    const namespaceKey = stringKey(`trace:${this.namespace}`);
    let remaining = this.inputLength;
    const end = this.start + this.count;
    for (let i = this.start; i < end && remaining > 0; i++) {
      const length = i === end - 1 ? remaining : Math.min(this.traceBlockSize, remaining);
      chunks.push(keyedTraceChunk(this.ids[i], length, namespaceKey));
      remaining -= length;
    }
    if (remaining > 0) chunks.push(namedChunk(`trace-tail:${this.namespace}:${Array.from(this.ids.subarray(this.start, end)).join(',')}`, remaining));
    return chunks;
  }
}
