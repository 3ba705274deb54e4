// How the worker's loops wait for work (src/lib/waker.ts): a wake-up ends a wait at once, one that
// comes while nobody waits is not lost, and a stop ends every wait for good; an idle loop looks less
// and less often.
import { expect, test } from 'bun:test';
import { createWaker } from '../../src/lib/waker.ts';
import { runTicketLoop } from '../../src/modules/tickets/queue/loop.ts';
import { createLogger } from '../../src/lib/log.ts';

// Waits far longer than the test's own timeout: only a wake-up or a stop can end them.
const FOREVER = 10 * 60_000;

test('a wake-up ends a wait at once', async () => {
  const waker = createWaker();
  const waiting = waker.idle(FOREVER);
  waker.wake();
  await waiting;
});

test('a wake-up while nobody waits makes the next wait return at once, and only the next', async () => {
  const waker = createWaker();
  waker.wake();
  await waker.idle(FOREVER);
  let second = false;
  const waiting = waker.idle(FOREVER).then(() => (second = true));
  await Bun.sleep(20);
  expect(second).toBe(false);
  waker.wake();
  await waiting;
});

test('a stop ends every wait, now and later', async () => {
  const waker = createWaker();
  const waits = [waker.idle(FOREVER), waker.idle(FOREVER)];
  waker.stop();
  await Promise.all(waits);
  await waker.idle(FOREVER);
});

test('an idle loop looks again after 1 s, then less and less often up to 5 s; work found brings it back to 1 s', async () => {
  const waits: number[] = [];
  // The queue is empty for five looks, holds an event the sixth time (read as a bad event: its
  // outcome is recorded), then is empty again.
  let looks = 0;
  const units = {
    run: async (name: string) => {
      if (name === 'tickets.claim')
        return ++looks === 6
          ? { events: [{ id: 'tev_1', orgId: 'org_1', platform: 'zendesk', payload: 'not json', attempts: 1 }], nextDueMs: null }
          : { events: [], nextDueMs: null };
      if (name === 'tickets.apply') return { dead: 0, linked: 0, ms: 1 };
      return {};
    },
  };
  await runTicketLoop({
    units: units as never,
    owner: 'ins_test',
    log: createLogger('silent'),
    isStopping: () => waits.length >= 7,
    idle: async (ms) => void waits.push(ms),
  });
  expect(waits).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, 1_000, 2_000]);
});

test('an idle ticket loop with a retry coming due looks again then, within its back-off', async () => {
  const waits: number[] = [];
  const units = { run: async (name: string) => (name === 'tickets.claim' ? { events: [], nextDueMs: 1_500 } : {}) };
  await runTicketLoop({
    units: units as never,
    owner: 'ins_test',
    log: createLogger('silent'),
    isStopping: () => waits.length >= 4,
    idle: async (ms) => void waits.push(ms),
  });
  expect(waits).toEqual([1_000, 1_500, 1_500, 1_500]);
});

test('a batch that linked tickets to customers wakes the job loop (their rescores and signals may have queued jobs)', async () => {
  const linkedPerApply = [1, 0];
  let claims = 0;
  let jobWakes = 0;
  const units = {
    run: async (name: string) => {
      if (name === 'tickets.claim')
        return ++claims <= 2
          ? { events: [{ id: `tev_${claims}`, orgId: 'org_1', platform: 'zendesk', payload: 'not json', attempts: 1 }], nextDueMs: null }
          : { events: [], nextDueMs: null };
      if (name === 'tickets.apply') return { dead: 0, linked: linkedPerApply.shift() ?? 0, ms: 1 };
      return {};
    },
  };
  let idles = 0;
  await runTicketLoop({
    units: units as never,
    owner: 'ins_test',
    log: createLogger('silent'),
    isStopping: () => idles > 0,
    idle: async () => void idles++,
    jobsQueued: () => void jobWakes++,
  });
  expect(jobWakes).toBe(1);
});
