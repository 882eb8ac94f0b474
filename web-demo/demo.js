// Baton demo: three resources elected across the tabs of this browser, shown live.
//   websocket-owner  its leader holds the one WebSocket to /ws (echo, round-trip shown)
//   sse-relay        its leader opens the one SSE stream /stream and relays it (createRelay)
//   token-refresh    its leader refreshes a token through POST /fenced, guarded by its epoch
// and, in the panel "Talking to the leader": commands any tab sends through the leader's
// WebSocket (commands.js), and an offline queue flushed by one leader, fenced in IndexedDB
// and on the server (offline-queue.js).
//
// Query parameters (all optional; the end-to-end tests use small timings):
//   ns            namespace (default 'demo'): tabs of one namespace elect together
//   id            this tab's id (default tab-xxxx)
//   heartbeatMs, suspectMs, leaseMs   election timings (default: createBaton's)
//   silenceMs     relay: a leader whose stream says nothing this long steps down
//   interval      SSE event interval, ms (default 1000)
//   refreshMs     token refresh period (default 4000); prepareMs: time to "mint" one (300)
//   authority     auto | web-locks | lease | broadcast (forced fallback)
//   remove        locks and/or indexeddb (comma-separated): delete the API before loading
//   blockStorage  1: localStorage and indexedDB.open throw, as with site data blocked
//   swallowFreeze 1: the `freeze` event never reaches Baton (a tab frozen without warning)
//   stepMs        offline queue: pause after marking a batch and after sending it (1500)
//
// Everything the tests read is on window.__demo (snapshot() gives it in one call).

