/**
 * Imports a module whose name is known only at run time and that no bundler may follow: Node's
 * `fs` (Node reads the wasm from disk). The name arrives as an argument, which no bundler
 * resolves at build time; a constant expression such as `['fs'][0]` is folded by Parcel,
 * which then fails to resolve it for the browser.
 * js-glue/build.mjs marks this one import for webpack and Vite, which would warn about it.
 *
 * @module tab-baton/import-at-run-time
 */

/** @param {string} name @returns {Promise<any>} */
export const importAtRunTime = (name) => import(name);
