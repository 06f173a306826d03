// Unit tests of the event kernel (TIME-3): phase order within an instant, stable ties, the
// same-instant fixed point, refusal to schedule in the past, and run limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvariantError, Kernel, Phase, UnsettledError } from '../../src/kernel';
import { LAST_VIRTUAL_NS, VirtualClockError } from '../../src/time';

const ALL_PHASES_REVERSED = [Phase.PassStart, Phase.Dispatch, Phase.Arrival, Phase.EventVisibility, Phase.PassCompletion, Phase.TransferCompletion];

test('the phases of one instant run in TIME-3 order whatever order they were scheduled in', () => {
  const kernel = new Kernel();
  const ran: Phase[] = [];
  for (const phase of ALL_PHASES_REVERSED) kernel.at(10, phase, 0, () => ran.push(phase));
  kernel.run();
  assert.deepEqual(ran, [
    Phase.TransferCompletion,
    Phase.PassCompletion,
    Phase.EventVisibility,
    Phase.Arrival,
    Phase.Dispatch,
    Phase.PassStart,
  ]);
});

test('earlier instants run first, even when scheduled after later ones', () => {
  const kernel = new Kernel();
  const ran: string[] = [];
  kernel.at(20, Phase.TransferCompletion, 0, () => ran.push('20 transfer'));
  kernel.at(10, Phase.PassStart, 0, () => ran.push('10 pass start'));
  kernel.at(15, Phase.Arrival, 0, () => ran.push('15 arrival'));
  kernel.run();
  assert.deepEqual(ran, ['10 pass start', '15 arrival', '20 transfer']);
});

test('inside a phase, ties break by the order key, then by scheduling order', () => {
  const kernel = new Kernel();
  const ran: string[] = [];
  kernel.at(5, Phase.Arrival, 3, () => ran.push('order 3'));
  kernel.at(5, Phase.Arrival, 1, () => ran.push('order 1, first scheduled'));
  kernel.at(5, Phase.Arrival, -1, () => ran.push('order -1'));
  kernel.at(5, Phase.Arrival, 2, () => ran.push('order 2'));
  kernel.at(5, Phase.Arrival, 1, () => ran.push('order 1, second scheduled'));
  kernel.run();
  assert.deepEqual(ran, ['order -1', 'order 1, first scheduled', 'order 1, second scheduled', 'order 2', 'order 3']);
});

test('an action that schedules an earlier phase at the same instant sees it run before later phases', () => {
  const kernel = new Kernel();
  const ran: string[] = [];
  kernel.at(7, Phase.Dispatch, 0, () => ran.push('dispatch'));
  kernel.at(7, Phase.Arrival, 0, () => {
    ran.push('arrival');
    kernel.at(7, Phase.PassCompletion, 0, () => {
      ran.push('pass completion');
      kernel.at(7, Phase.EventVisibility, 0, () => ran.push('event visibility'));
    });
  });
  kernel.at(8, Phase.TransferCompletion, 0, () => ran.push('next instant'));
  kernel.run();
  assert.deepEqual(ran, ['arrival', 'pass completion', 'event visibility', 'dispatch', 'next instant']);
});

test('the clock reads the instant of the action being run', () => {
  const kernel = new Kernel();
  const seen: number[] = [];
  kernel.at(3_000_000, Phase.Arrival, 0, () => seen.push(kernel.now));
  kernel.at(14_999_000, Phase.Arrival, 0, () => seen.push(kernel.now));
  assert.equal(kernel.now, 0);
  kernel.run();
  assert.deepEqual(seen, [3_000_000, 14_999_000]);
  assert.equal(kernel.now, 14_999_000);
  assert.equal(kernel.eventsProcessed, 2);
});

test('scheduling before the clock throws InvariantError, from outside or inside an action', () => {
  const kernel = new Kernel();
  kernel.at(10_000_000, Phase.Arrival, 0, () => {
    assert.throws(() => kernel.at(9_999_999, Phase.TransferCompletion, 0, () => {}), InvariantError);
  });
  kernel.run();
  assert.throws(
    () => kernel.at(5_000_000, Phase.Arrival, 0, () => {}),
    (error: unknown) =>
      error instanceof InvariantError &&
      error.message === 'cannot schedule arrival at 5 ms: the clock is already at 10 ms',
  );
  assert.doesNotThrow(() => kernel.at(10_000_000, Phase.PassStart, 0, () => {}));
});