const params = new URLSearchParams(location.search);
const num = (key, fallback) => {
  const value = Number(params.get(key));
  return params.has(key) && Number.isFinite(value) && value > 0 ? value : fallback;
};
const ns = params.get('ns') || 'demo';
const myId = params.get('id') || `${nextTabName(ns)}-${Math.random().toString(16).slice(2, 6)}`;
// Election timings not given stay undefined: createBaton's defaults.
const heartbeatMs = num('heartbeatMs');
const suspectMs = num('suspectMs');
const leaseMs = num('leaseMs');
const silenceMs = num('silenceMs', 10000);
const interval = num('interval', 1000);
const refreshMs = num('refreshMs', 4000);
const prepareMs = num('prepareMs', 300);
const authority = params.get('authority') || 'auto';
const stepMs = num('stepMs', 1500);
const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Tabs are named A, B, C... in the order they open (a counter in localStorage; Z is followed
 * by A2). The name is the start of the tab's id, so every tab reads every other tab's name
 * (and colour, and home resource) from its id alone. Ids without a name (the tests' t1, t2)
 * keep a hashed colour and have no home resource.
 */
function nextTabName(namespace) {
  let n = Math.floor(Math.random() * 26);
  try {
    const key = `baton-demo/${namespace}/tabs-opened`;
    n = Number(localStorage.getItem(key)) || 0;
    localStorage.setItem(key, String(n + 1));
  } catch {
    // Storage blocked: a random letter.
  }
  return `${String.fromCharCode(65 + (n % 26))}${n >= 26 ? Math.floor(n / 26) + 1 : ''}`;
}

// --------------------------------------------------------------- environment restrictions
// Applied before the package loads, so that it sees the browser as restricted.
const removed = (params.get('remove') || '').toLowerCase().split(',').filter(Boolean);
if (removed.includes('locks')) {
  Object.defineProperty(Navigator.prototype, 'locks', { configurable: true, get: () => undefined });
}
if (removed.includes('indexeddb')) {
  Object.defineProperty(window, 'indexedDB', { configurable: true, get: () => undefined });
}
if (params.get('blockStorage') === '1') {
  const blocked = () => {
    throw new DOMException('Access is denied for this document (site data blocked).', 'SecurityError');
  };
  Object.defineProperty(window, 'localStorage', { configurable: true, get: blocked });
  if (typeof IDBFactory === 'function') {
    IDBFactory.prototype.open = blocked;
    IDBFactory.prototype.deleteDatabase = blocked;
  }
}

// Lifecycle as this page sees it (before Baton, to see the events first).
let lifecycle = document.visibilityState === 'hidden' ? 'hidden' : 'visible';
let simulatedFreeze = false;
const notes = [];
const note = (text, kind = 'note') => {
  notes.push({ at: wallNow(), text, kind });
  if (notes.length > 200) notes.splice(0, notes.length - 200);
};
document.addEventListener('visibilitychange', () => {
  lifecycle = document.visibilityState === 'hidden' ? 'hidden' : 'visible';
  note(`page ${lifecycle}`, 'life');
  scheduleRender();
});
window.addEventListener(
  'freeze',
  (event) => {
    lifecycle = 'frozen';
    note('page frozen', 'life');
    if (params.get('swallowFreeze') === '1') event.stopPropagation(); // Baton never hears it
  },
  { capture: true },
);
document.addEventListener('resume', () => {
  lifecycle = 'restored';
  note('page resumed (thawed)', 'life');
});

// --------------------------------------------------------------- state for the page and the tests

const RESOURCES = ['websocket-owner', 'sse-relay', 'token-refresh'];
const feed = { ids: [], epochs: [], froms: [], at: [], missed: 0, duplicates: 0, last: null, resets: 0 };
const ws = { state: 'closed', sent: 0, echoed: 0, rttMs: null, opens: 0 };
const fenced = [];
const electedAt = {};
const elections = []; // every term of this tab: {resource, epoch, at, reason}
const deposedAt = {};
let refreshNow = null; // set while this tab leads token-refresh
let baton = null;
let relay = null;
const handles = {};

function showError(error) {
  const box = document.getElementById('error');
  box.hidden = false;
  box.textContent = `Error: ${error && error.message ? error.message : error}`;
  console.error(error);
}

let pkg;
try {
  pkg = await import('/tab-baton/index.js');
} catch (error) {
  showError(`could not load /tab-baton/index.js (${error.message}). Build the package first.`);
  throw error;
}
const { createBaton, createRelay, eventSourceSource, enableTestHooks } = pkg;
const { createCommands } = await import('/web-demo/commands.js');
const { createOfflineQueue } = await import('/web-demo/offline-queue.js');
enableTestHooks(); // the end-to-end tests drive the demo through globalThis.__baton

try {
  baton = createBaton({
    namespace: ns,
    id: myId,
    appVersion: '1.0.0',
    capabilities: ['ws.owner.v1'],
    heartbeatMs,
    suspectMs,
    leaseMs,
    authority,
    testHooks: true,
  });
} catch (error) {
  showError(error);
  throw error;
}

function watch(resource, handle) {
  handles[resource] = handle;
  handle.onChange((change) => {
    if (change.type === 'elected') {
      electedAt[resource] = wallNow();
      elections.push({ resource, epoch: change.token.epoch, at: electedAt[resource], reason: change.reason });
      note(`${resource}: this tab leads (epoch ${change.token.epoch}, ${change.reason})`, 'lead');
      lastReason[resource] ??= change.reason;
    } else if (change.type === 'deposed') {
      deposedAt[resource] = wallNow();
      lastReason[resource] ??= `${shortName(myId)} stepped down: ${change.reason}`;
      note(`${resource}: this tab stepped down (${change.reason})`, 'down');
    } else if (change.type === 'leader-changed' && !(change.leader && change.leader.isMe)) {
      note(change.leader ? `${resource}: ${change.leader.id} leads (epoch ${change.leader.epoch})` : `${resource}: no leader (it left)`, change.leader ? 'tr' : 'down');
    }
    scheduleRender(); // not render(): this runs inside Baton's callbacks (a lock grant, pagehide)
  });
}

// websocket-owner: the leader holds one WebSocket and pings through it every second; any
// tab's command goes through it (commands.js: accept and serve answer baton.request).
const commands = createCommands({ baton, myId, changed: () => scheduleRender() });
watch(
  'websocket-owner',
  baton.lead('websocket-owner', {
    eligible: { capability: 'ws.owner.v1' },
    preferVisible: true,
    accept: commands.accept,
    serve: commands.serve,
    run(token, signal) {
      let socket = null;
      let pinger = null;
      let retry = null;
      const connect = () => {
        if (signal.aborted) return;
        socket = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/ws`);
        ws.state = 'connecting';
        socket.onopen = () => {
          ws.state = 'open';
          ws.opens += 1;
          commands.useSocket(socket);
          note(`websocket-owner: WebSocket open (epoch ${token.epoch})`, 'io');
        };
        socket.onmessage = (event) => {
          try {
            const echo = JSON.parse(event.data);
            if (commands.onSocketMessage(echo)) return;
            ws.echoed += 1;
            ws.rttMs = Math.round((performance.now() - echo.t) * 10) / 10;
          } catch {
            // Not ours.
          }
        };
        socket.onclose = () => {
          ws.state = 'closed';
          commands.useSocket(null);
          if (!signal.aborted) retry = setTimeout(connect, 1000);
        };
      };
      connect();
      pinger = setInterval(() => {
        if (socket && socket.readyState === WebSocket.OPEN) {
          socket.send(JSON.stringify({ t: performance.now(), from: myId, epoch: token.epoch }));
          ws.sent += 1;
        }
      }, 1000);
      signal.addEventListener('abort', () => {
        clearInterval(pinger);
        clearTimeout(retry);
        if (socket) {
          socket.onclose = null;
          socket.close();
        }
        commands.useSocket(null);
        ws.state = 'closed';
        note('websocket-owner: WebSocket closed (term ended)', 'io');
      });
    },
  }),
);

// sse-relay: one EventSource in the leader, relayed to every tab.
function startRelay() {
  relay = createRelay(baton, {
    resource: 'sse-relay',
    preferVisible: true,
    silenceMs,
    source: eventSourceSource((after) => `/stream?interval=${interval}${after === null ? '' : `&after=${after}`}`, {
      parse: (event) => JSON.parse(event.data),
    }),
    onEvent(event) {
      if (feed.last !== null) {
        if (event.id <= feed.last) feed.duplicates += 1;
        else if (event.id > feed.last + 1) feed.missed += event.id - feed.last - 1;
      }
      feed.last = feed.last === null ? event.id : Math.max(feed.last, event.id);
      feed.ids.push(event.id);
      feed.epochs.push(event.epoch);
      feed.froms.push(event.from);
      feed.at.push(wallNow());
      scheduleRender();
    },
    onReset({ reason }) {
      // Logged out or another session: this tab forgets the feed (the counters stay).
      for (const list of [feed.ids, feed.epochs, feed.froms, feed.at]) list.length = 0;
      feed.last = null;
      feed.resets += 1;
      note(`sse-relay: ${reason === 'logout' ? 'logged out: stream closed, cursor cleared' : 'session changed: state cleared'}`, 'down');
      scheduleRender();
    },
  });
  watchRelayHandle();
}
/** The relay's lead handle changes on login (a new term of participation): watch the current one. */
let watchedRelayHandle = null;
function watchRelayHandle() {
  const handle = relay && relay.handle;
  if (handle === watchedRelayHandle) return;
  watchedRelayHandle = handle;
  if (handle) watch('sse-relay', handle);
  else delete handles['sse-relay'];
}
startRelay();
let relayOpensSeen = 0;

// token-refresh: the leader refreshes a token every refreshMs through the fenced endpoint.
watch(
  'token-refresh',
  baton.lead('token-refresh', {
    run(token, signal) {
      let n = 0;
      const refresh = async (why) => {
        n += 1;
        const effect = `refresh #${n} (${why})`;
        // Minting the token at the identity provider takes a moment; a freeze may land here.
        await new Promise((resolve) => setTimeout(resolve, prepareMs));
        // A real app would also check signal.aborted here. The demo does not, so that a write
        // already under way when the tab froze reaches the server: the check and the write are
        // never atomic, and closing that window is the fence's job (the server compares epochs).
        const sentAt = wallNow();
        let status = 0;
        let body = null;
        try {
          const res = await fetch('/fenced', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ resource: `${ns}/token-refresh`, epoch: token.epoch, owner: myId, effect }),
          });
          status = res.status;
          body = await res.json();
        } catch (error) {
          body = { ok: false, error: String(error.message || error) };
        }
        const result = { epoch: token.epoch, effect, status, ok: status === 200, error: body && body.error, highest: body && body.highest, at: sentAt };
        fenced.push(result);
        if (fenced.length > 100) fenced.splice(0, fenced.length - 100);
        note(
          result.ok ? `token-refresh: ${effect} accepted (epoch ${token.epoch})` : `token-refresh: ${effect} REJECTED ${result.error || status} (epoch ${token.epoch} < ${result.highest})`,
          result.ok ? 'io' : 'bad',
        );
        scheduleRender();
      };
      refreshNow = refresh;
      refresh('term start');
      const timer = setInterval(() => {
        if (!signal.aborted) refresh('periodic');
      }, refreshMs);
      signal.addEventListener('abort', () => {
        clearInterval(timer);
        if (refreshNow === refresh) refreshNow = null;
      });
    },
  }),
);

