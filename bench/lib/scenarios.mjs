// The measured scenarios. Each returns raw per-trial results; bench/lib/report.mjs summarizes.
import { freezeTab, thawTab } from '../../tests/browser/harness.js';
import { Pool, nodeNow, sleep } from './tabs.mjs';

let nsSeq = 0;
const uniqueNs = (label) => `${label}-${process.pid}-${Date.now().toString(36)}-${(nsSeq += 1)}`;

/**
 * A pool of `tabs` tabs with one settled leader, rebuilt (new tabs, new names) when it cannot
 * settle: a library may keep two leaders (a finding, recorded by the caller) and the next
 * trial must not inherit that.
 */
class Group {
  constructor(bench, subject, label, tabs, settleTimeoutMs, log) {
    Object.assign(this, { bench, subject, label, tabs, settleTimeoutMs, log });
    this.pool = null;
    this.rebuilds = 0;
  }

  async leader() {
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (!this.pool) this.pool = new Pool({ bench: this.bench, subject: this.subject, ns: uniqueNs(`${this.subject.key}-${this.label}`) });
        await this.pool.fill(this.tabs);
        return await this.pool.singleLeader({ timeoutMs: this.settleTimeoutMs });
      } catch (error) {
        this.log?.(`${this.subject.key} ${this.label}: ${error.message}; new tabs`);
        this.unsettled = (this.unsettled || 0) + 1;
        if (/leaders for/.test(error.message)) this.split = (this.split || 0) + 1;
        await this.dispose();
        if (attempt >= 4) throw error;
      }
    }
  }

  async dispose() {
    if (this.pool) await this.pool.dispose();
    this.pool = null;
  }
}

/**
 * Hand-over on graceful close or crash: `tabs` tabs, the leader is closed (page.close with
 * beforeunload: beforeunload, pagehide, unload run) or crashed (CDP Page.crash); measured from
 * the command (this process's clock) and, for close, from the leader's pagehide (page clocks)
 * to the next leader's callback. A new tab replaces the old leader after each trial.
 *
 * The subjects are interleaved: trial i runs in every subject's tabs (in a rotating order)
 * before trial i + 1, and the kinds alternate, so that a change of load on the machine hits
 * every subject alike. Only one trial runs at a time. Returns {[key]: {[kind]: results}}.
 */
export async function handovers(bench, subjects, { kinds, trials, tabs, timeoutMs, settleMs, log }) {
  const groups = subjects.map((s) => new Group(bench, s, kinds.join('+'), tabs, timeoutMs + 5000, log));
  const results = Object.fromEntries(subjects.map((s) => [s.key, Object.fromEntries(kinds.map((k) => [k, []]))]));
  const failed = new Set();
  try {
    for (let i = 0; i < trials * kinds.length; i += 1) {
      const kind = kinds[i % kinds.length];
      const order = groups.map((g, j) => groups[(j + i) % groups.length]);
      for (const group of order) {
        if (failed.has(group)) continue;
        const { subject } = group;
        try {
          const r = await handoverTrial(group, kind, timeoutMs, settleMs);
          r.trial = results[subject.key][kind].length;
          results[subject.key][kind].push(r);
          log?.(`${subject.key} ${kind} #${r.trial + 1}: ${r.fromCommand === null ? 'no new leader' : `${r.fromCommand.toFixed(1)} ms`}${r.fromPagehide != null ? ` (pagehide ${r.fromPagehide.toFixed(1)} ms)` : ''}`);
        } catch (error) {
          failed.add(group);
          for (const k of kinds) results[subject.key][k].push({ error: String(error.message || error) });
          log?.(`${subject.key} ${kind}: ERROR ${error.message}`);
          await group.dispose();
        }
      }
    }
  } finally {
    await Promise.all(groups.map((g) => g.dispose()));
  }
  for (const g of groups) {
    if (g.unsettled) for (const k of kinds) results[g.subject.key][k].push({ unsettled: g.unsettled, split: g.split || 0 });
  }
  return results;
}

