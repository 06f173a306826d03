// The captured-log checker: replays a parsed KV event log through the strict ResidencyMirror
// (MIR-2, MIR-3) with the first id seen per rank as its start, and also flags a rank whose
// timestamps go backwards. Reports the first violation with its line, or a summary of a clean
// log (per rank: what is resident at the end, and the most that was resident at once). Pure:
// parsed lines in, a report out. The lines may be a stream (parseWireLines over a file): they are
// read once, in order, and every line is read even after a violation, so that a malformed line
// anywhere in the log is still reported.
import { fromKvEventBatch, WireFormatError } from './wire';
import { LIMITS, limitText } from '../limits';
import type { KvEventBatch, RankRef, Tier } from './model';
import { compareWorkerIds, TIERS, workerIdText } from './model';
import type { LogLine } from './wire';
import type { StreamErrorDetail } from '../router/mirror';
import { EventStreamError, ResidencyMirror } from '../router/mirror';
import { formatNs } from '../time';

/** Why an event id was out of sequence, judged from the rest of the log. */
export type IdGapCause = 'lost' | 'reordered' | 'behind';

export interface StreamViolationAtLine extends StreamErrorDetail {
  line_number: number;
  /** For 'event-id-gap' only: the expected id never comes (lost), comes later (reordered), or the id went back. */
  id_gap_cause: IdGapCause | null;
  message: string;
}

export interface TimestampViolation extends RankRef {
  violation: 'timestamp-backwards';
  line_number: number;
  /** The first event of the offending line, if it has any. */
  event_id: number | null;
  timestamp_ns: bigint;
  previous_timestamp_ns: bigint;
  previous_line_number: number;
  message: string;
}

export type LogViolation = StreamViolationAtLine | TimestampViolation;

export interface RankSummary extends RankRef {
  batches: number;
  events: number;
  first_event_id: number | null;
  last_event_id: number | null;
  first_timestamp_ns: bigint | null;
  last_timestamp_ns: bigint | null;
  /** Blocks the mirror holds for the rank after the last line. */
  resident_blocks: Record<Tier, number>;
  /** The most blocks the mirror held for the rank at once, after any one event: what the rank's G1 and G2 must have had room for. */
  peak_resident_blocks: Record<Tier, number>;
  /** Events of what kvqual does not model (Dynamo's disk or external tier, a cache owner's domain), passed over: their ids counted, their blocks not mirrored. */
  passed_over_events: number;
}

export interface CleanLogReport {
  status: 'clean';
  batches: number;
  events: number;
  /** Ranks sorted by (worker_id, dp_rank). */
  ranks: RankSummary[];
  first_timestamp_ns: bigint | null;
  last_timestamp_ns: bigint | null;
  span_ns: bigint | null;
  /** Events of the disk or external tier passed over, in all (see RankSummary). */
  passed_over_events: number;
}

export interface ViolationLogReport {
  status: 'violation';
  violation: LogViolation;
  /** Events accepted before the violation. */
  events_checked: number;
}

export type LogReport = CleanLogReport | ViolationLogReport;

interface RankProgress {
  summary: RankSummary;
  index: number;
  last_timestamp_line: number;
}

/** Checks a parsed log line by line; the first violation is the report. */
export function checkEventLog(lines: Iterable<LogLine>): LogReport {
  const mirror = new ResidencyMirror('first-seen');
  const ranks = new Map<string, RankProgress>();
  const rest = lines[Symbol.iterator]();
  for (let next = rest.next(); !next.done; next = rest.next()) {
    const line = next.value;
    const rank = progressOf(ranks, mirror, line);
    const violation = timestampViolation(rank, line) ?? applyLine(mirror, line, rest, rank);
    if (violation) {
      drain(rest);
      return { status: 'violation', violation, events_checked: mirror.appliedEvents };
    }
    recordLine(rank, line);
  }
  return cleanReport(mirror, [...ranks.values()]);
}

/** A run's delivered batches, in delivery order, through the same check as a captured log of them (each batch a line). */
export function checkDeliveredBatches(batches: readonly { batch: KvEventBatch }[]): LogReport {
  return checkEventLog(batches.map(({ batch }, i) => ({ line_number: i + 1, batch: fromKvEventBatch(batch) })));
}

/** Reads what is left of the log (so a malformed line after a violation still surfaces). */
function drain(rest: Iterator<LogLine>): void {
  for (let next = rest.next(); !next.done; next = rest.next());
}

function rankKey(rank: RankRef): string {
  return `${rank.worker_id}/${rank.dp_rank}`;
}

/** The rank's progress, registering the rank with the mirror when it first appears. */
function progressOf(ranks: Map<string, RankProgress>, mirror: ResidencyMirror, line: LogLine): RankProgress {
  const { worker_id, dp_rank } = line.batch;
  const known = ranks.get(rankKey(line.batch));
  if (known) return known;
  // The mirror keeps, per block, the set of ranks holding it: a log of tens of thousands of ranks sharing blocks asked for gigabytes.
  if (ranks.size >= LIMITS.ranks) throw new WireFormatError(line.line_number, '', `worker ${workerIdText(worker_id)}, dp rank ${dp_rank} is rank ${limitText(ranks.size + 1)} of the log, above the limit of ${limitText(LIMITS.ranks)} ranks (as in a config)`);
  const progress: RankProgress = {
    index: ranks.size,
    last_timestamp_line: 0,
    summary: {
      worker_id,
      dp_rank,
      batches: 0,
      events: 0,
      first_event_id: null,
      last_event_id: null,
      first_timestamp_ns: null,
      last_timestamp_ns: null,
      resident_blocks: { Device: 0, HostPinned: 0 },
      peak_resident_blocks: { Device: 0, HostPinned: 0 },
      passed_over_events: 0,
    },
  };
  mirror.addRank({ worker_id, dp_rank }, progress.index);
  ranks.set(rankKey(line.batch), progress);
  return progress;
}

