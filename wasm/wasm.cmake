# The WebAssembly module: the core, the byte protocol (boundary.cc) and the one embind file.
# Emitted as an ES module with Emscripten's minimal runtime plus baton-core.wasm; the glue
# instantiates the wasm itself (module-pre.js): streaming from a URL in browsers and
# workers, from disk in Node.
add_executable(baton_wasm wasm/bindings.cc wasm/embind-builtins.cc wasm/boundary.cc wasm/allocator.cc)
target_link_libraries(baton_wasm PRIVATE baton_core)
set_target_properties(baton_wasm PROPERTIES OUTPUT_NAME "baton-core" SUFFIX ".js")

# Three WebAssembly features past the MVP: float-to-int conversions that saturate instead
# of trapping (no range check around each one, 76 B gzip), sign-extension instructions, and
# bulk memory, whose memory.copy and memory.fill replace the calls to memcpy and memset
# (150 B gzip less, and a heartbeat steps about 1.4 times as fast: the core copies its
# fixed-size strings and frames by value). Chrome 75, Firefox 79, Safari 15, Node 12.5.
# The glue's ES2020 already needs Chrome 80; what is left out is Safari 14 (no Web Locks)
# and Firefox 74 to 78.
set(BATON_WASM_FEATURES -mnontrapping-fptoint -msign-ext -mbulk-memory)
# The same features, as wasm-opt names them (post-link.mjs); wasm-opt refuses a module
# that uses one not listed here.
set(BATON_WASM_OPT_FEATURES --enable-nontrapping-float-to-int --enable-sign-ext --enable-bulk-memory --enable-mutable-globals)
set(BATON_WASM_COMPILE -fno-exceptions -fno-rtti -DEMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0 ${BATON_WASM_FEATURES})
target_compile_options(baton_core PRIVATE ${BATON_WASM_COMPILE})
target_compile_options(baton_wasm PRIVATE ${BATON_WASM_COMPILE})

set(BATON_WASM_JS ${CMAKE_CURRENT_SOURCE_DIR}/wasm/module-pre.js ${CMAKE_CURRENT_SOURCE_DIR}/wasm/module-post.js
  ${CMAKE_CURRENT_SOURCE_DIR}/wasm/embind-functions.js ${CMAKE_CURRENT_SOURCE_DIR}/wasm/heap-growth.js)
set_target_properties(baton_wasm PROPERTIES LINK_DEPENDS "${BATON_WASM_JS};${CMAKE_CURRENT_SOURCE_DIR}/wasm/post-link.mjs")

set(BATON_WASM_LINK
  --bind
  # About 1.5 KiB gzip of JS smaller than the default runtime; the glue finds and
  # instantiates the wasm itself (module-pre.js) and reads the heap through module-post.js.
  -sMINIMAL_RUNTIME=1
  "SHELL:--pre-js ${CMAKE_CURRENT_SOURCE_DIR}/wasm/module-pre.js"
  "SHELL:--post-js ${CMAKE_CURRENT_SOURCE_DIR}/wasm/module-post.js"
  # embind's functions and integers cut to what the boundary uses (see the file).
  "SHELL:--js-library ${CMAKE_CURRENT_SOURCE_DIR}/wasm/embind-functions.js"
  "SHELL:--js-library ${CMAKE_CURRENT_SOURCE_DIR}/wasm/heap-growth.js"
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  -sEXPORT_NAME=createBatonCore
  -sENVIRONMENT=web,worker
  -sFILESYSTEM=0
  -sALLOW_MEMORY_GROWTH=1
  -sINITIAL_MEMORY=1048576
  -sTOTAL_STACK=65536
  # embind's fast invokers are made with new Function: not under a strict CSP.
  -sDYNAMIC_EXECUTION=0
  # Our own malloc and free (allocator.cc): 749 B gzip of wasm less than emmalloc (itself
  # about 1.9 KiB less than dlmalloc). The core must not depend on the allocator: valgrind
  # finds no read of uninitialised memory in the native tests and the simulation.
  -sMALLOC=none
  -sSUPPORT_ERRNO=0
  -sTEXTDECODER=2
  # embind's type names are its only use of printf (see bindings.cc).
  -Wl,--wrap=siprintf
  -fno-exceptions
  -fno-rtti
  # LTO generates the code at link time.
  ${BATON_WASM_FEATURES}
)
if(CMAKE_BUILD_TYPE STREQUAL "MinSizeRel")
  target_compile_options(baton_core PRIVATE -Oz -flto)
  target_compile_options(baton_wasm PRIVATE -Oz -flto)
  list(APPEND BATON_WASM_LINK -Oz -flto -sASSERTIONS=0)
else()
  list(APPEND BATON_WASM_LINK -sASSERTIONS=2)
endif()
target_link_options(baton_wasm PRIVATE ${BATON_WASM_LINK})

# embind's KEEPALIVE exports that nothing here calls out of the linked module, then wasm-opt
# again with more inlining of tiny functions (see the script): 454 B gzip. Only in the
# size-optimised build.
if(CMAKE_BUILD_TYPE STREQUAL "MinSizeRel")
  find_program(BATON_WASM_OPT wasm-opt REQUIRED)
  find_program(BATON_NODE node REQUIRED)
  add_custom_command(TARGET baton_wasm POST_BUILD
    COMMAND ${BATON_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/wasm/post-link.mjs
      $<TARGET_FILE_DIR:baton_wasm>/baton-core.js $<TARGET_FILE_DIR:baton_wasm>/baton-core.wasm ${BATON_WASM_OPT}
      ${BATON_WASM_OPT_FEATURES}
    VERBATIM)
endif()
