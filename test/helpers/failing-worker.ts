// A worker thread that cannot do its job: it answers `init` the way ours does when the database
// refuses it. Used to show that `serve` then fails to start instead of hanging.
declare const self: Worker;
self.addEventListener('message', (event: MessageEvent<{ type: string }>) => {
  if (event.data.type === 'init') self.postMessage({ type: 'failed', error: 'relation "instances" does not exist' });
});
export {};
