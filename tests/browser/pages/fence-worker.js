// A shared worker that runs jobs for whichever tab leads and rejects stale owner messages
// with Baton's Fence (seed 000, section 13): each command carries the sender's token; a
// token older than the newest the worker has admitted for its resource gets STALE_OWNER.
// The package is imported dynamically: `connect` must be listened for in the first task,
// and tab-baton's entry awaits its core.
const fence = import('/tab-baton/index.js').then(({ Fence }) => new Fence());
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
