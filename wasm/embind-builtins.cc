// embind registers every builtin type at start-up (bind.cpp, linked whole), whatever is
// bound: strings, val, memory views, floats, 64-bit integers and integers of every width.
// The boundary binds functions of int and void only (bindings.cc). wasm.cmake links the
// registrations with -Wl,--wrap, so that they land here: int goes on to embind's
// JavaScript (void is not wrapped), the rest register as nothing, and their JavaScript
// (UTF-8/16/32 strings, emval handles, memory views, floats, bools) is not emitted.
// A function bound over any other type never resolves: it stays undefined on the module
// (embind-functions.js).
#include <emscripten/bind.h>

#include <cstddef>

using emscripten::internal::TYPEID;
using emscripten::internal::TypeID;

extern "C" {

void __real__embind_register_integer(TYPEID type, const char* name, size_t size, long min, unsigned long max);

void __wrap__embind_register_integer(TYPEID type, const char* name, size_t size, long min, unsigned long max) {
  if (type == TypeID<int>::get()) __real__embind_register_integer(type, name, size, min, max);
}
void __wrap__embind_register_bool(TYPEID, const char*, size_t, bool, bool) {}
void __wrap__embind_register_bigint(TYPEID, const char*, size_t, long long, unsigned long long) {}
void __wrap__embind_register_float(TYPEID, const char*, size_t) {}
void __wrap__embind_register_std_string(TYPEID, const char*) {}
void __wrap__embind_register_std_wstring(TYPEID, size_t, const char*) {}
void __wrap__embind_register_emval(TYPEID, const char*) {}
void __wrap__embind_register_memory_view(TYPEID, unsigned, const char*) {}

}  // extern "C"
