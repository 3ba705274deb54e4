// How the worker's loops wait for work (src/jobs/waker.ts): a wake-up ends a wait at once, one that
// comes while nobody waits is not lost, and a stop ends every wait for good.
import { expect, test } from 'bun:test';
import { createWaker } from '../../src/jobs/waker.ts';

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
