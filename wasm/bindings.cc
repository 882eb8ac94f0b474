// The one file that knows about Emscripten: a handful of functions over integers and one
// shared byte buffer (boundary.h says what the records in it look like). The glue writes a
// record at `buffer()`, calls one function with its length, and reads the answer from the
// same place. One call per event; no strings, objects or exceptions cross.
//
// embind binds them all but `step`, which runs once per event and is a plain wasm export
// (module-post.js): embind's generic invoker costs about 30 times the call itself.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cstdarg>
#include <cstdint>

#include "boundary.h"

namespace baton::boundary {
namespace {

alignas(8) uint8_t io[kBufferBytes];
// Open sessions (null where one was closed); a handle is an index + 1, so 0 means none.
baton::GrowingArray<Session*> sessions;

Session* find(int handle) {
  if (handle < 1 || static_cast<size_t>(handle) > sessions.size()) return nullptr;
  return sessions[handle - 1];
}

int buffer() { return static_cast<int>(reinterpret_cast<uintptr_t>(io)); }

// A config record of `length` bytes -> a handle, or 0 when the record is malformed.
int open(int length) {
  Config config;
  if (length < 0 || static_cast<size_t>(length) > kBufferBytes || !read_config(io, length, config)) return 0;
  for (size_t i = 0; i < sessions.size(); ++i) {
    if (!sessions[i]) {
      sessions[i] = new Session(config);
      return static_cast<int>(i + 1);
    }
  }
  sessions.push_back(new Session(config));
  return static_cast<int>(sessions.size());
}

void close(int handle) {
  if (!find(handle)) return;
  delete sessions[handle - 1];
  sessions[handle - 1] = nullptr;
}

int ask(int handle, int length) {
  if (length < 0 || static_cast<size_t>(length) > kBufferBytes) return -1;
  Session* s = find(handle);
  return s ? s->ask(io, length, io, kBufferBytes) : -1;
}

int live() {
  int n = 0;
  for (Session* s : sessions) n += s ? 1 : 0;
  return n;
}

}  // namespace
}  // namespace baton::boundary

// An event record of `length` bytes for session `handle` -> the result's length, or -1.
extern "C" EMSCRIPTEN_KEEPALIVE int baton_step(int handle, int length) {
  using namespace baton::boundary;
  Session* s = find(handle);
  if (!s || length < 0 || static_cast<size_t>(length) > kBufferBytes) return -1;
  return s->step(io, length, io, kBufferBytes);
}

// embind names types with sprintf("%p"), which pulls printf into the module; this prints
// the one pointer in hex instead (linked with -Wl,--wrap=siprintf, see wasm.cmake).
extern "C" int __wrap_siprintf(char* out, const char* format /* always "%p" */, ...) {
  va_list args;
  va_start(args, format);
  uintptr_t p = reinterpret_cast<uintptr_t>(va_arg(args, void*));
  va_end(args);
  char digits[2 * sizeof p];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[p & 15];
    p >>= 4;
  } while (p);
  int len = 0;
  out[len++] = '0';
  out[len++] = 'x';
  while (n) out[len++] = digits[--n];
  out[len] = 0;
  return len;
}

EMSCRIPTEN_BINDINGS(baton) {
  using namespace baton::boundary;
  emscripten::function("buffer", &buffer);
  emscripten::function("open", &open);
  emscripten::function("close", &close);
  emscripten::function("ask", &ask);
  emscripten::function("live", &live);
}
