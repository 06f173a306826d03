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
/**
 * The largest hash id a 32-bit chunk holds: a prompt with a larger one, or a negative one (an agentic
 * trace's stand-in for a 64-bit id, see src/agentic/trace.ts), goes into a chunk of 64-bit floats.
 */
const UINT32_MAX = 0xffffffff;

/** The chunk trace prompts' ids are copied into now, and how much of it is taken. */
interface IdChunk {
  ids: Uint32Array | Float64Array;
  used: number;
}
const narrowIds: IdChunk = { ids: new Uint32Array(0), used: 0 };
const wideIds: IdChunk = { ids: new Float64Array(0), used: 0 };

/**
 * A trace prompt's hash ids, copied into a chunk shared with the prompts read before it: 4 bytes an
 * id (8 when one of its ids is not a 32-bit unsigned one) and one small object per prompt, not a buffer of
 * its own (a replay holds every prompt of its trace from the start: the whole conversation trace's
 * 1.1 million ids). The chunks are made when the request arrives.
 */
class TraceIds implements ChunkSource {
  private readonly ids: Uint32Array | Float64Array;
  private readonly start: number;
  private readonly count: number;

  constructor(
    hashIds: readonly number[],
    private readonly inputLength: number,
    private readonly traceBlockSize: number,
    private readonly namespace: string,
  ) {
    const chunk = hashIds.every((id) => id >= 0 && id <= UINT32_MAX) ? narrowIds : wideIds;
    if (chunk.used + hashIds.length > chunk.ids.length) {
      const length = Math.max(ID_CHUNK_LENGTH, hashIds.length);
      chunk.ids = chunk === narrowIds ? new Uint32Array(length) : new Float64Array(length);
      chunk.used = 0;
    }
    this.ids = chunk.ids;
    this.start = chunk.used;
    this.count = hashIds.length;
    chunk.ids.set(hashIds, chunk.used);
    chunk.used += hashIds.length;
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
