// The set-up every browser test file shares: the demo server (web-demo/server.js on a free
// port) and one headless Chromium (./harness.js), started before the file's (or suite's)
// tests and closed after them.
//
//   const fixture = useBrowserFixture();               // at file level or inside a describe
//   it('...', async () => { const tab = await fixture.openTestPage('tab.html?id=a'); });
//
// Hooks run in the order they are registered: a `before` registered ahead of the call runs
// before the server starts (e.g. to build what `mounts` serves), an `after` registered
// behind it runs once both are closed (e.g. to print figures).
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../web-demo/server.js';
import { launchBrowser } from './harness.js';

/** A mount of the glue's sources at /glue-src/, for test pages that import its modules alone. */
export const GLUE_SOURCES = { '/glue-src/': fileURLToPath(new URL('../../js-glue/src', import.meta.url)) };

/**
 * Registers the `before` and `after` hooks. Options: mounts (extra static mounts of the
 * server, {'/prefix/': dir}), browser (false: the server only, for tests that launch their
 * own). Returns {server, browser, openTestPage(pathAndQuery)}; server and browser are set
 * once `before` has run, so read them inside hooks and tests, not at import.
 */
export function useBrowserFixture({ mounts = {}, browser: withBrowser = true } = {}) {
  const fixture = {
    server: null,
    browser: null,
    /** Opens tests/browser/pages/<pathAndQuery> in a new tab (see harness.js openTab). */
    openTestPage: (pathAndQuery) => fixture.browser.openTab(`${fixture.server.url}test-pages/${pathAndQuery}`),
  };
  before(async () => {
    fixture.server = await startServer({ port: 0, mounts });
    if (withBrowser) fixture.browser = await launchBrowser();
  });
  after(async () => {
    await fixture.browser?.close();
    await fixture.server?.close();
  });
  return fixture;
}