// offline-queue: one leader flushes the queue every tab adds to (needs IndexedDB).
// Not awaited: Baton's callbacks already run, and a module suspended at a top-level await
// would let them reach declarations below that are not initialised yet.
let queue = null;
let queueProblem = null;
createOfflineQueue({ baton, ns, myId, stepMs, note, changed: () => scheduleRender() }).then(
  (created) => {
    queue = created;
    scheduleRender();
  },
  (error) => {
    queueProblem = error.message;
    note(`offline-queue: unavailable here (${error.message})`, 'bad');
    scheduleRender();
  },
);

// --------------------------------------------------------------- spreading the resources

// Each named tab has a home resource (A: websocket-owner, B: sse-relay, C: token-refresh, D:
// websocket-owner...). A tab leading another tab's home resource hands it over (abdicates)
// once that tab is here, so a newcomer sees different leaders per resource at once.
const homeOf = (id) => {
  const index = tabIndex(id);
  return index === null ? null : RESOURCES[index % RESOURCES.length];
};
const handedOver = new Set();
const lastReason = {};
function spreadResources() {
  if (simulatedFreeze) return;
  for (const resource of RESOURCES) {
    const handle = handles[resource];
    if (!handle || handle.state() !== 'leader' || homeOf(myId) === resource) continue;
    const home = baton.presence().find((p) => homeOf(p.id) === resource && p.liveness === 'alive' && p.lifecycle === 'active');
    if (!home || handedOver.has(`${resource}/${home.id}`)) continue;
    handedOver.add(`${resource}/${home.id}`);
    lastReason[resource] = `${shortName(myId)} handed it over: it is ${shortName(home.id)}'s home resource`;
    note(`${resource}: handing over to ${shortName(home.id)}, whose home resource it is`, 'tr');
    handle.abdicate();
  }
}
setInterval(spreadResources, 500);

