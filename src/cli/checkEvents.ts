// `kvqual check-events <file>`: reads a captured KV event log (JSON lines, see
// examples/events/README.md), checks it against the mirror rules and prints the report, as text
// or with --json as JSON. Exit 0 clean, 1 a violation, 2 unreadable file, malformed line or a log
// that holds no event (a capture that wrote nothing proves nothing). The log is streamed (one line
// in memory at a time, each at most LIMITS.line_chars long); only a regular file is read. Both
// outputs are written in pieces (canonical JSON, streamed), never as one string: a clean log's
// per-rank summary can have millions of lines.
import * as path from 'node:path';
import type { Command } from 'commander';
import type { CleanLogReport, LogReport, RankSummary } from '../events/checkLog';
import { checkEventLog } from '../events/checkLog';
import { rankLabel } from '../events/model';
import { parseWireLines, WireFormatError } from '../events/wire';
import { fileLines, InputFileError } from '../inputFiles';
import { formatNs } from '../time';
import type { CliIo } from './io';
import { writeCanonicalPretty } from '../report/canonical';
import { exactWorkerId } from '../events/model';
import { ExitCode } from './io';

export interface CheckEventsOptions {
  json: boolean;
}

/** What the command found, ready to print either way. */
type Outcome =
  | { status: 'unreadable'; message: string }
  | { status: 'malformed'; line_number: number; field_path: string; message: string }
  | { status: 'empty'; message: string }
  | LogReport;

export function registerCheckEvents(program: Command, io: CliIo, finish: (code: ExitCode) => void): void {
  program
    .command('check-events')
    .description('check a captured KV event log (JSON lines) against the mirror rules (MIR-2, MIR-3)')
    .argument('<file>', 'the event log: one event or one batch of a rank’s events per line')
    .option('--json', 'print the report as JSON (64-bit values as decimal strings)', false)
    .action((file: string, options: CheckEventsOptions) => finish(checkEventsFile(file, options, io)));
}

/** Reads, parses and checks one log file, prints the outcome and returns the exit code. */
export function checkEventsFile(file: string, options: CheckEventsOptions, io: CliIo): ExitCode {
  const outcome = checkText(file, io);
  if (options.json) {
    // Streamed in pieces of about 64 KB (a clean log of millions of ranks would not fit one string).
    // The last piece is held back to carry the final line break (no write of its own).
    let held: string | null = null;
    writeCanonicalPretty({ file, ...withExactWorkerIds(outcome) }, (piece) => {
      if (held !== null) io.stdout(held);
      held = piece;
    });
    io.stdout(`${held ?? ''}\n`);
  } else printText(file, outcome, io);
  return exitCodeOf(outcome);
}

/** The outcome with each worker id as the log gave it (a u64 past 2^53 − 1 as its exact decimal string in JSON, as hashes are). */
function withExactWorkerIds(outcome: Outcome): object {
  if (outcome.status === 'violation') return { ...outcome, violation: { ...outcome.violation, worker_id: exactWorkerId(outcome.violation.worker_id) } };
  if (outcome.status === 'clean') return { ...outcome, ranks: outcome.ranks.map((rank) => ({ ...rank, worker_id: exactWorkerId(rank.worker_id) })) };
  return outcome;
}

function checkText(file: string, io: CliIo): Outcome {
  try {
    const report = checkEventLog(parseWireLines(fileLines(path.resolve(io.cwd, file), file, file)));
    // An empty or blank log (or one of empty batches) has nothing to check: bad input, as a workload with no requests.
    if (report.status === 'clean' && report.events === 0) return { status: 'empty', message: `${file}: the event log holds no event (${report.batches} batch(es)); a capture that wrote nothing cannot be checked` };
    return report;
  } catch (error) {
    if (error instanceof InputFileError) return { status: 'unreadable', message: error.message };
    if (!(error instanceof WireFormatError)) throw error;
    return { status: 'malformed', line_number: error.line_number, field_path: error.field_path, message: error.message };
  }
}

function exitCodeOf(outcome: Outcome): ExitCode {
  switch (outcome.status) {
    case 'clean':
      return ExitCode.clean;
    case 'violation':
      return ExitCode.violation;
    case 'unreadable':
    case 'malformed':
    case 'empty':
      return ExitCode.usage;
  }
}

function printText(file: string, outcome: Outcome, io: CliIo): void {
  switch (outcome.status) {
    case 'unreadable':
    case 'empty':
      return io.stderr(`kvqual check-events: ${outcome.message}\n`);
    case 'malformed':
      return io.stderr(`kvqual check-events: ${file}: ${outcome.message}\n`);
    case 'violation':
      return io.stdout(
        `${file}: line ${outcome.violation.line_number}: ${outcome.violation.message}\n` +
          `  (${outcome.events_checked} event(s) accepted before it)\n`,
      );
    case 'clean':
      return writeCleanText(file, outcome, io.stdout);
  }
}

/** Text written in pieces of at least this many characters, never the whole summary at once. */
const TEXT_PIECE_CHARS = 64 * 1024;

/** A clean log's summary, one line per rank, written to `sink` in pieces (millions of ranks make gigabytes of text). */
function writeCleanText(file: string, report: CleanLogReport, sink: (text: string) => void): void {
  let piece = `${file}: clean — ${report.batches} batch(es), ${report.events} event(s) from ${report.ranks.length} rank(s)\n  ${timeSpanText(report.first_timestamp_ns, report.last_timestamp_ns)}\n`;
  if (report.passed_over_events > 0) piece += `  ${report.passed_over_events} event(s) passed over (Dynamo's disk or external tier, or a cache owner's domain): their ids are checked in their ranks' sequences, their blocks are not mirrored (the spec has a worker's G1 and G2 only)\n`;
  for (const rank of report.ranks) {
    piece += `  ${rankText(rank)}\n`;
    if (piece.length >= TEXT_PIECE_CHARS) {
      sink(piece);
      piece = '';
    }
  }
  if (piece !== '') sink(piece);
}

function rankText(rank: RankSummary): string {
  const ids = rank.first_event_id === null ? 'no events' : `${rank.events} event(s), ids ${rank.first_event_id} to ${rank.last_event_id}`;
  const resident =
    `resident at the end: Device ${rank.resident_blocks.Device}, HostPinned ${rank.resident_blocks.HostPinned} block(s)` +
    ` (at most ${rank.peak_resident_blocks.Device} and ${rank.peak_resident_blocks.HostPinned} at once)`;
  return `${rankLabel(rank)}: ${rank.batches} batch(es), ${ids}; ${resident}; ${timeSpanText(rank.first_timestamp_ns, rank.last_timestamp_ns)}`;
}

function timeSpanText(first: bigint | null, last: bigint | null): string {
  if (first === null || last === null) return 'no timestamps';
  return `timestamps ${first} ns to ${last} ns (span ${formatNs(last - first)})`;
}
