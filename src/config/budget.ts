// The size of a replay's whole workload, checked before it runs, beside each field's own limit: a
// request's prompt in blocks of the engine's block size, and the prompt and output tokens of every
// request together (agentic requests as often as lanes and iterations repeat them). Each field of a
// small file may be within its limit while their product asks for days of work, gigabytes, or a KV
// event line longer than JavaScript makes a string; these limits (src/limits.ts) say so up front.
import { LIMITS, limitText } from '../limits';

/** One request of the workload, as the budget counts it: a name for messages, its prompt and output tokens. */
export interface BudgetItem {
  /** Where it is written ("workload.requests[3]", "line 12 of trace.jsonl"). */
  where: string;
  prompt_tokens: number;
  output_tokens: number;
}

/**
 * What is over the budget, or null when nothing is: the first request whose prompt has more
 * complete blocks than LIMITS.prompt_blocks (`where` is that request's), else the totals
 * (× `repeat`, said as `repeated`) against theirs (`where` null: the workload as a whole).
 */
export function budgetProblem(items: Iterable<BudgetItem>, block_size: number, repeat = 1, repeated = ''): { where: string | null; message: string } | null {
  let prompt = 0;
  let output = 0;
  for (const item of items) {
    const blocks = Math.floor(item.prompt_tokens / block_size);
    if (blocks > LIMITS.prompt_blocks) {
      return { where: item.where, message: `a prompt of ${limitText(item.prompt_tokens)} tokens is ${limitText(blocks)} blocks of ${block_size} token(s), above the limit of ${limitText(LIMITS.prompt_blocks)} blocks per request (a larger block_size makes fewer)` };
    }
    prompt += item.prompt_tokens;
    output += item.output_tokens;
  }
  const times = repeat === 1 ? '' : ` × ${repeated}`;
  if (prompt * repeat > LIMITS.workload_prompt_tokens) return { where: null, message: `the prompts are ${limitText(prompt)} tokens${times} = ${limitText(prompt * repeat)} in all, above the limit of ${limitText(LIMITS.workload_prompt_tokens)}` };
  if (output * repeat > LIMITS.workload_output_tokens) return { where: null, message: `the requests ask for ${limitText(output)} output tokens${times} = ${limitText(output * repeat)} in all, above the limit of ${limitText(LIMITS.workload_output_tokens)} (each is a decode step)` };
  return null;
}
