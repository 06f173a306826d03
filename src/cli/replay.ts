// `kvqual replay <config.yaml>`: reads a replay configuration (cluster, router, workload), runs
// the simulation and prints a short human summary; --out writes the canonical report JSON, --json
// prints it. Exit 0 on a clean run, 1 when the router rejected the event stream, 2 for a bad
// config or an unreadable file (nothing is written then).
import type { Command } from 'commander';
import { ConfigError, parseReplayConfig } from '../config/load';
import * as path from 'node:path';
import { runReplay, type ReplayInputs, type ReplayOutcome } from '../replay';
import { fromKvEventBatch, toWireLine } from '../events/wire';
import { AgenticTraceError, parseAgenticTrace } from '../agentic/trace';
import { MooncakeTraceError, parseMooncakeTrace } from '../config/mooncake';
import type { ReplayConfig } from '../config/schema';
import type { RunReport } from '../report/report';
import { canonicalJsonPretty } from '../report/canonical';
import { DurationError } from '../time';
import type { CliIo } from './io';
import { ExitCode } from './io';

export interface ReplayOptions {
  out?: string;
  eventsOut?: string;
  json: boolean;
  seed?: string;
}

export function registerReplay(program: Command, io: CliIo, finish: (code: ExitCode) => void): void {
  program
    .command('replay')
    .description('run a cluster replay from a YAML config and report it (see examples/configs/)')
    .argument('<config>', 'the replay configuration (YAML or JSON); its JSON Schema is schema/kvqual-config.schema.json')
    .option('--out <file>', 'write the canonical report JSON to this file (atomically)')
    .option('--json', 'print the canonical report JSON instead of the summary', false)
    .option('--events-out <file>', 'write the KV event stream the router received, as JSON lines (the check-events format)')
    .option('--seed <n>', "override the config's seed")
    .action((file: string, options: ReplayOptions) => finish(replayFile(file, options, io)));
}

export function replayFile(file: string, options: ReplayOptions, io: CliIo): ExitCode {
  let text: string;
  try {
    text = io.readText(file);
  } catch (error) {
    io.stderr(`kvqual replay: cannot read ${file}: ${(error as Error).message}\n`);
    return ExitCode.usage;
  }
  let outcome: ReplayOutcome;
  try {
    const config = parseReplayConfig(text, file);
    if (options.seed !== undefined) config.seed = parseSeed(options.seed);
    outcome = runReplay(config, loadInputs(config, file, io));
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DurationError || error instanceof SeedError || error instanceof AgenticTraceError || error instanceof MooncakeTraceError || error instanceof InputError) {
      io.stderr(`kvqual replay: ${error.message}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  const report = outcome.report;
  const json = `${canonicalJsonPretty(report)}\n`;
  if (options.out) io.writeTextAtomic(options.out, json);
  if (options.eventsOut) io.writeTextAtomic(options.eventsOut, eventLog(outcome));
  io.stdout(options.json ? json : summaryText(file, report, options.out));
  return report.summary.event_stream_failure === null ? ExitCode.clean : ExitCode.violation;
}

/** The batches the router received, in delivery order, in the wire format check-events reads. */
function eventLog(outcome: ReplayOutcome): string {
  return outcome.result.batches.map(({ batch }) => `${toWireLine(fromKvEventBatch(batch))}\n`).join('');
}

class SeedError extends Error {}
class InputError extends Error {}

/** Reads the files a config names (an agentic or Mooncake trace), relative to the config's folder. */
function loadInputs(config: ReplayConfig, file: string, io: CliIo): ReplayInputs {
  const { agentic, mooncake } = config.workload;
  if (agentic) return { agentic_trace: parseAgenticTrace(readBeside(file, 'workload.agentic.trace', agentic.trace, io), agentic.trace) };
  if (mooncake) {
    const text = readBeside(file, 'workload.mooncake.trace', mooncake.trace, io);
    const options = { trace_block_size: config.workload.trace_block_size, max_requests: mooncake.max_requests ?? null, time_scale: mooncake.time_scale, first_ordinal: 0 };
    return { mooncake_requests: parseMooncakeTrace(text, mooncake.trace, options) };
  }
  return {};
}

function readBeside(configFile: string, field: string, name: string, io: CliIo): string {
  try {
    return io.readText(path.resolve(path.dirname(configFile), name));
  } catch (error) {
    throw new InputError(`${configFile}: ${field}: cannot read ${name}: ${(error as Error).message}`);
  }
}

function parseSeed(text: string): number {
  const seed = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(seed)) throw new SeedError(`--seed ${text}: the seed must be a whole number`);
  return seed;
}

const fixed = (value: number) => String(Number(value.toFixed(3)));

/** A few lines a person reads after a run. */
export function summaryText(file: string, report: RunReport, out: string | undefined): string {
  const s = report.summary;
  const lines = [
    `${file}: ${s.requests.finished}/${s.requests.total} requests finished in ${fixed(s.virtual_duration_ms)} ms of virtual time`,
    `  TTFT ms: mean ${fixed(s.ttft_ms.mean)}, p50 ${fixed(s.ttft_ms.p50)}, p99 ${fixed(s.ttft_ms.p99)}, max ${fixed(s.ttft_ms.max)}`,
    `  E2E ms:  mean ${fixed(s.e2e_ms.mean)}, p50 ${fixed(s.e2e_ms.p50)}, p99 ${fixed(s.e2e_ms.p99)}, max ${fixed(s.e2e_ms.max)}`,
    `  prefix reuse ${fixed(s.prefix_reuse_ratio * 100)}% of ${s.tokens.input} prompt tokens (G1 ${s.tokens.g1_reused}, G2 ${s.tokens.host_reused})`,
    `  transfers: ${s.transfers.d2h} D2H, ${s.transfers.h2d} H2D; KV events: ${s.kv_events.emitted} emitted, ${s.kv_events.batches_delivered} batches reached the router`,
    `  reconciliation: ${s.reconciliation.agree}/${s.reconciliation.admissions} admissions as the router predicted${reasons(s.reconciliation.disagree_by_reason)}`,
  ];
  if (s.plays) {
    const lanes = new Set(s.plays.map((play) => play.lane)).size;
    lines.push(`  agentic: ${s.plays.length} play instance(s) on ${lanes} lane(s), ${s.plays.filter((p) => p.failed).length} failed; ${s.requests.skipped} request(s) skipped`);
  }
  for (const domain of s.g2_domains ?? []) {
    lines.push(`  shared G2 ${domain.domain_id}: ${domain.resident_blocks} resident / ${domain.used_blocks} used / ${domain.capacity_blocks} blocks, ${domain.participants.length} participant rank(s)`);
  }
  if (s.event_stream_failure) lines.push(`  EVENT STREAM REJECTED: ${s.event_stream_failure}`);
  lines.push(`  digest ${report.digest}${out ? `; report written to ${out}` : ''}`);
  return `${lines.join('\n')}\n`;
}

function reasons(byReason: Record<string, number>): string {
  const entries = Object.entries(byReason).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '' : ` (others: ${entries.map(([reason, count]) => `${count} ${reason}`).join(', ')})`;
}
