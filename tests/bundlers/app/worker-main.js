// The page of the worker variant: starts the worker the way bundlers recognise.
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = (event) => {
  window.__result = { ...event.data, inWorker: true };
};
