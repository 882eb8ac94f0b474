// Tabs of one bench subject ("pool"), in the real Chromium of tests/browser/harness.js.
// Every bench page prints `__bench {...}` console messages (bench/pages/instrument.js); a
// context-wide console listener routes them to their tab, so leadership callbacks are heard
// without polling. Page timestamps are absolute (performance.timeOrigin + performance.now());
// the pool converts them to this process's clock with a measured offset (median over its tabs
// of the best of several round trips).
import { performance } from 'node:perf_hooks';
import { closeTab, crashTab } from '../../tests/browser/harness.js';

export const nodeNow = () => performance.timeOrigin + performance.now();
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Routes console messages of bench pages to their tab records; buffers early ones. */
export function attachConsoleRouter(browser) {
  const byPage = new Map(); // Page -> rec
  const early = new Map(); // Page -> [text]
  const route = (page, text) => {
    if (!text.startsWith('__bench ')) return;
    let ev;
    try { ev = JSON.parse(text.slice(8)); } catch { return; }
    const rec = byPage.get(page);
    if (rec) rec.pool.onEvent(rec, ev);
    else {
      if (!early.has(page)) early.set(page, []);
      early.get(page).push(ev);
    }
  };
  browser.context.on('console', (msg) => {
    const page = msg.page();
    if (page) route(page, msg.text());
  });
  return {
    register(page, rec) {
      byPage.set(page, rec);
      for (const ev of early.get(page) || []) rec.pool.onEvent(rec, ev);
      early.delete(page);
    },
    unregister(page) { byPage.delete(page); early.delete(page); },
  };
}