// --------------------------------------------------------------- the timeline

/** Per resource, who led (as this tab knew it) and from when: the last TIMELINE_MS. */
const TIMELINE_MS = 60000;
const timeline = Object.fromEntries(RESOURCES.map((r) => [r, []]));
function trackLeaders() {
  const now = wallNow();
  const present = new Set(baton.presence().map((p) => p.id));
  for (const resource of RESOURCES) {
    const info = handles[resource]?.leader() ?? null;
    const leader = info ? info.id : null;
    const segments = timeline[resource];
    const last = segments[segments.length - 1];
    if (last && last.leader === leader && last.epoch === (info ? info.epoch : 0)) continue;
    if (last) last.to = now;
    let why = 'between terms';
    if (leader) {
      // The reason this tab knows (its own term, its own hand-over), else what it can see.
      why = lastReason[resource] ?? (!last ? 'first seen' : last.leader && last.leader !== myId && !present.has(last.leader) ? `${shortName(last.leader)} left` : 'took over');
      delete lastReason[resource];
    }
    segments.push({ leader, epoch: info ? info.epoch : 0, from: now, to: null, why });
    while (segments.length > 1 && segments[1].from < now - TIMELINE_MS) segments.shift();
  }
}
setInterval(trackLeaders, 200);

// --------------------------------------------------------------- controls