/** One hand-over trial in a group's tabs. */
async function handoverTrial(group, kind, timeoutMs, settleMs) {
  const { subject } = group;
  const leader = await group.leader();
  const pool = group.pool;
  await sleep(settleMs);
  const t0 = nodeNow();
  const waiting = pool.nextLeader(leader, timeoutMs, t0);
  const ending = kind === 'close' ? pool.close(leader) : pool.crash(leader);
  const heard = await waiting;
  // A console message can arrive after the wait ended on a loaded machine: the pages' records.
  const got = heard ?? (await leaderFromRecords(pool, leader, t0, timeoutMs));
  const r = { fromCommand: got ? pool.toNode(got.ev.at) - t0 : null };
  if (got && !heard) r.heardLate = true;
  // Web Locks: the browser's part (command -> the lock granted in the next tab) and the
  // library's part after it (grant -> leadership callback), from the grant the page saw last.
  if (got && got.ev.grantedAt != null) {
    r.toGrant = pool.toNode(got.ev.grantedAt) - t0;
    r.grantToLeader = got.ev.at - got.ev.grantedAt;
  }
  if (kind === 'close') {
    await ending;
    if (got) {
      const pagehideAt = await pool.storedTime(leader, 'pagehide', got.rec);
      const beforeunloadAt = await pool.storedTime(leader, 'beforeunload', got.rec);
      const libDoneAt = await pool.storedTime(leader, 'pagehide-lib-done', got.rec);
      r.fromPagehide = pagehideAt ? got.ev.at - pagehideAt : null;
      r.fromBeforeunload = beforeunloadAt ? got.ev.at - beforeunloadAt : null;
      r.pagehideWork = pagehideAt && libDoneAt ? libDoneAt - pagehideAt : null;
      if (subject.query.trace && pagehideAt && libDoneAt) Object.assign(r, await breakdown(got, pagehideAt, libDoneAt));
    }
  } else {
    if (got && subject.query.trace) Object.assign(r, await breakdown(got, null, null));
    await pool.reap(leader);
  }
  // No new leader: what every tab believed, for the report's cause.
  if (!got) r.stuck = await pool.diagnose();
  return r;
}

/**
 * Where a traced Baton hand-over went (bench/pages/instrument.js ?trace=1), in the next
 * leader's timeline from its lock grant to its leadership callback; for a close, also from the
 * leaving tab's `pagehide` (null for a crash).
 */