/** Opens a tab in the current window (several tabs per window; used for the idle cost). */
export function sameWindowOpener(browser) {
  const waiters = new Map();
  const seen = new WeakSet();
  const offer = async (page) => {
    if (seen.has(page)) return;
    seen.add(page);
    try {
      const cdp = await browser.context.newCDPSession(page);
      const { targetInfo } = await cdp.send('Target.getTargetInfo');
      page.__benchCdp = cdp;
      page.__benchTarget = targetInfo.targetId;
      waiters.get(targetInfo.targetId)?.(page);
    } catch { /* closed meanwhile */ }
  };
  browser.context.on('page', offer);
  return async function open(url) {
    const { targetId } = await browser.browserCdp.send('Target.createTarget', { url, newWindow: false, background: true });
    const page = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no page for target ${targetId}`)), 15000);
      waiters.set(targetId, (p) => { clearTimeout(timer); resolve(p); });
      for (const p of browser.context.pages()) if (p.__benchTarget === targetId) waiters.get(targetId)(p);
    });
    waiters.delete(targetId);
    await page.waitForLoadState('load', { timeout: 15000 });
    return { page, cdp: page.__benchCdp, targetId, browserCdp: browser.browserCdp };
  };
}

export class Pool {
  /**
   * @param {object} o
   * @param {object} o.bench {browser, server, router, openSameWindow?}
   * @param {object} o.subject {key, page, query}
   * @param {string} o.ns unique namespace (lock and channel names) of this pool
   * @param {boolean} [o.sameWindow] open tabs in one window (idle cost) instead of one window each
   */
  constructor({ bench, subject, ns, sameWindow = false, calibrate = true }) {
    this.bench = bench;
    this.calibrate = calibrate;
    this.subject = subject;
    this.ns = ns;
    this.sameWindow = sameWindow;
    this.recs = [];
    this.seq = 0;
    this.waiters = new Set();
    this.offsets = [];
  }

  url(id) {
    const q = new URLSearchParams({ ns: this.ns, id, ...this.subject.query });
    return `${this.bench.server.url}bench/${this.subject.page}.html?${q}`;
  }

  get live() {
    return this.recs.filter((r) => !r.gone);
  }

  /** The pool's page->node clock offset: median of its tabs' offsets (0 before any). */
  get offset() {
    const o = [...this.offsets].sort((a, b) => a - b);
    return o.length ? o[o.length >> 1] : 0;
  }

  toNode(pageTime) {
    return pageTime - this.offset;
  }

  onEvent(rec, ev) {
    rec.events.push(ev);
    if (ev.ev === 'ready') rec.readyResolve?.();
    for (const w of [...this.waiters]) {
      if (w.pred(rec, ev)) {
        this.waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve({ rec, ev });
      }
    }
  }

  /** Resolves with the first {rec, ev} matching pred (future events only), or null after timeoutMs. */
  waitFor(pred, timeoutMs) {
    return new Promise((resolve) => {
      const w = { pred, resolve };
      w.timer = setTimeout(() => { this.waiters.delete(w); resolve(null); }, timeoutMs);
      this.waiters.add(w);
    });
  }

  /**
   * Next leadership callback in a tab other than `exclude`, at or after `since` (this
   * process's clock): on a loaded machine a console message can arrive seconds late, and an
   * election from before the command is not the hand-over being measured.
   */
  nextLeader(exclude, timeoutMs, since = -Infinity) {
    return this.waitFor((rec, ev) => ev.ev === 'leader' && rec !== exclude && this.toNode(ev.at) >= since, timeoutMs);
  }

  async add() {
    this.seq += 1;
    const id = `${this.subject.key}-${this.seq}`;
    const rec = { id, pool: this, events: [], gone: false, frozen: false };
    rec.ready = new Promise((resolve) => { rec.readyResolve = resolve; });
    rec.tab = this.sameWindow ? await this.bench.openSameWindow(this.url(id)) : await this.bench.browser.openTab(this.url(id));
    rec.tab.page.on('pageerror', (e) => { rec.pageErrors = (rec.pageErrors || 0) + 1; rec.lastError = e.message; });
    this.bench.router.register(rec.tab.page, rec);
    this.recs.push(rec);
    const ok = await Promise.race([rec.ready.then(() => true), sleep(30000).then(() => false)]);
    if (!ok) {
      const snap = await this.snapshot(rec).catch((e) => ({ error: e.message }));
      throw new Error(`${this.subject.key}: tab ${id} not ready after 30 s (${JSON.stringify(snap).slice(0, 400)}; page error: ${rec.lastError || 'none'})`);
    }
    if (this.calibrate) this.offsets.push(await this.measureOffset(rec));
    return rec;
  }

  async measureOffset(rec, samples = 5) {
    let best = null;
    for (let i = 0; i < samples; i += 1) {
      const a = nodeNow();
      const p = await rec.tab.page.evaluate(() => performance.timeOrigin + performance.now());
      const b = nodeNow();
      if (!best || b - a < best.rtt) best = { rtt: b - a, offset: p - (a + b) / 2 };
    }
    rec.offset = best.offset;
    rec.offsetRtt = best.rtt;
    return best.offset;
  }

  /**
   * Opens tabs until n are live: one at a time with a short pause between them (as a user
   * opens tabs), or `parallel` at a time without pauses (idle cost: many tabs).
   */
  async fill(n, { gapMs = 300, parallel = 1 } = {}) {
    while (this.live.length < n) {
      const batch = Math.min(parallel, n - this.live.length);
      await Promise.all(Array.from({ length: batch }, () => this.add()));
      if (parallel === 1 && this.live.length < n) await sleep(gapMs);
    }
  }

  snapshot(rec) {
    return rec.tab.page.evaluate(() => window.__bench.snapshot());
  }

  /** What each live tab's library says about itself (bench/pages/instrument.js diag()). */
  async diagnose() {
    return Promise.all(this.live.map(async (rec) => ({
      id: rec.id,
      frozen: rec.frozen,
      snap: await this.snapshot(rec).catch((e) => ({ error: e.message })),
      diag: await rec.tab.page.evaluate(() => window.__bench.diag()).catch((e) => ({ error: e.message })),
    })));
  }

  /** Snapshots of the live, unfrozen tabs. */
  async snapshots() {
    const recs = this.live.filter((r) => !r.frozen);
    const snaps = await Promise.all(recs.map((r) => this.snapshot(r).catch(() => null)));
    return recs.map((rec, i) => ({ rec, snap: snaps[i] })).filter((x) => x.snap);
  }

  /**
   * Waits until exactly one live tab leads, stably for stableMs; returns its rec. Gives up
   * after timeoutMs, or once several tabs have led at the same time for splitMs without
   * interruption (a library that does not resolve duplicate leaders keeps them).
   */
  async singleLeader({ timeoutMs = 15000, stableMs = 200, splitMs = 4000 } = {}) {
    const deadline = Date.now() + timeoutMs;
    let last = null;
    let splitSince = null;
    for (;;) {
      const leaders = (await this.snapshots()).filter((x) => x.snap.isLeader).map((x) => x.rec);
      if (leaders.length === 1) {
        if (last === leaders[0] && Date.now() >= last.stableSince + stableMs) return last;
        if (last !== leaders[0]) { last = leaders[0]; last.stableSince = Date.now(); }
      } else last = null;
      splitSince = leaders.length > 1 ? splitSince ?? Date.now() : null;
      if (splitSince !== null && Date.now() - splitSince > splitMs) throw new Error(`${this.subject.key}: ${leaders.length} leaders for ${splitMs} ms`);
      if (Date.now() > deadline) throw new Error(`${this.subject.key}: no single leader within ${timeoutMs} ms (${leaders.length} leaders)`);
      await sleep(25);
    }
  }

  /** Closes like a user (beforeunload, pagehide, unload). */
  async close(rec) {
    rec.gone = true;
    await closeTab(rec.tab).catch(() => {});
    this.bench.router.unregister(rec.tab.page);
  }

  /** Kills the renderer (CDP Page.crash); the dead target is closed later by reap(). */
  crash(rec) {
    rec.gone = true;
    rec.crashed = true;
    return crashTab(rec.tab);
  }

  async reap(rec) {
    this.bench.router.unregister(rec.tab.page);
    await this.bench.browser.browserCdp.send('Target.closeTarget', { targetId: rec.tab.targetId }).catch(() => {});
  }

  /** A value written to localStorage by a (now closed) tab's pagehide handler. */
  async storedTime(rec, what, fromRec) {
    const key = `__bench/${this.ns}/${rec.id}/${what}`;
    for (let i = 0; i < 40; i += 1) {
      const v = await fromRec.tab.page.evaluate((k) => localStorage.getItem(k), key).catch(() => null);
      if (v !== null && v !== 'null') return Number(v);
      await sleep(25);
    }
    return null;
  }

  async dispose() {
    for (const w of this.waiters) { clearTimeout(w.timer); w.resolve(null); }
    this.waiters.clear();
    await Promise.all(this.recs.map(async (rec) => {
      if (rec.gone && !rec.crashed) return;
      rec.gone = true;
      this.bench.router.unregister(rec.tab.page);
      await this.bench.browser.browserCdp.send('Target.closeTarget', { targetId: rec.tab.targetId }).catch(() => {});
    }));
  }
}
