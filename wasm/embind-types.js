// --js-library (wasm.cmake): embind registers every builtin type at start-up, whatever is
// bound. The boundary binds functions of integers only (bindings.cc), so the types it never
// uses register as nothing, and their JS (UTF-8/16/32 strings, emval handles, memory views,
// floats, bools: about 1.7 KB gzip) is not emitted. A function bound over one of them would
// never be defined on the module (embind-functions.js).
mergeInto(LibraryManager.library, {
  _embind_register_bool__deps: [],
  _embind_register_bool: function() {},
  _embind_register_float__deps: [],
  _embind_register_float: function() {},
  _embind_register_std_string__deps: [],
  _embind_register_std_string: function() {},
  _embind_register_std_wstring__deps: [],
  _embind_register_std_wstring: function() {},
  _embind_register_emval__deps: [],
  _embind_register_emval: function() {},
  _embind_register_memory_view__deps: [],
  _embind_register_memory_view: function() {},
});