async function breakdown(got, pagehideAt, libDoneAt) {
  const trace = await got.rec.tab.page.evaluate(() => window.__bench.trace || []);
  const leaderAt = got.ev.at;
  const find = (t0, test) => trace.find(([what, t]) => t >= t0 && t <= leaderAt && test(what));
  const span = (t0, start, end) => {
    const a = find(t0, start);
    const b = a && find(a[1], end);
    return b ? b[1] - a[1] : null;
  };
  const grants = trace.filter(([what, t]) => what.startsWith('lock-granted') && t <= leaderAt && (pagehideAt === null || t >= pagehideAt));
  const grant = pagehideAt === null ? grants[grants.length - 1] : grants[0];
  if (!grant && pagehideAt !== null) return goodbyeBreakdown(trace, leaderAt, pagehideAt, libDoneAt);
  if (!grant) return {};
  const storage = trace.filter(([w, t]) => t >= grant[1] && t <= leaderAt && /^(getItem|setItem|idb-)/.test(w));
  const lastStorage = storage.length ? storage[storage.length - 1][1] : grant[1];
  const tx = find(grant[1], (w) => w.startsWith('idb-tx epochs'));
  const firstAnswer = tx && find(tx[1], (w) => w.startsWith('idb-req done'));
  const complete = tx && find(tx[1], (w) => w.startsWith('idb-tx complete epochs'));
  return {
    oldWork: pagehideAt === null ? undefined : libDoneAt - pagehideAt,
    grant: pagehideAt === null ? undefined : grant[1] - libDoneAt,
    alloc: lastStorage - grant[1],
    lsRead: span(grant[1], (w) => w.startsWith('getItem') && w.includes('/epoch/'), (w) => w === 'getItem done'),
    idbOpen: span(grant[1], (w) => w.startsWith('idb-open '), (w) => w === 'idb-open done'),
    idbTx: span(grant[1], (w) => w.startsWith('idb-tx epochs'), (w) => w.startsWith('idb-tx complete epochs')),
    // The transaction's trips to the store: until its first answer, then until it completed.
    grantToTx: tx ? tx[1] - grant[1] : null,
    txFirstAnswer: firstAnswer ? firstAnswer[1] - tx[1] : null,
    txRest: firstAnswer && complete ? complete[1] - firstAnswer[1] : null,
    // A task queued at the grant: how long the page's event loop took to run it.
    taskProbe: span(grant[1], (w) => w.startsWith('lock-granted'), (w) => w === 'task-probe'),
    lsWrite: span(grant[1], (w) => w.startsWith('setItem') && w.includes('/epoch/'), (w) => w === 'setItem done'),
    notify: leaderAt - lastStorage,
    afterGrant: leaderAt - grant[1],
    total: pagehideAt === null ? undefined : leaderAt - pagehideAt,
    timeline: trace.filter(([, t]) => t >= grant[1] - 1 && t <= leaderAt + 1).map(([w, t]) => [w, Number((t - grant[1]).toFixed(2))]),
  };
}

/**
 * Where a traced close went without Web Locks: in the next leader's timeline, from the
 * goodbye's delivery (the first after the leaving tab's `pagehide`) to the transaction that
 * gives it its term (the epoch's, or the lease's) and on to its leadership callback.
 */
function goodbyeBreakdown(trace, leaderAt, pagehideAt, libDoneAt) {
  const goodbye = trace.find(([what, t]) => what.startsWith('delivered kind 4 ') && t >= pagehideAt && t <= leaderAt);
  if (!goodbye) return {};
  const tx = trace.find(([what, t]) => what.startsWith('idb-tx ') && !what.startsWith('idb-tx made') && !what.startsWith('idb-tx complete') && t >= goodbye[1] && t <= leaderAt);
  const complete = tx && trace.find(([what, t]) => what.startsWith('idb-tx complete') && t >= tx[1] && t <= leaderAt);
  return {
    oldWork: libDoneAt - pagehideAt,
    goodbyeHeard: goodbye[1] - pagehideAt,
    goodbyeToTx: tx ? tx[1] - goodbye[1] : null,
    txSpan: tx && complete ? complete[1] - tx[1] : null,
    txToLeader: complete ? leaderAt - complete[1] : null,
    goodbyeToLeader: leaderAt - goodbye[1],
    total: leaderAt - pagehideAt,
    timeline: trace.filter(([, t]) => t >= goodbye[1] - 1 && t <= leaderAt + 1).map(([w, t]) => [w, Number((t - goodbye[1]).toFixed(2))]),
  };
}

/**
 * Frozen leader (CDP Page.setWebLifecycleState frozen): whether and when another tab takes
 * over within waitMs; then thaw (the tab stays hidden, as Chromium leaves it) and count the
 * tabs that believe they lead right after the thaw and after settleMs. Effective leaders:
 * believers a fence would accept (Baton: the highest epoch among them; peers have no fencing,
 * so every believer is effective).
 */