for (const card of document.querySelectorAll('.resource')) {
  const resource = card.dataset.resource;
  card.querySelector('[data-abdicate]').addEventListener('click', () => handles[resource]?.abdicate());
}
document.getElementById('btn-freeze').addEventListener('click', () => freeze());
document.getElementById('btn-restore').addEventListener('click', () => restore());
document.getElementById('btn-logout').addEventListener('click', () => relay.logout());
document.getElementById('btn-login').addEventListener('click', () => relay.login(`session-${Date.now().toString(36)}`));
let commandSeq = 0;
document.getElementById('btn-command').addEventListener('click', () => commands.send(`hello #${(commandSeq += 1)} from ${shortName(myId)}`));
document.getElementById('btn-enqueue').addEventListener('click', () => queue?.enqueue(5));
for (const button of document.querySelectorAll('[data-authority]')) {
  button.classList.toggle('active', button.dataset.authority === authority);
  button.addEventListener('click', () => {
    const next = new URLSearchParams(location.search);
    if (button.dataset.authority === 'auto') next.delete('authority');
    else next.set('authority', button.dataset.authority);
    next.set('id', myId);
    location.search = next.toString();
  });
}

function freeze() {
  globalThis.__baton?.simulateFreeze();
  simulatedFreeze = true;
  note('simulated freeze (election timer stopped)', 'life');
  render();
}
function restore() {
  globalThis.__baton?.simulateRestore();
  simulatedFreeze = false;
  note('simulated restore', 'life');
  render();
}