function timestampViolation(rank: RankProgress, line: LogLine): TimestampViolation | null {
  const now = line.batch.timestamp_ns;
  const previous = rank.summary.last_timestamp_ns;
  if (now === null || previous === null || now >= previous) return null;
  const { worker_id, dp_rank } = rank.summary;
  return {
    violation: 'timestamp-backwards',
    worker_id,
    dp_rank,
    line_number: line.line_number,
    event_id: line.batch.events[0]?.event_id ?? null,
    timestamp_ns: now,
    previous_timestamp_ns: previous,
    previous_line_number: rank.last_timestamp_line,
    message:
      `timestamps go backwards — worker ${workerIdText(worker_id)}, dp rank ${dp_rank}: stamped ${now} ns, ` +
      `${formatNs(previous - now)} before the rank's line ${rank.last_timestamp_line} (${previous} ns)`,
  };
}

/** Applies every event of the line, noting the rank's peak residency after each; a mirror rejection becomes a violation. */
function applyLine(mirror: ResidencyMirror, line: LogLine, rest: Iterator<LogLine>, rank: RankProgress): StreamViolationAtLine | null {
  const peaks = rank.summary.peak_resident_blocks;
  try {
    for (const event of line.batch.events) {
      mirror.apply(event);
      if (event.data.type !== 'Stored' || event.passed_over !== undefined) continue;
      const tier = event.tier;
      const resident = mirror.tier(tier).count(rank.index);
      if (resident > peaks[tier]) peaks[tier] = resident;
    }
    return null;
  } catch (error) {
    if (!(error instanceof EventStreamError)) throw error;
    const id_gap_cause = error.detail.violation === 'event-id-gap' ? idGapCause(error.detail, line, rest) : null;
    return { ...error.detail, line_number: line.line_number, id_gap_cause, message: idGapMessage(error, id_gap_cause) };
  }
}

/** Looks ahead (this line, then the rest) for the expected id on the same rank to tell a lost event from a reordered one. */
function idGapCause(detail: StreamErrorDetail, line: LogLine, rest: Iterator<LogLine>): IdGapCause {
  if (detail.expected_event_id === null || detail.event_id < detail.expected_event_id) return 'behind';
  const expected = detail.expected_event_id;
  const holds = ({ batch }: LogLine) => rankKey(batch) === rankKey(detail) && batch.events.some((event) => event.event_id === expected);
  if (holds(line)) return 'reordered';
  for (let next = rest.next(); !next.done; next = rest.next()) if (holds(next.value)) return 'reordered';
  return 'lost';
}

const ID_GAP_TEXT: Record<IdGapCause, (expected: number | null) => string> = {
  lost: (expected) => `event ${expected} never appears in the log: lost`,
  reordered: (expected) => `event ${expected} appears later in the log: reordered`,
  behind: () => 'the id is behind the stream: a duplicated or replayed event',
};

function idGapMessage(error: EventStreamError, cause: IdGapCause | null): string {
  return cause === null ? error.message : `${error.message}; ${ID_GAP_TEXT[cause](error.detail.expected_event_id)}`;
}

function recordLine(rank: RankProgress, line: LogLine): void {
  const summary = rank.summary;
  summary.batches++;
  summary.events += line.batch.events.length;
  for (const event of line.batch.events) {
    summary.first_event_id ??= event.event_id;
    summary.last_event_id = event.event_id;
    if (event.passed_over !== undefined) summary.passed_over_events++;
  }
  const timestamp = line.batch.timestamp_ns;
  if (timestamp === null) return;
  summary.first_timestamp_ns ??= timestamp;
  summary.last_timestamp_ns = timestamp;
  rank.last_timestamp_line = line.line_number;
}

function cleanReport(mirror: ResidencyMirror, ranks: RankProgress[]): CleanLogReport {
  for (const rank of ranks) {
    for (const tier of TIERS) rank.summary.resident_blocks[tier] = mirror.tier(tier).count(rank.index);
  }
  const summaries = ranks.map((rank) => rank.summary).sort((a, b) => compareWorkerIds(a.worker_id, b.worker_id) || a.dp_rank - b.dp_rank);
  const first = extreme(summaries.map((rank) => rank.first_timestamp_ns), (a, b) => a < b);
  const last = extreme(summaries.map((rank) => rank.last_timestamp_ns), (a, b) => a > b);
  return {
    status: 'clean',
    batches: sum(summaries.map((rank) => rank.batches)),
    events: sum(summaries.map((rank) => rank.events)),
    ranks: summaries,
    first_timestamp_ns: first,
    last_timestamp_ns: last,
    span_ns: first === null || last === null ? null : last - first,
    passed_over_events: sum(summaries.map((rank) => rank.passed_over_events)),
  };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** The value that beats every other one, ignoring nulls. */
function extreme(values: (bigint | null)[], beats: (a: bigint, b: bigint) => boolean): bigint | null {
  let best: bigint | null = null;
  for (const value of values) if (value !== null && (best === null || beats(value, best))) best = value;
  return best;
}
