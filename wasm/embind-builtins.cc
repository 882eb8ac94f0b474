// embind registers every builtin type at start-up (bind.cpp, linked whole), whatever is
// bound: strings, val, memory views, floats, 64-bit integers and integers of every width.
// The boundary binds functions of int and void only (bindings.cc). The registrations are
// defined here, so they never reach embind's JavaScript: int goes on to embind-functions.js
// (void is not defined here and goes there directly), the rest register as nothing, and
// their JavaScript (UTF-8/16/32 strings, emval handles, memory views, floats, bools) is not
// emitted. Plain definitions, not -Wl,--wrap: the linker keeps a wrapped function out of
// LTO's inlining, so the calls that do nothing stayed, with the ~650 bytes of type names
// they pass; defined here, LTO drops both (356 B gzip of wasm). A function bound over any
// other type never resolves: it stays undefined on the module (embind-functions.js).
#include <emscripten/bind.h>

#include <cstddef>

using emscripten::internal::TYPEID;
using emscripten::internal::TypeID;

extern "C" {

// embind-functions.js: int's converters.
void baton_embind_register_int(TYPEID type);

void _embind_register_integer(TYPEID type, const char*, size_t, long, unsigned long) {
  if (type == TypeID<int>::get()) baton_embind_register_int(type);
}
void _embind_register_bool(TYPEID, const char*, size_t, bool, bool) {}
void _embind_register_bigint(TYPEID, const char*, size_t, long long, unsigned long long) {}
void _embind_register_float(TYPEID, const char*, size_t) {}
void _embind_register_std_string(TYPEID, const char*) {}
void _embind_register_std_wstring(TYPEID, size_t, const char*) {}
void _embind_register_emval(TYPEID, const char*) {}
void _embind_register_memory_view(TYPEID, unsigned, const char*) {}

}  // extern "C"
