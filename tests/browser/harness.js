// End-to-end helpers: a real headless Chromium (Debian's /usr/bin/chromium), each tab its own
// window, real freeze/thaw/crash/close over CDP. See /work/shared/TOOLCHAIN-NOTES.md for why
// the browser is spawned by hand instead of chromium.launch(): in a Playwright-launched
// context focus emulation keeps every page "visible", so freezing does nothing.
//
//   const browser = await launchBrowser();
//   const tab = await browser.openTab(url);   // {page, cdp, targetId, windowId}
//   crashTab(tab); await freezeTab(tab); await thawTab(tab); await closeTab(tab);
//   await hideTab(tab); await showTab(tab);
//   await browser.close();
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.BATON_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--remote-debugging-port=0',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const withTimeout = (promise, ms, what) => {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
};

/** Spawns Chromium and resolves with its DevTools WebSocket URL (read from stderr). */
function spawnChromium(userDataDir, extraArgs, timeoutMs) {
  const proc = spawn(CHROMIUM, [...CHROMIUM_FLAGS, `--user-data-dir=${userDataDir}`, ...extraArgs, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const wsEndpoint = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      stderr += chunk;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(stderr);
      if (m) {
        // Keep draining stderr (or Chromium may block on a full pipe), but stop buffering.
        proc.stderr.off('data', onData);
        proc.stderr.resume();
        resolve(m[1]);
      }
    };
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', onData);
    proc.once('error', reject);
    proc.once('exit', (code, signal) =>
      reject(new Error(`chromium exited (${code ?? signal}) before DevTools was ready:\n${stderr.slice(-2000)}`)));
  });
  return { proc, wsEndpoint: withTimeout(wsEndpoint, timeoutMs, 'launching chromium') };
}

/**
 * Launches headless Chromium with a fresh profile and attaches Playwright over CDP
 * ({noDefaults: true}: no focus emulation, so lifecycle and visibility are real).
 * Options: args (extra Chromium flags), timeoutMs (launch timeout, 15000).
 * Returns {browser, context, wsEndpoint, process, openTab(url), tabs(), close()}.
 */
export async function launchBrowser({ args = [], timeoutMs = 45000 } = {}) {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'baton-chromium-'));
  const { proc, wsEndpoint: wsPromise } = spawnChromium(userDataDir, args, timeoutMs);
  let closed = false;
  const exited = new Promise((resolve) => proc.once('exit', resolve));

  async function close() {
    if (closed) return;
    closed = true;
    // Ask Chromium to quit (it reaps its own helpers), then disconnect; SIGKILL as a backstop.
    await withTimeout(browserCdp?.send('Browser.close') ?? Promise.resolve(), 2000, 'Browser.close').catch(() => {});
    await browser?.close().catch(() => {});
    if (proc.exitCode === null && proc.signalCode === null) {
      await withTimeout(exited, 2000, 'waiting for chromium to quit').catch(() => {
        proc.kill('SIGKILL');
        return withTimeout(exited, 5000, 'waiting for chromium to die').catch(() => {});
      });
    }
    await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
  }

  let browser;
  let browserCdp;
  let wsEndpoint;
  try {
    wsEndpoint = await wsPromise;
    browser = await chromium.connectOverCDP(wsEndpoint, { noDefaults: true, isLocal: true, timeout: timeoutMs });
  } catch (err) {
    await close();
    throw err;
  }
  const context = browser.contexts()[0];
  browserCdp = await browser.newBrowserCDPSession();
  const sessions = new WeakMap(); // Page -> Promise<{cdp, targetId}>
  const openTabs = new Set();

  /** One CDP session per page, kept as the tab's `cdp`; also tells the page's targetId. */
  function sessionOf(page) {
    if (!sessions.has(page)) {
      sessions.set(page, (async () => {
        const cdp = await context.newCDPSession(page);
        const { targetInfo } = await cdp.send('Target.getTargetInfo');
        return { cdp, targetId: targetInfo.targetId };
      })());
    }
    return sessions.get(page);
  }

  // Playwright reports each new target as a 'page' event; match it to its CDP targetId.
  const pageWaiters = new Map(); // targetId -> resolve(page)
  const offerPage = (page) => sessionOf(page).then(({ targetId }) => pageWaiters.get(targetId)?.(page), () => {});
  context.on('page', offerPage);

  async function pageFor(targetId) {
    const found = new Promise((resolve) => pageWaiters.set(targetId, resolve));
    try {
      context.pages().forEach(offerPage); // in case its 'page' event came before the waiter
      return await withTimeout(found, timeoutMs, `waiting for the page of target ${targetId}`);
    } finally {
      pageWaiters.delete(targetId);
    }
  }

  /**
   * Opens url in a new window (a real tab of the default context: shared Web Locks,
   * BroadcastChannel, storage). Waits for the load event.
   * Resolves to a tab {page, cdp, targetId, windowId, url}.
   */
  async function openTab(url, { waitUntil = 'load' } = {}) {
    const { targetId } = await browserCdp.send('Target.createTarget', { url, newWindow: true });
    const [page, { windowId }] = await Promise.all([
      pageFor(targetId),
      browserCdp.send('Browser.getWindowForTarget', { targetId }),
    ]);
    const { cdp } = await sessionOf(page);
    // A new target starts on about:blank, whose load state may be the one seen here, before
    // url's document has run a line: wait for url's document itself.
    if (url === 'about:blank') await page.waitForLoadState(waitUntil, { timeout: timeoutMs });
    else await page.waitForURL((u) => u.href !== 'about:blank', { waitUntil, timeout: timeoutMs });
    const tab = { page, cdp, targetId, windowId, url, browserCdp };
    openTabs.add(tab);
    page.once('close', () => openTabs.delete(tab));
    return tab;
  }

  return { browser, context, browserCdp, wsEndpoint, process: proc, userDataDir, openTab, tabs: () => [...openTabs], close };
}

