// One replay of the whole Mooncake conversation trace (shared/data/mooncake) on N aggregated
// workers with the example engine settings and private G2, in this fresh process; prints one JSON
// line: wall seconds, peak RSS, requests and digest. Run by the `scale` benchmark. May read the clock.
import fs from 'node:fs';
import path from 'node:path';
import { parseReplayConfig } from '../src/config/load';
import { parseMooncakeTrace } from '../src/config/mooncake';
import { runReplay } from '../src/replay';
import { writeCanonicalPretty } from '../src/report/canonical';
import { wallSeconds } from './harness';

const ROOT = path.resolve(__dirname, '..');
export const TRACE = path.resolve(ROOT, '..', 'shared', 'data', 'mooncake', 'conversation_trace.jsonl');
const CONFIG = path.join(ROOT, 'examples', 'configs', 'mooncake-conversation.yaml');

function main(workers: number): void {
  const started = wallSeconds();
  const text = fs.readFileSync(CONFIG, 'utf8').replace(/replicas: \d+/, `replicas: ${workers}`).replace(/^\s*max_requests: \d+\s*$/m, '');
  const config = parseReplayConfig(text, CONFIG);
  const requests = parseMooncakeTrace(fs.readFileSync(TRACE, 'utf8'), TRACE, { trace_block_size: config.workload.trace_block_size, max_requests: null, time_scale: config.workload.mooncake!.time_scale, first_ordinal: 0 });
  const outcome = runReplay(config, { mooncake_requests: requests });
  let reportBytes = 0;
  writeCanonicalPretty(outcome.report, (piece) => (reportBytes += piece.length));
  const wall_s = wallSeconds() - started;
  const peak_rss_mb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify({ workers, requests: outcome.report.summary.requests.total, finished: outcome.report.summary.requests.finished, wall_s, peak_rss_mb, report_mb: reportBytes / 1e6, digest: outcome.report.digest })}\n`);
}

if (require.main === module) main(Number(process.argv[2] ?? 16));
