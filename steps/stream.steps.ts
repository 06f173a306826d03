// Steps about KV event streams: what an engine worker's stream held, in order (EVT-2), and the
// router's strict check of streams: whether the replay failed, why, and what the error names
// (worker, dp rank, event id, tier, block).
import { DataTable } from '@cucumber/cucumber';
import { Then } from './support/catalogue';
import { expect } from 'chai';
import type { KvWorld } from './support/world';
import type { StreamViolation } from '../src/router/mirror';
import { formatNs } from '../src/time';
import { checkDeliveredBatches } from '../src/events/checkLog';
import type { Tier } from '../src/events/model';

const REASONS: Record<string, StreamViolation> = {
  'the block is already stored on that rank': 'duplicate-store',
  'the removed block was never stored on that rank': 'unknown-removal',
  'an event id is out of sequence': 'event-id-gap',
  'the stored blocks continue a block the rank does not hold': 'broken-chain',
};

Then(
  /^the replay fails because (the block is already stored on that rank|the removed block was never stored on that rank|an event id is out of sequence|the stored blocks continue a block the rank does not hold)$/, { domain: 'events', level: 'router', says: 'Checks the router\'s strict check rejected a KV event stream for this reason.', words: 'the replay fails because <the block is already stored on that rank, the removed block was never stored on that rank, an event id is out of sequence, or the stored blocks continue a block the rank does not hold>' },
  function (this: KvWorld, reason: string) {
    const failure = this.replay.failure;
    this.measure('stream errors', failure ? 1 : 0, failure ? 'error' : 'errors', failure ? `stream rejected (${failure.detail.violation.replace(/-/g, ' ')})` : 'stream errors = 0');
    expect(failure, 'the replay should have failed, but it accepted every event').to.not.equal(null);
    expect(failure!.detail.violation, failure!.message).to.equal(REASONS[reason]);
  },
);

Then(
  'the error names worker {int}, dp rank {int}, event {int}, tier {word} and block {int} of {string}', { domain: 'events', level: 'router', says: 'Checks the stream error names this worker, rank, event id, tier and block of the prefix.' },
  function (this: KvWorld, worker: number, dp_rank: number, event_id: number, tier: string, block: number, prefix: string) {
    const failure = this.replay.failure;
    expect(failure, 'the replay did not fail').to.not.equal(null);
    const hash = this.prefixPrompt(prefix).blocks(this.setup.block_size)[block - 1]?.block_hash;
    expect(hash, `"${prefix}" has no block ${block}`).to.not.equal(undefined);
    const detail = failure!.detail;
    this.measure(
      'rejected event id',
      detail.event_id,
      '',
      `rejected: worker ${detail.worker_id}, dp rank ${detail.dp_rank}, event ${detail.event_id}, tier ${detail.tier}`,
    );
    expect({ worker: detail.worker_id, dp_rank: detail.dp_rank, event_id: detail.event_id, tier: detail.tier, block: detail.block_hash }).to.deep.equal({
      worker,
      dp_rank,
      event_id,
      tier,
      block: hash,
    });
    for (const text of [`worker ${worker}`, `dp rank ${dp_rank}`, `event ${event_id}`, `tier ${tier}`, `block ${hash}`]) {
      expect(failure!.message, 'the error message a user reads').to.contain(text);
    }
  },
);

Then('the replay completes without a stream error', { domain: 'events', level: 'router', says: 'Checks the router\'s strict check accepted every KV event.' }, function (this: KvWorld) {
  this.measure('stream errors', this.replay.failure ? 1 : 0, 'errors');
  expect(this.replay.failure?.message ?? null, 'stream error').to.equal(null);
});