/**
 * Kills the tab's renderer (CDP Page.crash). The CDP call itself is not awaited (the renderer
 * dies mid-call and never answers); the returned promise resolves when Playwright reports
 * the crash, awaiting it is optional. The browser releases the tab's Web Locks shortly after.
 */
export function crashTab(tab) {
  const crashed = new Promise((resolve) => tab.page.once('crash', () => resolve()));
  tab.cdp.send('Page.crash').catch(() => {});
  return crashed;
}

/** Freezes the tab for real: fires visibilitychange (hidden) and freeze; timers stop. */
export async function freezeTab(tab) {
  await tab.cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
}

/**
 * Thaws a frozen tab (Page.setWebLifecycleState active): fires `resume`. Measured in Chromium
 * 156: the page stays `hidden` after a thaw (its timers run, throttled to about once a
 * second, as in a background tab). Pass {show: true} to also make it visible (see showTab).
 */
export async function thawTab(tab, { show = false } = {}) {
  await tab.cdp.send('Page.setWebLifecycleState', { state: 'active' });
  if (show) await showTab(tab);
}

/**
 * Closes the tab gracefully, as a user closing it: beforeunload, pagehide and unload run
 * (page.close({runBeforeUnload: true}) = CDP Page.close). Resolves when the page is gone.
 */
export async function closeTab(tab, { timeoutMs = 10000 } = {}) {
  if (tab.page.isClosed()) return;
  const closed = new Promise((resolve) => tab.page.once('close', resolve));
  await tab.page.close({ runBeforeUnload: true });
  await withTimeout(closed, timeoutMs, 'closing tab');
}

const setWindowState = (tab, windowState) =>
  tab.browserCdp.send('Browser.setWindowBounds', { windowId: tab.windowId, bounds: { windowState } });
const visibilityOf = (tab) => tab.page.evaluate(() => document.visibilityState);

/**
 * Hides the tab without freezing it, by minimizing its window (each tab has its own window):
 * `blur`, then `visibilitychange` -> hidden; timers keep running but are throttled to about
 * once a second, as in a real background tab. (Page.setWebLifecycleState only knows
 * frozen/active; Emulation.setFocusEmulationEnabled changes focus, not visibility.)
 */
export async function hideTab(tab) {
  await setWindowState(tab, 'minimized');
}

/**
 * Makes the tab visible again: restores its window (`visibilitychange` -> visible, `focus`).
 * Also works for a tab left hidden by thawTab, whose window is still "normal": the window is
 * minimized and restored, which is what makes Chromium recompute the page's visibility.
 */
export async function showTab(tab) {
  const { bounds } = await tab.browserCdp.send('Browser.getWindowBounds', { windowId: tab.windowId });
  if (bounds.windowState !== 'minimized') {
    if ((await visibilityOf(tab)) === 'visible') return;
    await setWindowState(tab, 'minimized');
  }
  await setWindowState(tab, 'normal');
}
