// --js-library (wasm.cmake): growing the wasm memory when the allocator runs out of it, in
// fewer bytes than Emscripten's own version (which tries three over-growths in a loop and
// checks a maximum that the memory's own limit enforces anyway). The heap grows by at
// least a fifth, so that a growing heap does not grow at every allocation; if that much
// is refused, by exactly what was asked. Returns 1 on success, nothing (0) on failure.
mergeInto(LibraryManager.library, {
  emscripten_resize_heap__deps: [],
  emscripten_resize_heap: function(requestedSize) {
    var sizes = [Math.max(requestedSize >>> 0, HEAPU8.length * 1.2), requestedSize >>> 0];
    for (var i = 0; i < 2; ++i) {
      try {
        wasmMemory.grow((sizes[i] - HEAPU8.length + 65535) >>> 16);
        updateGlobalBufferAndViews(wasmMemory.buffer);
        return 1;
      } catch (e) {}
    }
  },
});
