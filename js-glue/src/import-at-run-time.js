/**
 * Imports a module whose name is known only at run time and that no bundler may follow: Node's
 * `fs` (Node reads the wasm from disk) and the optional `unload` package (the
 * broadcast-channel drop-in). The name arrives as an argument, which no bundler resolves at
 * build time; a constant expression such as `['unload'][0]` is folded by Parcel, which then
 * fails to resolve it (or, with its default auto-install, installs it into the app).
 * js-glue/build.mjs marks this one import for webpack and Vite, which would warn about it.
 *
 * @module tab-baton/import-at-run-time
 */

/** @param {string} name @returns {Promise<any>} */
export const importAtRunTime = (name) => import(name);
