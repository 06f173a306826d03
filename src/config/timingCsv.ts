// Pass-time tables kept in a CSV file beside the config (`timing.table.csv`): reading the file's
// rows into the same points an inline table has, validated by the same schema, every problem named
// by file and line. The command line finds and reads the file; this module only parses text.
import { TablePointsSchema } from './schema';
import type { z } from 'zod';

export type TablePoints = z.infer<typeof TablePointsSchema>;

/** A problem in a CSV table; the message names the file and the line. */
export class TimingCsvError extends Error {}

const HEADER = ['pass', 'new_tokens', 'batch_size', 'context_tokens', 'ms'];

/** Parses `pass,new_tokens,batch_size,context_tokens,ms` rows (prefill rows leave batch and context empty, decode rows leave new_tokens empty). */
export function parseTimingCsv(text: string, shown: string): TablePoints {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').split(',').map((cell) => cell.trim());
  if (header.join(',') !== HEADER.join(',')) throw new TimingCsvError(`${shown}:1: the header must be ${HEADER.join(',')}`);
  const prefill: { tokens: number; ms: number }[] = [];
  const decode: { batch_size: number; context_tokens: number; ms: number }[] = [];
  const rowLine: { prefill: number[]; decode: number[] } = { prefill: [], decode: [] };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const cells = line.split(',').map((cell) => cell.trim());
    const at = `${shown}:${i + 1}`;
    if (cells.length !== HEADER.length) throw new TimingCsvError(`${at}: ${cells.length} fields; a row has ${HEADER.length} (${HEADER.join(',')})`);
    const [pass, tokens, batch, context, ms] = cells;
    const numberOf = (name: string, value: string) => {
      if (!/^\d+(\.\d+)?$/.test(value)) throw new TimingCsvError(`${at}: ${name} "${value.slice(0, 40)}" is not a non-negative number`);
      return Number(value);
    };
    const empty = (name: string, value: string) => {
      if (value !== '') throw new TimingCsvError(`${at}: a ${pass} row leaves ${name} empty`);
    };
    if (pass === 'prefill') {
      empty('batch_size', batch);
      empty('context_tokens', context);
      prefill.push({ tokens: numberOf('new_tokens', tokens), ms: numberOf('ms', ms) });
      rowLine.prefill.push(i + 1);
    } else if (pass === 'decode') {
      empty('new_tokens', tokens);
      decode.push({ batch_size: numberOf('batch_size', batch), context_tokens: numberOf('context_tokens', context), ms: numberOf('ms', ms) });
      rowLine.decode.push(i + 1);
    } else throw new TimingCsvError(`${at}: pass "${pass.slice(0, 40)}" must be prefill or decode`);
  }
  const parsed = TablePointsSchema.safeParse({ prefill, decode });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const [part, index] = issue.path as [keyof typeof rowLine, number | undefined];
    const line = typeof index === 'number' ? `:${rowLine[part][index]}` : '';
    throw new TimingCsvError(`${shown}${line}: ${issue.message}`);
  }
  return parsed.data;
}