// --------------------------------------------------------------- rendering

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Named tabs (A, B, ...) take these in turn: far apart on the colour wheel, then again. */
const PALETTE = [215, 8, 135, 275, 38, 178, 325, 95];
function tabIndex(id) {
  const m = /^([A-Z])(\d*)-/.exec(String(id));
  return m ? m[1].charCodeAt(0) - 65 + 26 * (m[2] ? Number(m[2]) - 1 : 0) : null;
}
function shortName(id) {
  const m = /^([A-Z]\d*)-/.exec(String(id));
  return m ? m[1] : String(id);
}
function hue(id) {
  const index = tabIndex(id);
  if (index !== null) return PALETTE[index % PALETTE.length];
  let h = 0x811c9dc5; // FNV-1a, then spread by the golden angle: t1, t2, t3 get distinct colours
  for (const c of String(id)) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return Math.round((h % 1000) * 137.508) % 360;
}
const colour = (id) => `hsl(${hue(id)} 70% ${tabIndex(id) !== null && tabIndex(id) >= PALETTE.length ? 32 : 45}%)`;
const tabTag = (id) => `<span class="tab-tag" style="--tab:${colour(id)}" title="${escape(id)}"><i></i>${escape(shortName(id))}</span>${id === myId ? ' <em>(this tab)</em>' : ''}`;
const ago = (ms) => (ms < 1000 ? 'now' : ms < 60000 ? `${Math.round(ms / 1000)} s ago` : `${Math.round(ms / 60000)} min ago`);
const pad = (n, w = 2) => String(n).padStart(w, '0');
/** hh:mm:ss.mmm local time (no Intl: formatting must stay cheap, it runs on every render). */
const time = (at) => {
  const d = new Date(at);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(Math.floor(at % 1000), 3)}`;
};

function lifecycleText() {
  return simulatedFreeze ? 'frozen (simulated)' : lifecycle;
}
/** The core says 'active' for a visible tab. */
const lifecycleLabel = (l) => (l === 'active' ? 'visible' : l);

function resourceState(resource) {
  const handle = resource === 'sse-relay' ? relay && relay.handle : handles[resource];
  if (!handle) return { state: 'released', leader: null, leaderEpoch: 0, token: null };
  const leader = handle.leader();
  return { state: handle.state(), token: handle.token(), leader: leader ? leader.id : null, leaderEpoch: leader ? leader.epoch : 0, since: leader ? leader.since : null };
}

function detailOf(resource, s) {
  if (resource === 'websocket-owner') {
    if (s.state !== 'leader') return s.leader ? 'held by the leader' : '—';
    return `${ws.state}${ws.rttMs !== null ? ` · echo ${ws.rttMs} ms` : ''} · ${ws.echoed} echoed`;
  }
  if (resource === 'sse-relay') {
    const st = relay ? relay.stats() : null;
    if (!st || st.state === 'stopped') return 'logged out';
    const open = st.opens[st.opens.length - 1];
    const from = (after) => (after === null || after === undefined ? 'from the head' : `resumed after ${after}`);
    if (s.state === 'leader' && open) return `open, ${from(open.after)} · relayed ${st.relayed}`;
    if (!st.leader) return '—';
    return `relayed by ${escape(st.leader.id)}${st.leader.after === null ? '' : ` (${from(st.leader.after)})`}`;
  }
  const last = fenced[fenced.length - 1];
  if (!last) return s.state === 'leader' ? 'refreshing…' : '—';
  return last.ok
    ? `<span class="ok">accepted</span> · epoch ${last.epoch} · ${ago(wallNow() - last.at)}`
    : `<span class="bad">${escape(last.error || last.status)}</span> · epoch ${last.epoch} < ${last.highest}`;
}

/** Sets innerHTML only when it changed: no style or layout work for an unchanged section. */
const rendered = new WeakMap();
function setHtml(el, html) {
  if (rendered.get(el) === html) return;
  rendered.set(el, html);
  el.innerHTML = html;
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  setTimeout(() => {
    renderQueued = false;
    render();
  }, 150);
}

/** Who led each resource over the last minute, as bars coloured by tab, and the last changes. */
function renderTimeline(now) {
  const start = now - TIMELINE_MS;
  const pct = (t) => `${(((Math.max(t, start) - start) / TIMELINE_MS) * 100).toFixed(2)}%`;
  const rows = RESOURCES.map((resource) => {
    const bars = timeline[resource]
      .filter((seg) => seg.leader && (seg.to ?? now) > start)
      .map((seg) => {
        const to = seg.to ?? now;
        const width = (((to - Math.max(seg.from, start)) / TIMELINE_MS) * 100).toFixed(2);
        return `<span class="seg" style="left:${pct(seg.from)};width:${width}%;--tab:${colour(seg.leader)}" title="${escape(`${shortName(seg.leader)} led from ${time(seg.from)} (epoch ${seg.epoch}): ${seg.why}`)}">${escape(shortName(seg.leader))}</span>`;
      })
      .join('');
    return `<div class="tl-row"><span class="tl-name">${escape(resource)}</span><span class="tl-track">${bars}</span></div>`;
  });
  setHtml(document.getElementById('timeline-rows'), rows.join(''));
  const changes = RESOURCES.flatMap((resource) => timeline[resource].map((seg) => ({ resource, ...seg })))
    .sort((a, b) => b.from - a.from)
    .slice(0, 6);
  setHtml(
    document.getElementById('timeline-changes'),
    changes
      .map((c) => `<li><time>${time(c.from)}</time> <b>${escape(c.resource)}</b> → ${c.leader ? tabTag(c.leader) : '<span class="muted">nobody</span>'}${c.epoch ? ` <span class="muted">epoch ${c.epoch}</span>` : ''}: ${escape(c.why)}</li>`)
      .join(''),
  );
}

/** The panel "Talking to the leader": this tab's commands and the offline queue. */
function renderTalk() {
  const wsLeader = handles['websocket-owner']?.leader();
  setHtml(
    document.getElementById('commands-rows'),
    commands.stats().sent.slice(-5).reverse().map((c) => `<li class="${c.state === 'failed' ? 'bad' : ''}"><code>${escape(c.text)}</code> → ${
      c.state === 'waiting' ? `waiting for ${wsLeader ? tabTag(wsLeader.id) : 'a leader'}…`
        : c.state === 'acked' ? `<span class="ok">acknowledged</span> by the server through ${tabTag(c.by)}'s socket <span class="muted">(epoch ${c.epoch}, ${c.ms} ms)</span>`
          : `<span class="bad">${escape(c.error)}</span>`
    }</li>`).join('') || '<li class="muted">none sent from this tab yet</li>',
  );
  if (!queue) {
    setHtml(document.getElementById('queue-state'), queueProblem ? '<span class="bad">IndexedDB is unavailable in this tab</span>' : 'opening IndexedDB…');
    return;
  }
  const q = queue.stats();
  const leader = queue.handle.leader();
  const stage = { idle: '', marked: ` · <b>batch of ${q.batch.length} in flight</b>, sending…`, sent: ` · <b>batch of ${q.batch.length} sent</b>, deleting it…` }[q.stage];
  setHtml(
    document.getElementById('queue-state'),
    `<b>${q.queued}</b> queued (${q.inFlight} in flight) · flushed by ${leader ? `${tabTag(leader.id)} <span class="muted">epoch ${leader.epoch}</span>` : '<span class="muted">nobody yet</span>'}${stage}`,
  );
  setHtml(
    document.getElementById('queue-counts'),
    `This tab as the flusher: ${q.batches} batches, ${q.applied} operations applied by the server, ${q.repeated} it had already (same id, applied once) · refused: <span class="${q.refusedByServer ? 'bad' : ''}">${q.refusedByServer} by the server</span>, <span class="${q.refusedByIdb ? 'bad' : ''}">${q.refusedByIdb} by IndexedDB</span>`,
  );
}

function render() {
  if (!baton) return;
  watchRelayHandle();
  if (document.visibilityState === 'hidden') return; // nobody sees it; rendered again when visible
  const now = wallNow();
  const metrics = baton.metrics();
  document.getElementById('me-id').textContent = shortName(myId);
  document.getElementById('me-id').title = myId;
  document.getElementById('me-swatch').style.background = colour(myId);
  document.getElementById('me-lifecycle').textContent = lifecycleText();
  document.getElementById('me-mode').textContent = metrics.mode;
  document.getElementById('me-ns').textContent = ns;
  document.getElementById('me-degraded').hidden = !metrics.degraded;
  document.title = `${RESOURCES.some((r) => handles[r]?.state() === 'leader') ? '★ ' : ''}Baton · ${shortName(myId)}`;

  const leads = {};
  for (const resource of RESOURCES) {
    const s = resourceState(resource);
    const card = document.querySelector(`.resource[data-resource="${resource}"]`);
    const isLeader = s.state === 'leader';
    card.classList.toggle('is-leader', isLeader);
    const badge = card.querySelector('[data-badge]');
    badge.textContent = isLeader ? 'LEADER' : s.state;
    badge.className = `badge ${isLeader ? 'leader' : s.state}`;
    setHtml(card.querySelector('[data-leader]'), s.leader ? `${tabTag(s.leader)}${s.since ? ` <span class="muted">· for ${ago(now - s.since).replace(' ago', '')}</span>` : ''}` : '<span class="muted">none yet</span>');
    card.querySelector('[data-epoch]').textContent = s.leaderEpoch ? String(s.leaderEpoch) : '—';
    setHtml(card.querySelector('[data-detail]'), detailOf(resource, s));
    card.querySelector('[data-abdicate]').disabled = !isLeader;
    if (s.leader) (leads[s.leader] ||= []).push(resource);
  }

  // Feed.
  const total = feed.ids.length;
  document.getElementById('feed-delivered').textContent = String(total);
  document.getElementById('feed-missed').textContent = String(feed.missed);
  document.getElementById('feed-duplicates').textContent = String(feed.duplicates);
  document.getElementById('feed-missed-box').className = `counter ${feed.missed ? 'bad' : 'good'}`;
  document.getElementById('feed-dup-box').className = `counter ${feed.duplicates ? 'bad' : 'good'}`;
  document.getElementById('feed-last').textContent = feed.last === null ? '–' : String(feed.last);
  const chips = [];
  for (let i = Math.max(0, total - 24); i < total; i++) {
    const handover = i > 0 && feed.epochs[i] !== feed.epochs[i - 1];
    chips.push(`<li class="${handover ? 'handover' : ''}" style="--tab:${colour(feed.froms[i])}" title="id ${feed.ids[i]}, relayed by ${escape(feed.froms[i])} (epoch ${feed.epochs[i]})">${feed.ids[i]}</li>`);
  }
  setHtml(document.getElementById('feed-chips'), chips.join(''));
  const st = relay.stats();
  setHtml(
    document.getElementById('feed-relay'),
    st.state === 'stopped'
      ? 'Logged out: no stream in any tab. Log in to start again.'
      : `Chips are coloured by the tab that relayed them. The relay dropped ${st.duplicatesDropped} overlapping ${st.duplicatesDropped === 1 ? 'copy' : 'copies'} and ${st.staleDropped} stale; ${st.relayed} relayed from this tab; ${st.sourceOpens} stream ${st.sourceOpens === 1 ? 'open' : 'opens'} here.`,
  );

  // Presence (this tab first).
  const rows = [{ id: myId, lifecycle: lifecycleText(), liveness: 'alive', lastSeen: now, self: true }, ...baton.presence()];
  document.getElementById('presence-count').textContent = `(${rows.length})`;
  setHtml(
    document.getElementById('presence-rows'),
    rows
      .map((p) => {
        const led = leads[p.id] || [];
        return `<tr class="${p.self ? 'self' : ''} liveness-${escape(p.liveness)}"><td>${tabTag(p.id)}</td><td>${escape(lifecycleLabel(p.lifecycle))}</td><td><span class="dot ${escape(p.liveness)}"></span>${escape(p.liveness)}</td><td>${led.map((r) => `<span class="pill">${escape(r)}</span>`).join(' ') || '<span class="muted">—</span>'}</td><td class="muted">${p.self ? 'now' : ago(now - p.lastSeen)}</td></tr>`;
      })
      .join(''),
  );

  renderTimeline(now);
  renderTalk();

  // Log: Baton's transitions and this page's notes, newest first.
  const entries = [
    ...baton.log().map((t) => ({ at: t.at, kind: t.to === 'leader' ? 'lead' : t.from === 'leader' ? 'down' : 'tr', text: `${t.resource}: ${t.from} → ${t.to} (${t.reason}${t.epoch ? `, epoch ${t.epoch}` : ''})` })),
    ...notes,
  ]
    .sort((a, b) => b.at - a.at)
    .slice(0, 40);
  setHtml(document.getElementById('log-rows'), entries.map((e) => `<li class="${e.kind}"><time>${time(e.at)}</time> ${escape(e.text)}</li>`).join(''));

  if (st.opens.length > relayOpensSeen) {
    for (const open of st.opens.slice(relayOpensSeen)) note(`sse-relay: stream opened after ${open.after ?? 'head'} (epoch ${open.epoch})`, 'io');
    relayOpensSeen = st.opens.length;
  }
}

setInterval(render, 500);
render();

// --------------------------------------------------------------- window.__demo (tests)

function snapshot() {
  const resources = {};
  for (const resource of RESOURCES) {
    const s = resourceState(resource);
    resources[resource] = { state: s.state, epoch: s.token ? s.token.epoch : 0, leader: s.leader, leaderEpoch: s.leaderEpoch, electedAt: electedAt[resource] ?? null, deposedAt: deposedAt[resource] ?? null };
  }
  return {
    id: myId,
    ns,
    lifecycle: lifecycleText(),
    visibility: document.visibilityState,
    resources,
    feed: { ids: [...feed.ids], epochs: [...feed.epochs], froms: [...feed.froms], at: [...feed.at], missed: feed.missed, duplicates: feed.duplicates, last: feed.last, resets: feed.resets },
    relay: relay.stats(),
    ws: { ...ws },
    fenced: fenced.map((f) => ({ ...f })),
    commands: commands.stats(),
    queue: queue ? { ...queue.stats(), state: queue.handle.state(), epoch: queue.handle.token()?.epoch ?? 0 } : null,
    elections: elections.map((e) => ({ ...e })),
    metrics: baton.metrics(),
    support: baton.support(),
    presence: baton.presence(),
    log: baton.log(),
  };
}

window.__demo = {
  ready: true,
  id: myId,
  snapshot,
  metrics: () => baton.metrics(),
  support: () => baton.support(),
  presence: () => baton.presence(),
  resources: () => snapshot().resources,
  relayStats: () => relay.stats(),
  /** Starts a token refresh now if this tab leads token-refresh (true), else false. */
  beginRefresh: (why = 'manual') => (refreshNow ? (refreshNow(why), true) : false),
  abdicate: (resource) => handles[resource]?.abdicate(),
  /** Sends a command to the leader of websocket-owner; resolves with {id, state, by, epoch, error}. */
  sendCommand: (text) => commands.send(text),
  /** Adds `n` operations to the offline queue. */
  enqueue: (n) => queue.enqueue(n),
  /** Holds this tab's queue flusher after a step ('marked' | 'sent'), or lets it go on (null). */
  holdQueue: (stage) => queue.hold(stage),
  freeze,
  restore,
  logout: () => relay.logout(),
  login: (session) => relay.login(session),
  render,
};
document.documentElement.dataset.ready = 'true';