export async function frozen(bench, subject, { trials, tabs, waitMs, settleMs, leadMs = 1000, trace = false, log }) {
  const name = subject.silent ? `${subject.key}/silent` : subject.key;
  const group = new Group(bench, subject, 'frozen', tabs, 20000, log);
  const results = [];
  const count = async (pool) => {
    const snaps = await pool.snapshots();
    const believers = snaps.filter((x) => x.snap.isLeader);
    let effective = believers.length;
    if (subject.fenced && believers.length > 1) {
      const top = Math.max(...believers.map((x) => x.snap.epoch ?? 0));
      effective = believers.filter((x) => (x.snap.epoch ?? 0) === top).length;
    }
    return { believers: believers.length, effective, snaps };
  };
  try {
    for (let i = 0; i < trials; i += 1) {
      const leader = await group.leader();
      const pool = group.pool;
      if (trace) await clearTraces(pool);
      await sleep(leadMs); // the followers have heard the leader for a while
      const t0 = nodeNow();
      const waiting = pool.nextLeader(leader, waitMs, t0);
      await freezeTab(leader.tab);
      leader.frozen = true;
      const heard = await waiting;
      const got = heard ?? (await leaderFromRecords(pool, leader, t0, waitMs));
      const r = { trial: i, replacedAfter: got ? pool.toNode(got.ev.at) - t0 : null };
      if (got && !heard) r.heardLate = true;
      if (got && got.ev.grantedAt != null) {
        r.toGrant = pool.toNode(got.ev.grantedAt) - t0;
        r.grantToLeader = got.ev.at - got.ev.grantedAt;
      }
      // A Baton leader not replaced: what every other tab did meanwhile, for the diagnosis.
      if (!got && subject.baton) r.tabs = await batonTabs(pool, leader);
      await thawTab(leader.tab);
      leader.frozen = false;
      const atThaw = await count(pool);
      await sleep(settleMs);
      const settled = await count(pool);
      const old = settled.snaps.find((x) => x.rec === leader)?.snap;
      // Two effective leaders: what every Baton tab believed, for the diagnosis.
      if (settled.effective > 1 && subject.baton) r.split = await batonTabs(pool, null);
      // The freeze command can take a while on a loaded machine: when the page froze.
      if (old?.freezeAt) r.frozeAfter = pool.toNode(old.freezeAt) - t0;
      if (trace) r.timelines = await timelines(pool, leader, t0, (r.replacedAfter ?? waitMs) + 500);
      Object.assign(r, {
        believersAtThaw: atThaw.believers,
        effectiveAtThaw: atThaw.effective,
        believers: settled.believers,
        effective: settled.effective,
        oldStillLeads: Boolean(old?.isLeader),
        freezeSeen: (old?.freezes ?? 0) > 0,
      });
      results.push(r);
      log?.(`${name} frozen #${i + 1}: ${r.replacedAfter === null ? `not replaced in ${waitMs} ms` : `replaced after ${r.replacedAfter.toFixed(0)} ms`}${r.heardLate ? ' (heard late: from the page\'s record)' : ''}${r.frozeAfter != null ? ` (froze ${r.frozeAfter.toFixed(0)} ms after the command)` : ''}, believers at thaw ${r.believersAtThaw}, after ${settleMs} ms ${r.believers} (effective ${r.effective})${r.freezeSeen ? '' : ' [no freeze event seen!]'}`);
      await pool.close(leader);
    }
  } catch (error) {
    results.push({ error: String(error.message || error) });
    log?.(`${name} frozen: ERROR ${error.message}`);
  } finally {
    await group.dispose();
  }
  if (group.unsettled) results.push({ unsettled: group.unsettled, split: group.split || 0 });
  return results;
}

/**
 * The first leadership callback after `since` (this process's clock) and within `windowMs`
 * in a live, unfrozen tab but `exclude`, from the pages' own records: on a loaded machine a
 * console message can arrive after the wait for it ended (seen: a Baton tab led 3 s after
 * the freeze, and the 8 s wait reported no new leader).
 */
async function leaderFromRecords(pool, exclude, since, windowMs) {
  let best = null;
  for (const { rec, snap } of await pool.snapshots()) {
    if (rec === exclude) continue;
    for (const at of snap.leaderTimes) {
      const t = pool.toNode(at);
      if (t >= since && t <= since + windowMs && (!best || t < best.t)) best = { rec, t, at, grantedAt: snap.grantedAt };
    }
  }
  if (!best) return null;
  const grantedAt = best.grantedAt != null && best.grantedAt <= best.at ? best.grantedAt : null;
  return { rec: best.rec, ev: { at: best.at, grantedAt } };
}

