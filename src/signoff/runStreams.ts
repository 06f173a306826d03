// Reading what a cucumber run wrote: its message stream (with cucumber's last words when it stopped
// early), and the disagreements between its exit status, printed summary, junit.xml and stream.
import fs from 'node:fs';
import path from 'node:path';
import { parseRun, RunModel, runLastWords } from './messages';
import { RERUN_MESSAGES } from './model';
import { channelDisagreements } from './channels';
import { ownStreamProblems } from './shardTrust';
import type { Spawned } from './spawn';

/** A run whose stream did not finish, with cucumber's own account of what stopped it added to its problems. */
export function withLastWords(read: { run: RunModel | null; problem: string | null }, output: string): { run: RunModel | null; problem: string | null } {
  const words = read.run !== null && !read.run.finished ? runLastWords(output) : null;
  if (words !== null) read.run!.runErrors.push(words);
  return read;
}

/** A file's text, or null when it cannot be read. */
export function textOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Where each cucumber run's exit status, printed summary and (run 1) junit.xml disagree with its
 * message stream (channels.ts), in words; `streams` are the texts of the two message streams as the
 * sign-off read them (null: none written).
 */
export function runChannelProblems(
  runDir: string,
  nonces: { first: string; second: string },
  first: Spawned,
  second: Spawned | undefined,
  firstRun: RunModel | null,
  secondRun: RunModel | null,
  streams: { first: string | null; second: string | null },
): string[] {
  return [
    ...channelDisagreements({ label: 'run 1 of 2', exitStatus: first.status, output: first.output, junit: textOrNull(path.join(runDir, 'junit.xml')), stream: streams.first }, firstRun),
    ...(second === undefined ? [] : channelDisagreements({ label: 'run 2 of 2', exitStatus: second.status, output: second.output, stream: streams.second }, secondRun)),
    ...ownStreamProblems(streams, nonces),
  ];
}

export function readRun(file: string): { run: RunModel | null; problem: string | null } {
  return readRunAndText(file).read;
}

/** A run's message stream read and parsed, and its text (null when there is none). */
export function readRunAndText(file: string): { read: { run: RunModel | null; problem: string | null }; text: string | null } {
  const text = textOrNull(file);
  return { read: runOfText(text, file), text };
}

/** A run from the text of its message stream `file` as read (null: there is none). */
export function runOfText(text: string | null, file: string): { run: RunModel | null; problem: string | null } {
  if (text === null) return { run: null, problem: `cucumber wrote no message stream (${path.basename(file)})` };
  return { run: parseRun(text), problem: null };
}
