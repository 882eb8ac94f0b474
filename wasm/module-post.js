// --post-js of the module (wasm.cmake): what the glue (js-glue/src/core.js) reads besides
// the embind functions.
// The heap's current view: growing the memory replaces it.
Module['heap'] = () => HEAPU8;
// The step, once per event, straight to its wasm export: embind's generic invoker (the only
// one without eval, -sDYNAMIC_EXECUTION=0) costs about 0.5 µs a call, the export 15 ns.
Module['step'] = (handle, length) => _baton_step(handle, length);
