// A shared worker that runs jobs for whichever tab leads and rejects stale owner messages
// with Baton's Fence (seed 000, section 13): each command carries the sender's token; a
// token older than the newest the worker has admitted for its resource gets STALE_OWNER.
// The package is imported dynamically: `connect` must be listened for in the first task,
// and the Fence needs the WebAssembly core loaded (load()).
const fence = import('/tab-baton/index.js').then(async ({ Fence, load }) => {
  await load();
  return new Fence();
});
const done = [];

self.onconnect = (connect) => {
  connect.ports[0].onmessage = async (event) => {
    const { owner, job } = event.data;
    const [reply] = event.ports;
    const f = await fence;
    if (!f.admit(owner)) {
      reply.postMessage({ ok: false, error: 'STALE_OWNER', highest: f.highest(owner.resource), done: [...done] });
      return;
    }
    done.push({ job, epoch: owner.epoch });
    reply.postMessage({ ok: true, done: [...done] });
  };
};
