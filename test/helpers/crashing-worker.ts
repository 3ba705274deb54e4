// A worker thread that starts, beats once, then dies of an uncaught error — as a bug in a job would
// kill it. Used to show that the supervisor replaces it.
declare const self: Worker;
self.addEventListener('message', (event: MessageEvent<{ type: string }>) => {
  if (event.data.type !== 'init') return;
  self.postMessage({ type: 'ready' });
  setTimeout(() => {
    throw new Error('a job went wrong');
  }, 50);
});
export {};