test('a time that is not whole nanoseconds is refused', () => {
  const kernel = new Kernel();
  assert.throws(() => kernel.at(1.5, Phase.Arrival, 0, () => {}), InvariantError);
  assert.throws(() => kernel.at(Number.NaN, Phase.Arrival, 0, () => {}), InvariantError);
  assert.equal(kernel.pending, 0);
});

test('an instant past the end of the virtual clock is the input\'s doing: a VirtualClockError naming the event and when, not an invariant', () => {
  const kernel = new Kernel();
  const pastTheEnd = (error: unknown) =>
    error instanceof VirtualClockError && !(error instanceof InvariantError) && /past the end of the virtual clock \(about 104\.2 days of virtual time\): the pass completion due at 105\.2 days; shorten/.test(error.message);
  assert.throws(() => kernel.at(9_092_700_000_000_000, Phase.PassCompletion, 0, () => {}), pastTheEnd);
  assert.throws(() => kernel.at(Number.POSITIVE_INFINITY, Phase.Arrival, 0, () => {}), (error: unknown) => error instanceof VirtualClockError && /the arrival due at an infinite time/.test(error.message));
  assert.doesNotThrow(() => kernel.at(LAST_VIRTUAL_NS, Phase.Arrival, 0, () => {}), 'the last instant itself is on the clock');
  assert.equal(kernel.pending, 1);
});

test('run(limit) runs everything due at or before the limit and leaves the rest queued', () => {
  const kernel = new Kernel();
  const ran: number[] = [];
  for (const time of [15, 5, 10, 11]) kernel.at(time, Phase.Arrival, 0, () => ran.push(time));
  kernel.run(10);
  assert.deepEqual(ran, [5, 10]);
  assert.equal(kernel.now, 10);
  assert.equal(kernel.pending, 2);
  assert.equal(kernel.nextTime(), 11);
  kernel.run();
  assert.deepEqual(ran, [5, 10, 11, 15]);
  assert.equal(kernel.pending, 0);
  assert.equal(kernel.nextTime(), undefined);
  assert.equal(kernel.eventsProcessed, 4);
});

test('an action scheduled at the limit by an action at the limit still runs in that call', () => {
  const kernel = new Kernel();
  const ran: string[] = [];
  kernel.at(10, Phase.Arrival, 0, () => {
    ran.push('arrival');
    kernel.at(10, Phase.PassStart, 0, () => ran.push('pass start'));
    kernel.at(11, Phase.TransferCompletion, 0, () => ran.push('after the limit'));
  });
  kernel.run(10);
  assert.deepEqual(ran, ['arrival', 'pass start']);
  assert.equal(kernel.pending, 1);
});

test('many entries drain in (time, phase, order) order', () => {
  const kernel = new Kernel();
  const ran: [number, number, number][] = [];
  // A fixed scramble of 6 times × 6 phases × 3 orders: i × 7 mod 108 visits each slot once.
  for (let i = 0; i < 108; i++) {
    const slot = (i * 7) % 108;
    const time = Math.floor(slot / 18);
    const phase = (Math.floor(slot / 3) % 6) + 1;
    const order = slot % 3;
    kernel.at(time, phase, order, () => ran.push([time, phase, order]));
  }
  kernel.run();
  assert.equal(ran.length, 108);
  for (let slot = 0; slot < 108; slot++) {
    assert.deepEqual(ran[slot], [Math.floor(slot / 18), (Math.floor(slot / 3) % 6) + 1, slot % 3]);
  }
});

test('thousands of entries with many ties, some added while draining, run in (time, phase, order, seq) order', () => {
  const kernel = new Kernel();
  type Key = [time: number, phase: number, order: number, seq: number];
  const ran: Key[] = [];
  let seq = 0;
  // A fixed pseudo-random walk (LCG) over few times, phases and orders, so ties are common.
  let state = 12345;
  const draw = (bound: number): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 16) % bound;
  };
  const schedule = (time: number, phase: Phase, order: number): void => {
    const key: Key = [time, phase, order, seq++];
    kernel.at(time, phase, order, () => {
      ran.push(key);
      // Every third action adds a later entry: same instant in a later phase, or a later instant.
      if (key[3] % 3 === 0 && seq < 6000) {
        if (phase < Phase.PassStart) schedule(time, phase + 1, draw(4));
        else schedule(time + 1 + draw(3), 1 + draw(6), draw(4));
      }
    });
  };
  for (let i = 0; i < 4000; i++) schedule(draw(50), 1 + draw(6), draw(4));
  kernel.run();
  assert.equal(ran.length, seq);
  assert.ok(ran.length > 4000);
  const sorted = [...ran].sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
  assert.deepEqual(ran, sorted);
});

