// The per-request export (`kvqual replay --requests-out FILE.jsonl|FILE.csv`): one flat record per
// request, in ordinal order, with the metrics named as AIPerf's per-request export names them where
// it has such a metric (time_to_first_token, inter_token_latency, request_latency, ...), units last.
// Written a record at a time to a sink, so a million requests never become one string.
import type { RequestRecord, RunReport } from './report';
import { requestedBlocks } from './prefixHitRates';

export type RequestsFormat = 'jsonl' | 'csv';

/** The columns, in order, and how each is read from a report record. */
const COLUMNS: readonly [string, (r: RequestRecord, block_size: number) => string | number | boolean | null][] = [
  ['request_id', (r) => r.request_id],
  ['ordinal', (r) => r.ordinal],
  ['session_id', (r) => r.session_id],
  ['status', (r) => r.status],
  ['worker_id', (r) => r.worker_id],
  ['dp_rank', (r) => r.dp_rank],
  ['arrival_ms', (r) => r.arrival_ms],
  ['input_sequence_length', (r) => r.input_length],
  ['output_sequence_length', (r) => (r.status === 'finished' ? r.output_length : null)],
  ['time_to_first_token_ms', (r) => r.ttft_ms],
  ['time_to_second_token_ms', (r) => r.time_to_second_token_ms],
  ['inter_token_latency_ms', (r) => r.inter_token_latency_ms],
  ['time_per_output_token_ms', (r) => r.time_per_output_token_ms],
  ['request_latency_ms', (r) => r.e2e_ms],
  ['output_token_throughput_per_user', (r) => r.output_token_throughput_per_user],
  ['queue_time_ms', (r) => r.queue_ms],
  ['h2d_wait_ms', (r) => r.h2d_wait_ms],
  ['g1_reused_tokens', (r) => r.g1_reused_tokens],
  ['g2_reused_tokens', (r) => r.host_reused_tokens],
  // Prefix hit rates per request (docs/glossary.md): blocks of the run's block size, a partial last one requested too.
  ['requested_blocks', (r, block_size) => (r.ceiling_hit_blocks === null ? null : requestedBlocks(r.input_length, block_size))],
  ['hit_blocks', (r, block_size) => (r.ceiling_hit_blocks === null ? null : (r.g1_reused_tokens + r.host_reused_tokens) / block_size)],
  ['ceiling_hit_blocks', (r) => r.ceiling_hit_blocks],
  ['preemptions', (r) => r.preemptions],
  ['failure_reason', (r) => r.failure_reason ?? r.skip_reason],
];

/** The format a file name asks for, or null when its extension is neither .jsonl nor .csv. */
export function requestsFormatOf(file: string): RequestsFormat | null {
  const lower = file.toLowerCase();
  if (lower.endsWith('.jsonl')) return 'jsonl';
  if (lower.endsWith('.csv')) return 'csv';
  return null;
}

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled; null is empty. */
function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function writeRequests(report: RunReport, format: RequestsFormat, sink: (text: string) => void): void {
  const block_size = report.summary.prefix_hit_rates.block_size_tokens;
  if (format === 'csv') sink(`${COLUMNS.map(([name]) => name).join(',')}\n`);
  for (const record of report.per_request) {
    if (format === 'csv') {
      sink(`${COLUMNS.map(([, read]) => csvField(read(record, block_size))).join(',')}\n`);
    } else {
      const row: Record<string, string | number | boolean | null> = {};
      for (const [name, read] of COLUMNS) row[name] = read(record, block_size);
      sink(`${JSON.stringify(row)}\n`);
    }
  }
}
