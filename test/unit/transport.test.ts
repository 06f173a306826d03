// Unit tests of the lagged event transport (LAG-1, LAG-2): a batch is visible at exactly emission
// time + lag (inclusive), batches arrive in FIFO order, and with lag 0 they are applied before the
// arrivals of the same instant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvariantError, Kernel, Phase } from '../../src/kernel';
import type { KvEventBatch } from '../../src/events/model';
import { EventTransport } from '../../src/events/transport';
import { parseDurationNs } from '../../src/time';

const ms = parseDurationNs;

/** A kernel, a transport with the lag, and the log of what the router side saw and when. */
function link(lag: string): { kernel: Kernel; transport: EventTransport; log: string[] } {
  const kernel = new Kernel();
  const log: string[] = [];
  const transport = new EventTransport(kernel, ms(lag), (batch) => log.push(`worker ${batch.worker_id} batch at ${kernel.now}`));
  return { kernel, transport, log };
}

function emptyBatch(worker_id: number, emitted_ns: number): KvEventBatch {
  return { worker_id, dp_rank: 0, emitted_ns, events: [] };
}

/** Emits a batch from `worker_id` at `at`, in the phase a worker emits in. */
function emitAt(kernel: Kernel, transport: EventTransport, at: number, worker_id: number, phase = Phase.PassCompletion): void {
  kernel.at(at, phase, worker_id, () => transport.emit(emptyBatch(worker_id, kernel.now)));
}

/** An arrival at `at` that notes how many batches the router side had seen by then. */
function probeAt(kernel: Kernel, log: string[], at: number): void {
  kernel.at(at, Phase.Arrival, 0, () => log.push(`arrival at ${kernel.now} saw ${log.filter((line) => line.includes('batch')).length}`));
}

test('a batch emitted at 10 ms with a 5 ms lag is visible from exactly 15 ms on', () => {
  const { kernel, transport, log } = link('5 ms');
  emitAt(kernel, transport, ms('10 ms'), 1, Phase.TransferCompletion);
  for (const at of ['5 ms', '14.999 ms', '14.999999 ms', '15 ms', '50 ms']) probeAt(kernel, log, ms(at));
  kernel.run();
  assert.deepEqual(log, [
    'arrival at 5000000 saw 0',
    'arrival at 14999000 saw 0',
    'arrival at 14999999 saw 0',
    'worker 1 batch at 15000000',
    'arrival at 15000000 saw 1',
    'arrival at 50000000 saw 1',
  ]);
  assert.deepEqual(
    transport.delivered.map((d) => [d.batch.emitted_ns, d.visible_ns]),
    [[10_000_000, 15_000_000]],
  );
});

test('batches arrive in the order they were emitted, not by worker id', () => {
  const { kernel, transport, log } = link('2.5 ms');
  kernel.at(ms('10 ms'), Phase.PassCompletion, 0, () => {
    transport.emit(emptyBatch(3, kernel.now));
    transport.emit(emptyBatch(1, kernel.now));
  });
  emitAt(kernel, transport, ms('10.5 ms'), 2);
  emitAt(kernel, transport, ms('11 ms'), 0);
  kernel.run();
  assert.deepEqual(log, [
    'worker 3 batch at 12500000',
    'worker 1 batch at 12500000',
    'worker 2 batch at 13000000',
    'worker 0 batch at 13500000',
  ]);
});

test('with lag 0 a batch emitted by a pass is applied before the arrivals of that instant', () => {
  const { kernel, transport, log } = link('0 ms');
  probeAt(kernel, log, ms('10 ms'));
  emitAt(kernel, transport, ms('10 ms'), 1, Phase.PassCompletion);
  emitAt(kernel, transport, ms('10 ms'), 2, Phase.TransferCompletion);
  kernel.run();
  assert.deepEqual(log, ['worker 2 batch at 10000000', 'worker 1 batch at 10000000', 'arrival at 10000000 saw 2']);
});

test('a batch must be emitted at the instant it is stamped with', () => {
  const { kernel, transport } = link('1 ms');
  kernel.at(ms('3 ms'), Phase.PassCompletion, 0, () => {
    assert.throws(() => transport.emit(emptyBatch(1, ms('2 ms'))), (error: unknown) => {
      assert.ok(error instanceof InvariantError);
      assert.match(error.message, /batch from worker 1 stamped 2 ms emitted at 3 ms/);
      return true;
    });
  });
  kernel.run();
  assert.equal(kernel.eventsProcessed, 1);
});

test('the lag must be a non-negative whole number of nanoseconds', () => {
  const kernel = new Kernel();
  for (const lag of [-1, 0.5, Number.NaN]) {
    assert.throws(() => new EventTransport(kernel, lag, () => {}), { name: 'RangeError', message: `kv_event_lag ${lag} ns must be a non-negative integer` });
  }
});

test('every delivered batch is counted; without history none is kept, with history each one is', () => {
  for (const keepHistory of [false, true]) {
    const kernel = new Kernel();
    const seen: number[] = [];
    const transport = new EventTransport(kernel, ms('1 ms'), (batch) => seen.push(batch.worker_id), keepHistory);
    emitAt(kernel, transport, ms('2 ms'), 4);
    emitAt(kernel, transport, ms('3 ms'), 5);
    assert.equal(transport.deliveredBatches, 0, 'nothing is delivered before the run');
    kernel.run();
    assert.deepEqual(seen, [4, 5]);
    assert.equal(transport.deliveredBatches, 2);
    assert.deepEqual(
      transport.delivered.map((d) => [d.batch.worker_id, d.visible_ns]),
      keepHistory ? [[4, 3_000_000], [5, 4_000_000]] : [],
    );
  }
});
