# The WebAssembly module: the core plus the one embind bindings file, emitted as an ES
# module with the wasm embedded (SINGLE_FILE), so the same file loads in Chromium and in
# Node 20 without fetching anything from disk.
add_executable(baton_wasm wasm/bindings.cc)
target_link_libraries(baton_wasm PRIVATE baton_core)
set_target_properties(baton_wasm PROPERTIES OUTPUT_NAME "baton-core" SUFFIX ".js")

set(BATON_WASM_COMPILE -fno-exceptions -fno-rtti -DEMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0)
target_compile_options(baton_core PRIVATE ${BATON_WASM_COMPILE})
target_compile_options(baton_wasm PRIVATE ${BATON_WASM_COMPILE})

set(BATON_WASM_LINK
  --bind
  -sMODULARIZE=1
  -sEXPORT_ES6=1
  -sEXPORT_NAME=createBatonCore
  -sENVIRONMENT=web,worker
  -sSINGLE_FILE=1
  -sFILESYSTEM=0
  -sALLOW_MEMORY_GROWTH=1
  -sINITIAL_MEMORY=1048576
  -sTOTAL_STACK=65536
  -sDYNAMIC_EXECUTION=0
  -sINCOMING_MODULE_JS_API=[]
  -fno-exceptions
  -fno-rtti
)
if(CMAKE_BUILD_TYPE STREQUAL "MinSizeRel")
  target_compile_options(baton_core PRIVATE -Oz -flto)
  target_compile_options(baton_wasm PRIVATE -Oz -flto)
  list(APPEND BATON_WASM_LINK -Oz -flto -sASSERTIONS=0)
else()
  list(APPEND BATON_WASM_LINK -sASSERTIONS=2)
endif()
target_link_options(baton_wasm PRIVATE ${BATON_WASM_LINK})
