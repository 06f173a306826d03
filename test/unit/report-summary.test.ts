// The report's summary counts and its reconciliation reasons (SCORE-5), on requests made by hand:
// a run with a request in every end state (no simulated run has them all at once), and each
// disagreement reason at the edge where the next one would be chosen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimRequest, type RequestState } from '../../src/engine/request';
import type { Placement } from '../../src/router/router';
import type { ClusterResult } from '../../src/sim/cluster';
import { ValueCounts } from '../../src/collections/valueCounts';
import { buildReport, reconcile } from '../../src/report/report';

const BLOCK = 4;

function request(id: string, state: RequestState, input_length = 8, output_length = 2): SimRequest {
  const made = new SimRequest({ request_id: id, ordinal: 0, session_id: null, play_id: null, cache_id: null, lane: null }, input_length, output_length);
  made.state = state;
  return made;
}

function finished(id: string): SimRequest {
  const made = request(id, 'finished');
  made.first_token_ns = 1_000_000;
  made.finished_ns = 2_000_000;
  made.output_tokens = made.output_length;
  return made;
}

function result(requests: SimRequest[]): ClusterResult {
  return { requests, stuck: [], end_ns: 2_000_000, transfers: [], batches: [], batches_delivered: 0, itl_ns: new ValueCounts(), events_emitted: 0, events_withheld: 0, g2_domains: [], failure: null, ranks: [] };
}

test('the summary counts finished, failed, skipped and unfinished requests each apart', () => {
  const requests = [finished('a'), finished('b'), request('c', 'failed'), request('d', 'skipped'), request('e', 'skipped'), request('f', 'skipped'), request('g', 'waiting'), request('h', 'running'), request('i', 'loading'), request('j', 'created')];
  const { summary } = buildReport(result(requests), BLOCK, 1);
  assert.deepEqual(summary.requests, { total: 10, finished: 2, failed: 1, skipped: 3, unfinished: 4 });
});

/**
 * A request placed where the router saw `device` + `host` blocks (and the engine had them too,
 * unless `truth` says otherwise), that then reused `realised_blocks` blocks from G1.
 */
function routed(options: { device: number; host?: number; reported_tokens: number; realised_blocks: number; input_length?: number; output_length?: number; truth?: { device_blocks: number; host_blocks: number } }): SimRequest {
  const made = request('r', 'finished', options.input_length ?? 16, options.output_length ?? 2);
  const host = options.host ?? 0;
  const placement: Placement = {
    request_id: 'r',
    ordinal: 0,
    worker_id: 0,
    dp_rank: 0,
    time_ns: 0,
    policy: 'kv',
    candidates: [],
    device_blocks: options.device,
    host_blocks: host,
    selected_overlap_blocks: options.device + host,
    best_available_overlap_blocks: options.device + host,
    reported_overlap_tokens: options.reported_tokens,
    tied_candidates: 1,
  };
  made.addPlacement(placement);
  made.truth_at_placement = options.truth ?? { device_blocks: options.device, host_blocks: host };
  made.first_admission_ns = 0;
  made.g1_reused_tokens = options.realised_blocks * BLOCK;
  return made;
}

const reasonOf = (made: SimRequest, host_weight = 1) => reconcile(made, BLOCK, host_weight);

test('reconciliation: reported and realised tokens equal agree; a request never placed or never admitted is not reconciled', () => {
  assert.deepEqual(reasonOf(routed({ device: 2, reported_tokens: 8, realised_blocks: 2 })), { predicted_tokens: 8, realised_tokens: 8, agree: true, reason: null });
  assert.equal(reasonOf(request('x', 'finished')), null, 'never placed');
  const notAdmitted = routed({ device: 2, reported_tokens: 8, realised_blocks: 0 });
  notAdmitted.first_admission_ns = null;
  assert.equal(reasonOf(notAdmitted), null, 'never admitted');
});

test('reconciliation: the engine held other blocks than the router saw: lag, whichever way it went', () => {
  assert.equal(reasonOf(routed({ device: 2, reported_tokens: 8, realised_blocks: 1, truth: { device_blocks: 1, host_blocks: 0 } }))!.reason, 'lag');
  assert.equal(reasonOf(routed({ device: 2, reported_tokens: 8, realised_blocks: 3, truth: { device_blocks: 2, host_blocks: 1 } }))!.reason, 'lag');
});

test('reconciliation: the last-token rule only where the prompt has fewer reusable blocks than the router counted', () => {
  // 16 tokens with output to produce: the last token is computed again, so 3 blocks are reusable of the 4 the router saw.
  assert.equal(reasonOf(routed({ device: 4, reported_tokens: 16, realised_blocks: 3 }))!.reason, 'last-token rule');
  // No output: all 4 blocks are reusable, so reusing 3 of them is a stale entry, not the rule.
  assert.equal(reasonOf(routed({ device: 4, reported_tokens: 16, realised_blocks: 3, output_length: 0 }))!.reason, 'stale entry');
  // 17 tokens: 4 reusable blocks, as many as the router saw: reusing 3 is a stale entry.
  assert.equal(reasonOf(routed({ device: 4, reported_tokens: 16, realised_blocks: 3, input_length: 17 }))!.reason, 'stale entry');
  // Fewer reused than the rule allows is a stale entry too.
  assert.equal(reasonOf(routed({ device: 4, reported_tokens: 16, realised_blocks: 2 }))!.reason, 'stale entry');
});

test('reconciliation: more reused than the router saw is a queued request; as many, with host blocks weighted, the host weight', () => {
  assert.equal(reasonOf(routed({ device: 1, reported_tokens: 4, realised_blocks: 2 }))!.reason, 'queued request');
  // The router saw 1 G1 + 1 G2 block and reported them weighted (4 + 0.75 × 4 = 7 tokens); 2 blocks (8 tokens) were reused.
  assert.equal(reasonOf(routed({ device: 1, host: 1, reported_tokens: 7, realised_blocks: 2 }), 0.75)!.reason, 'host weight');
  // 12 tokens: 2 reusable blocks, as many as the router saw and reused: the weight, not the last-token rule.
  assert.equal(reasonOf(routed({ device: 1, host: 1, reported_tokens: 7, realised_blocks: 2, input_length: 12 }), 0.75)!.reason, 'host weight');
  // With a host weight of 1 the same disagreement has no explanation.
  assert.equal(reasonOf(routed({ device: 1, host: 1, reported_tokens: 7, realised_blocks: 2 }), 1)!.reason, null);
});

test('the summary tallies disagreements by reason, the unexplained ones by that name', () => {
  const requests = [
    routed({ device: 2, reported_tokens: 8, realised_blocks: 2 }),
    routed({ device: 1, reported_tokens: 4, realised_blocks: 2 }),
    routed({ device: 1, reported_tokens: 4, realised_blocks: 2 }),
    routed({ device: 1, host: 1, reported_tokens: 7, realised_blocks: 2 }),
  ];
  const { summary } = buildReport(result(requests), BLOCK, 1);
  assert.deepEqual(summary.reconciliation, { admissions: 4, agree: 1, disagree_by_reason: { 'queued request': 2, unexplained: 1 } });
});
