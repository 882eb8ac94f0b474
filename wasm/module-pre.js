// --pre-js of the -sMINIMAL_RUNTIME module (wasm.cmake), inside its factory function.
//
// `asm`: embind in Emscripten 3.1.6 refers to it before the minimal runtime declares it.
var asm;
// The minimal runtime instantiates `Module.wasm` with WebAssembly.instantiate, its only use
// of WebAssembly. This name, in the factory's own scope, hands that to the glue instead
// (js-glue/src/wasm-loader.js: streaming compilation, disk in Node, errors that name the
// fix), which calls back with the instance.
var WebAssembly = { instantiate: (_wasm, imports) => Module['instantiate'](imports) };
// Builds with -sASSERTIONS check that Module.wasm is given before instantiating; the glue
// gives the instance instead.
Module['wasm'] = 'instantiated by Module.instantiate';