test('a phase outside TIME-3 is refused', () => {
  const kernel = new Kernel();
  for (const phase of [0, 7, 2.5]) assert.throws(() => kernel.at(0, phase as Phase, 0, () => {}), /is not a phase of TIME-3/);
});

test('a cancelled action neither runs nor moves the clock; cancelling an action never scheduled throws', () => {
  const kernel = new Kernel();
  const ran: string[] = [];
  kernel.at(5, Phase.Arrival, 0, () => ran.push('kept'));
  const late = kernel.at(50, Phase.Arrival, 0, () => ran.push('cancelled'));
  assert.equal(kernel.pending, 2);
  kernel.cancel(late);
  assert.equal(kernel.pending, 1);
  assert.equal(kernel.nextTime(), 5);
  kernel.run();
  assert.deepEqual(ran, ['kept']);
  assert.equal(kernel.now, 5, 'the cancelled action at 50 ns did not move the clock');
  assert.equal(kernel.eventsProcessed, 1);
  assert.throws(() => kernel.cancel(99), InvariantError);
});

test('arrivals and the other phases run in one order; a cancelled arrival ahead of the others is skipped', () => {
  const kernel = new Kernel();
  const ran: string[] = [];
  const early = kernel.at(1, Phase.Arrival, 0, () => ran.push('cancelled arrival'));
  kernel.at(2, Phase.Dispatch, 0, () => ran.push('2 dispatch'));
  kernel.at(2, Phase.Arrival, 1, () => ran.push('2 arrival'));
  kernel.at(2, Phase.EventVisibility, 0, () => ran.push('2 visibility'));
  kernel.at(3, Phase.Arrival, 0, () => ran.push('3 arrival'));
  assert.equal(kernel.pending, 5);
  kernel.cancel(early);
  assert.equal(kernel.pending, 4);
  assert.equal(kernel.nextTime(), 2);
  kernel.run(2);
  assert.deepEqual(ran, ['2 visibility', '2 arrival', '2 dispatch']);
  assert.equal(kernel.pending, 1);
  kernel.run();
  assert.deepEqual(ran.slice(3), ['3 arrival']);
  assert.equal(kernel.nextTime(), undefined);
});

test('ranBefore compares (time, phase, order) with the action running now', () => {
  const kernel = new Kernel();
  const answers: boolean[] = [];
  kernel.at(10, Phase.Arrival, 3, () => {
    answers.push(kernel.ranBefore(9, Phase.PassStart, 9)); // earlier instant
    answers.push(kernel.ranBefore(10, Phase.PassCompletion, 9)); // earlier phase
    answers.push(kernel.ranBefore(10, Phase.Arrival, 2)); // same phase, lower order
    answers.push(kernel.ranBefore(10, Phase.Arrival, 4)); // same phase, higher order
    answers.push(kernel.ranBefore(10, Phase.PassStart, 0)); // later phase
    answers.push(kernel.ranBefore(11, Phase.TransferCompletion, 0)); // later instant
  });
  kernel.run();
  assert.deepEqual(answers, [true, true, true, false, false, false]);
  assert.deepEqual([kernel.phase, kernel.order], [Phase.Arrival, 3]);
});