Then('the router no longer lists worker {int} as a candidate', { domain: 'events', level: 'router', says: 'Checks the worker is no longer among the router\'s candidates.' }, function (this: KvWorld, worker: number) {
  const workers = [...new Set(this.replay.router.ranks.map((rank) => rank.worker_id))];
  this.measure('candidate workers', workers.length, 'workers', `candidates: ${workers.map((w) => `worker ${w}`).join(', ') || 'none'}`);
  expect(workers).to.not.include(worker);
});

Then("worker {int}'s store became visible to the router at exactly {duration}", { domain: 'events', level: 'router', says: 'Checks the worker\'s first batch of KV events became visible to the router at exactly this instant.' }, function (this: KvWorld, worker: number, at: number) {
  const batch = this.replay.batches.find((b) => b.rank.worker_id === worker);
  if (batch === undefined) throw new Error(`worker ${worker} sent the router no KV event batch: the claim needs a store from it, e.g. 'Given worker ${worker} finishes storing "system prompt" in host memory at 10 ms'`);
  expect(batch!.visible_ns, `worker ${worker}'s batch reached the router`).to.not.equal(null);
  this.measure(`store of worker ${worker} visible to the router at`, batch!.visible_ns! / 1_000_000, 'ms');
  expect(formatNs(batch!.visible_ns!), `visibility of worker ${worker}'s batch emitted at ${formatNs(batch!.emitted_ns)}`).to.equal(formatNs(at));
});

/** A tier in a reader's words. */
const TIER_NAMES = { Device: 'GPU memory', HostPinned: 'host memory' } as const;

Then("worker {int}'s KV events were, in order:", { domain: 'events', level: 'engine', says: 'Checks the worker\'s KV events, in order (columns: event, emitted, tier, what, blocks).' }, function (this: KvWorld, worker: number, table: DataTable) {
  const events = this.engine.outcome.result.batches
    .filter(({ batch }) => batch.worker_id === worker && batch.dp_rank === 0)
    .flatMap(({ batch }) =>
      batch.events.map((event) => ({
        event: String(event.event_id),
        emitted: formatNs(batch.emitted_ns),
        tier: TIER_NAMES[event.tier],
        what: event.data.type.toLowerCase(),
        blocks: String(event.data.type === 'Stored' ? event.data.blocks.length : event.data.type === 'Removed' ? event.data.block_hashes.length : 0),
      })),
    );
  const expected = table.hashes();
  const columns = Object.keys(expected[0] ?? {});
  for (const column of columns) if (!(column in (events[0] ?? { event: '', emitted: '', tier: '', what: '', blocks: '' }))) throw new Error(`unknown column "${column}"; use: event, emitted, tier, what, blocks`);
  const actual = events.map((event) => Object.fromEntries(columns.map((column) => [column, event[column as keyof typeof event]])));
  this.measure(`KV events of worker ${worker}`, events.length, 'events', `worker ${worker} emitted ${events.length} events: ${events.map((e) => `${e.event} ${e.tier} ${e.what} ${e.blocks}`).join('; ')}`);
  expect(actual, `worker ${worker}'s KV events, in order`).to.deep.equal(expected);
});

Then("worker {int}'s KV events show, at their fullest, {int} blocks in {tier}", { domain: 'events', level: 'engine', says: 'Checks the most blocks the worker\'s KV events show in this tier at once.' }, function (this: KvWorld, worker: number, blocks: number, tier: Tier) {
  const report = checkDeliveredBatches(this.engine.outcome.result.batches);
  if (report.status !== 'clean') throw new Error(`the KV event stream does not pass the strict check: ${report.violation.message}`);
  const rank = report.ranks.find((r) => r.worker_id === worker && r.dp_rank === 0);
  const peak = rank === undefined ? 0 : rank.peak_resident_blocks[tier];
  this.measure(`most blocks in ${TIER_NAMES[tier]} on worker ${worker} at once, by its KV events`, peak, 'blocks');
  expect(peak, `the most blocks worker ${worker}'s KV events show in ${TIER_NAMES[tier]} at once`).to.equal(blocks);
});