/** --trace: empties the timeline of every live tab (bench/pages/instrument.js, ?trace=1). */
function clearTraces(pool) {
  return Promise.all(pool.live.map((rec) => rec.tab.page.evaluate(() => { if (window.__bench.trace) window.__bench.trace.length = 0; }).catch(() => {})));
}

/**
 * --trace: every live tab's timeline from 1.5 s before the freeze command until `untilMs`
 * after it, in ms from the command (this process's clock); for Baton tabs also the role
 * transitions (their wall-clock times likewise) and the glue's counters.
 */
async function timelines(pool, frozenRec, t0, untilMs) {
  const one = async (rec) => {
    const got = await rec.tab.page.evaluate(() => ({
      trace: window.__bench.trace || [],
      log: window.__baton_?.log() ?? [],
      glue: window.__baton_?.metrics().glue ?? null,
    })).catch((error) => ({ error: String(error.message || error) }));
    if (got.error) return { tab: rec.id, error: got.error };
    const rel = (at) => Number((pool.toNode(at) - t0).toFixed(1));
    return {
      tab: rec.id,
      frozen: rec === frozenRec,
      trace: got.trace.map(([what, at]) => [rel(at), what]).filter(([t]) => t >= -1500 && t <= untilMs),
      log: got.log.map((x) => ({ ...x, at: rel(x.at) })).filter((x) => x.at >= -1500 && x.at <= untilMs),
      glue: got.glue,
    };
  };
  return Promise.all(pool.live.map(one));
}

/** The recent transitions, lock and epoch counters and role of each Baton tab but `except`. */
async function batonTabs(pool, except) {
  const one = (rec) => rec.tab.page.evaluate(() => {
    const baton = window.__baton_;
    const m = baton.metrics();
    const { steals, lockRequests, abdicateRequestsSent, storageFailures } = m;
    const presence = baton.presence().map(({ id, liveness, lastProgress }) => ({ id, liveness, lastProgress }));
    return { at: Date.now(), id: baton.id, state: window.__batonHandle.state(), epoch: window.__batonHandle.token()?.epoch ?? null, leader: window.__batonHandle.leader(), log: baton.log().slice(-12), presence, core: { steals, lockRequests, abdicateRequestsSent, storageFailures }, glue: m.glue };
  }).catch((error) => ({ error: String(error.message || error) }));
  return Promise.all(pool.live.filter((rec) => rec !== except).map((rec) => one(rec).then((x) => ({ tab: rec.id, ...x }))));
}

/** Start-up: a fresh tab alone (fresh names): navigation start -> first leadership callback. */
export async function startup(bench, subject, { timeoutMs = 15000 } = {}) {
  const pool = new Pool({ bench, subject, ns: uniqueNs(`${subject.key}-startup`), calibrate: false });
  try {
    const rec = await pool.add();
    const deadline = Date.now() + timeoutMs;
    let snap = await pool.snapshot(rec);
    while (subject.page !== 'baton-init' && snap.becameLeaderAt === null) {
      if (Date.now() > deadline) return { error: `no leader within ${timeoutMs} ms` };
      await sleep(20);
      snap = await pool.snapshot(rec);
    }
    const wasm = snap.wasm.filter((w) => w.endMs !== null);
    return {
      toLeader: snap.becameLeaderAt === null ? null : snap.becameLeaderAt - snap.timeOrigin,
      toEntry: snap.entryAt,
      toRequest: snap.requestedAt === null ? null : snap.requestedAt - snap.timeOrigin,
      toGrant: snap.grantedAt == null ? null : snap.grantedAt - snap.timeOrigin,
      grantToLeader: snap.grantedAt == null || snap.becameLeaderAt === null ? null : snap.becameLeaderAt - snap.grantedAt,
      wasmInstantiate: wasm.length ? wasm[0].endMs - wasm[0].startMs : null,
      wasmBytes: wasm.length ? wasm[0].bytes : null,
      init: snap.init,
    };
  } catch (error) {
    return { error: String(error.message || error) };
  } finally {
    await pool.dispose();
  }
}