test('ranBefore counts what ran earlier in the instant when an action comes back to an earlier phase', () => {
  // At 10: a pass start (phase 6, order 2) schedules an arrival into phase 4 of the same instant.
  // By then the queue has given out (10, pass start, 2): a pass start of order 1 or 2, queued since
  // before the instant, would have run before the arrival; one of order 3 would not.
  const kernel = new Kernel();
  const answers: boolean[] = [];
  kernel.at(10, Phase.PassStart, 2, () =>
    kernel.at(10, Phase.Arrival, 7, () => {
      answers.push(kernel.ranBefore(10, Phase.PassStart, 1)); // below the greatest key that ran
      answers.push(kernel.ranBefore(10, Phase.PassStart, 2)); // the greatest key that ran
      answers.push(kernel.ranBefore(10, Phase.PassStart, 3)); // above it
      answers.push(kernel.ranBefore(10, Phase.Dispatch, 99)); // a phase below it
      answers.push(kernel.ranBefore(10, Phase.Arrival, 8)); // after the action running now, below the mark
    }),
  );
  kernel.at(11, Phase.Arrival, 0, () => answers.push(kernel.ranBefore(11, Phase.PassStart, 0))); // a new instant starts with no mark
  kernel.run();
  assert.deepEqual(answers, [true, true, false, true, true, false]);
});

test('the mark of an instant is the greatest key that ran in it, not the last, and the first action of a run has none', () => {
  const kernel = new Kernel();
  const answers: boolean[] = [];
  kernel.at(0, Phase.TransferCompletion, 0, () => {
    answers.push(kernel.ranBefore(0, Phase.Arrival, 0)); // nothing ran before the first action
    answers.push(kernel.ranBefore(0, Phase.TransferCompletion, 0)); // its own key counts as after
  });
  kernel.at(10, Phase.PassStart, 2, () =>
    kernel.at(10, Phase.Arrival, 7, () =>
      kernel.at(10, Phase.Arrival, 8, () => {
        // (10, pass start, 2) then (10, arrival, 7) ran: the mark stays at the pass start.
        answers.push(kernel.ranBefore(10, Phase.PassStart, 2));
        answers.push(kernel.ranBefore(10, Phase.PassStart, 3));
      }),
    ),
  );
  kernel.at(20, Phase.PassStart, 1, () => kernel.at(20, Phase.PassStart, 3, () => kernel.at(20, Phase.Arrival, 0, () => answers.push(kernel.ranBefore(20, Phase.PassStart, 2)))));
  // A lower order of the same phase running after a higher one leaves the mark at the higher.
  kernel.at(30, Phase.PassStart, 3, () => kernel.at(30, Phase.PassStart, 1, () => kernel.at(30, Phase.Arrival, 0, () => answers.push(kernel.ranBefore(30, Phase.PassStart, 2)))));
  kernel.run();
  assert.deepEqual(answers, [false, false, true, false, true, true]);
});

test('a run past its event budget stops with an UnsettledError (an InvariantError) saying how many events ran, by when, and how many are queued', () => {
  const kernel = new Kernel();
  // An action that always schedules itself and a second one 1.5 µs later: the run never ends.
  const again = (): void => {
    kernel.at(kernel.now + 1_500, Phase.PassStart, 0, again);
  };
  kernel.at(0, Phase.PassStart, 0, again);
  kernel.at(1, Phase.Arrival, 0, () => undefined);
  let stopped: unknown = null;
  try {
    kernel.run(Number.MAX_SAFE_INTEGER, 4);
  } catch (error) {
    stopped = error;
  }
  assert.ok(stopped instanceof UnsettledError && stopped instanceof InvariantError);
  assert.equal(stopped.events, 4);
  assert.equal(stopped.now_ns, 3_000);
  assert.equal(stopped.queued, 1);
  assert.equal(stopped.message, 'the simulation did not settle: 4 kernel events processed by 0.003 ms and 1 still queued (a livelock?)');
});

test('onTick is called after every 65,536th action, and never when none is set', () => {
  const kernel = new Kernel();
  let left = 2 * 65_536 + 5;
  const times: number[] = [];
  const step = (): void => {
    if (--left > 0) kernel.at(kernel.now + 1, Phase.PassStart, 0, step);
  };
  kernel.at(0, Phase.PassStart, 0, step);
  kernel.onTick = () => times.push(kernel.now);
  kernel.run();
  assert.deepEqual(times, [65_535, 131_071]);
  // Without one, the 65,536th action passes as any other.
  const quiet = new Kernel();
  let quietLeft = 65_536 + 1;
  const quietStep = (): void => {
    if (--quietLeft > 0) quiet.at(quiet.now + 1, Phase.PassStart, 0, quietStep);
  };
  quiet.at(0, Phase.PassStart, 0, quietStep);
  quiet.run();
  assert.equal(quiet.eventsProcessed, 65_537);
});
