/**
 * Finds and compiles the WebAssembly core, `baton-core.wasm`, which ships next to the
 * package's scripts in `dist/`. Browsers and workers stream it from
 * `new URL('./baton-core.wasm', import.meta.url)` (the form bundlers recognise and copy);
 * Node reads it from disk, since Node's fetch cannot read file URLs. An app may say where
 * it is served instead (`load({ wasm })`).
 *
 * A failure becomes an Error whose message names the fix: the CSP source to add, or where
 * the file must be served.
 *
 * @module tab-baton/wasm-loader
 */
import { importAtRunTime } from './import-at-run-time.js';

// A classic-script bundle (esbuild's default iife) has no import.meta: there the script's
// own URL, which is known only while it runs, i.e. now.
const scriptUrl = typeof document === 'object' && document.currentScript ? document.currentScript.src : undefined;

/** @returns {URL} where the wasm is, next to this script. */
export function defaultWasmUrl() {
  // The first form is the one bundlers recognise (and copy the file for).
  return import.meta.url ? new URL('./baton-core.wasm', import.meta.url) : new URL('./baton-core.wasm', scriptUrl || globalThis.location?.href);
}

// Node's `process`, read off globalThis: a bare `process` makes Parcel (default config)
// install and bundle a polyfill for it.
const nodeProcess = () => globalThis.process;
const isNode = () => typeof nodeProcess()?.versions?.node === 'string';

/**
 * Compiles and instantiates the wasm.
 * @param {string | URL | Response | BufferSource | WebAssembly.Module | undefined} source
 *   (anything else is taken for a Response)
 * @param {WebAssembly.Imports} imports
 * @returns {Promise<WebAssembly.Instance>}
 */
export async function instantiate(source, imports) {
  let where = 'the bytes passed to load({ wasm })';
  try {
    if (source instanceof WebAssembly.Module) return await WebAssembly.instantiate(source, imports);
    if (ArrayBuffer.isView(source) || source instanceof ArrayBuffer) {
      return (await WebAssembly.instantiate(source, imports)).instance;
    }
    let response = source;
    // A string or URL (not a Response): Node's Response and fetch are loaded lazily, and
    // slowly, on first touch, so reading a file must not touch them.
    if (source === undefined || typeof source === 'string' || source instanceof URL) {
      const url = source === undefined ? defaultWasmUrl() : new URL(String(source), globalThis.location?.href);
      where = url.href;
      if (url.protocol === 'file:' && isNode()) return (await WebAssembly.instantiate(await readFile(url), imports)).instance;
      response = await fetch(url);
    } else {
      where = source.url || 'the Response passed to load({ wasm })';
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    // Streaming needs the right MIME type; a server that sends another still works, a bit later.
    if (typeof WebAssembly.instantiateStreaming === 'function' && response.headers.get('content-type')?.startsWith('application/wasm')) {
      return (await WebAssembly.instantiateStreaming(response, imports)).instance;
    }
    return (await WebAssembly.instantiate(await response.arrayBuffer(), imports)).instance;
  } catch (error) {
    throw loadError(error, where);
  }
}

/**
 * Node only: reads the file. Node >= 20.16 hands `fs` over without an import; older ones
 * import it under a name that browser bundlers do not follow.
 */
async function readFile(url) {
  const fs = nodeProcess().getBuiltinModule?.('fs') ?? (await importAtRunTime('node:fs'));
  return fs.promises.readFile(url);
}

/** An Error whose message says what went wrong and how to fix it. */
function loadError(error, where) {
  const detail = error && error.message ? error.message : String(error);
  let message;
  if (/unsafe-eval|wasm-eval|Content Security Policy/i.test(detail)) {
    message = "tab-baton: the page's Content Security Policy forbids WebAssembly: add 'wasm-unsafe-eval' to script-src "
      + `(script-src 'self' 'wasm-unsafe-eval'). (${detail})`;
  } else if (error instanceof WebAssembly.CompileError || error instanceof WebAssembly.LinkError) {
    message = `tab-baton: ${where} is not this version's baton-core.wasm: serve the baton-core.wasm of the installed tab-baton's dist/ folder. (${detail})`;
  } else {
    message = `tab-baton: could not load the WebAssembly core from ${where}: serve node_modules/tab-baton/dist/baton-core.wasm `
      + 'at that URL (next to the bundled script that imports tab-baton), or pass its URL with load({ wasm: url }). '
      + `(${detail})`;
  }
  const failure = new Error(message, { cause: error });
  failure.code = 'CORE_LOAD_FAILED';
  return failure;
}