/**
 * Idle cost: N tabs of one subject in one window (background tabs; the idle browser runs with
 * background timer throttling off, so what is counted is what each library asks for), one
 * leader; after warmupMs, counters and CDP Performance metrics are read in every tab, again
 * after windowMs, and turned into rates. Ns grow in one pool (2, then 8 more, ...).
 */
export async function idle(bench, subject, { ns, warmupMs, windowMs, log }) {
  const pool = new Pool({ bench, subject, ns: uniqueNs(`${subject.key}-idle`), sameWindow: true, calibrate: false });
  const out = [];
  const read = async (rec) => {
    if (!rec.perfEnabled) {
      await rec.tab.cdp.send('Performance.enable', { timeDomain: 'threadTicks' }).catch(() => rec.tab.cdp.send('Performance.enable'));
      rec.perfEnabled = true;
    }
    const [snap, metrics] = await Promise.all([pool.snapshot(rec), rec.tab.cdp.send('Performance.getMetrics')]);
    const m = Object.fromEntries(metrics.metrics.map((x) => [x.name, x.value]));
    return { snap, task: m.TaskDuration * 1000, script: m.ScriptDuration * 1000 };
  };
  try {
    for (const n of ns) {
      const t0 = Date.now();
      // Four at a time, to keep 50 tabs affordable; one by one for an elector that elects
      // several leaders when tabs start at the same moment (broadcast-channel's fallback).
      await pool.fill(n, { parallel: subject.openOneByOne ? 1 : 4, gapMs: 100 });
      let split = false;
      try {
        await pool.singleLeader({ timeoutMs: 30000 });
      } catch (error) {
        if (!/leaders for/.test(error.message)) throw error;
        split = true; // measured anyway: that is this library's idle state now
        log?.(`${subject.key} idle N=${n}: ${error.message}; measuring anyway`);
      }
      const openMs = Date.now() - t0;
      await Promise.all(pool.live.map((rec) => read(rec))); // enables Performance everywhere
      await sleep(warmupMs);
      const recs = pool.live;
      const a = await Promise.all(recs.map(read));
      await sleep(windowMs);
      const b = await Promise.all(recs.map(read));
      const tabsOut = recs.map((rec, i) => {
        const dt = (b[i].snap.at - a[i].snap.at) / 1000;
        const d = (k) => (b[i].snap.counters[k] - a[i].snap.counters[k]) / dt;
        return {
          leader: b[i].snap.isLeader,
          seconds: dt,
          posted: d('posted'),
          delivered: d('delivered'),
          wakeups: d('timerCallbacks'),
          cpuMs: (b[i].task - a[i].task) / dt,
          scriptMs: (b[i].script - a[i].script) / dt,
          visibility: b[i].snap.visibility,
        };
      });
      out.push({ n, openMs, split, leaders: tabsOut.filter((t) => t.leader).length, tabs: tabsOut });
      const sum = (k) => tabsOut.reduce((s, t) => s + t[k], 0);
      log?.(`${subject.key} idle N=${n}: posted ${sum('posted').toFixed(1)}/s, delivered ${sum('delivered').toFixed(1)}/s, wake-ups ${(sum('wakeups') / n).toFixed(2)}/tab/s, CPU ${(sum('cpuMs') / n).toFixed(2)} ms/tab/s (opened in ${openMs} ms)`);
    }
  } catch (error) {
    out.push({ error: String(error.message || error) });
    log?.(`${subject.key} idle: ERROR ${error.message}`);
  } finally {
    await pool.dispose();
  }
  return out;
}
