// A fresh screenshot of the demo: three tabs (A, B, C) in headless Chromium, once each leads
// its own home resource and the timeline shows the hand-overs, tiled side by side. Writes
// outside the tracked tree unless told otherwise (the committed web-demo/screenshot.png is
// replaced by hand from this output).
//
//   node bench/demo-screenshot.mjs [out.png]     (default bench/out/demo-screenshot.png)
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../web-demo/server.js';
import { launchBrowser } from '../tests/browser/harness.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(HERE, 'out', 'demo-screenshot.png'));
const RESOURCES = ['websocket-owner', 'sse-relay', 'token-refresh'];
const TABS = 3;

async function until(what, predicate, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const server = await startServer({ port: 0 });
const browser = await launchBrowser();
try {
  const tabs = [];
  for (let i = 0; i < TABS; i += 1) {
    const tab = await browser.openTab(`${server.url}?ns=screenshot-${process.pid}`);
    await tab.page.setViewportSize({ width: 1200, height: 1250 });
    await until('the demo to load', () => tab.page.evaluate(() => Boolean(window.__demo && window.__demo.ready)));
    tabs.push(tab);
  }
  // Every resource led by the tab whose home it is: A, B and C each lead one.
  await until('each tab to lead its home resource', async () => {
    const leaders = await tabs[0].page.evaluate(() => Object.values(window.__demo.resources()).map((r) => r.leader));
    return leaders.every(Boolean) && new Set(leaders).size === RESOURCES.length;
  });
  await new Promise((resolve) => setTimeout(resolve, 3000)); // a few feed events and timeline seconds
  const shots = [];
  for (const tab of tabs) {
    await tab.page.evaluate(() => window.__demo.render());
    shots.push((await tab.page.screenshot({ type: 'png' })).toString('base64'));
  }
  const mosaic = await browser.openTab('about:blank');
  await mosaic.page.setViewportSize({ width: 2400, height: 900 });
  await mosaic.page.setContent(`<!doctype html><style>
    body{margin:0;background:#cfd5df;display:grid;grid-template-columns:repeat(${TABS},1fr);gap:10px;padding:10px}
    img{width:100%;display:block;border-radius:6px;box-shadow:0 2px 8px rgb(0 0 0 / 25%)}</style>
    ${shots.map((png) => `<img src="data:image/png;base64,${png}">`).join('')}`);
  await mosaic.page.waitForFunction(() => [...document.images].every((img) => img.complete && img.naturalWidth > 0));
  const png = await mosaic.page.screenshot({ type: 'png', fullPage: true });
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, png);
  console.log(`demo screenshot: ${path.relative(process.cwd(), out)} (${(png.length / 1024).toFixed(0)} KiB)`);
} finally {
  await browser.close();
  await server.close();
}
