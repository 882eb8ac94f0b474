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

// What the glue holds by handle: an index + 1, so 0 means none. A closed slot is reused.
// Untyped, so that one copy of this code serves every kind of object.
class Handles {
 public:
  void* find(int handle) const {
    if (handle < 1 || static_cast<size_t>(handle) > objects_.size()) return nullptr;
    return objects_[handle - 1];
  }
  int add(void* object) {
    for (size_t i = 0; i < objects_.size(); ++i) {
      if (!objects_[i]) {
        objects_[i] = object;
        return static_cast<int>(i + 1);
      }
    }
    objects_.push_back(object);
    return static_cast<int>(objects_.size());
  }
  // The object of `handle` (null if none), its slot freed: the caller deletes it.
  void* take(int handle) {
    void* object = find(handle);
    if (object) objects_[handle - 1] = nullptr;
    return object;
  }
  int live() const {
    int n = 0;
    for (void* object : objects_) n += object ? 1 : 0;
    return n;
  }

 private:
  baton::GrowingArray<void*> objects_;
};

Handles sessions;  // election cores (Session)
Handles fences;    // fences of their own (tab-baton's Fence)

Session* session(int handle) { return static_cast<Session*>(sessions.find(handle)); }

bool fits(int length) { return length >= 0 && static_cast<size_t>(length) <= kBufferBytes; }

int buffer() { return static_cast<int>(reinterpret_cast<uintptr_t>(io)); }

// A config record of `length` bytes -> a handle, or 0 when the record is malformed.
int open(int length) {
  Config config;
  if (!fits(length) || !read_config(io, length, config)) return 0;
  return sessions.add(new Session(config));
}

void close(int handle) { delete static_cast<Session*>(sessions.take(handle)); }

int ask(int handle, int length) {
  Session* s = session(handle);
  return s && fits(length) ? s->ask(io, length, io, kBufferBytes) : -1;
}

int live() { return sessions.live(); }

int fence_open() { return fences.add(new Fence()); }

void fence_close(int handle) { delete static_cast<Fence*>(fences.take(handle)); }

int fence_ask(int handle, int length) {
  Fence* f = static_cast<Fence*>(fences.find(handle));
  return f && fits(length) ? ask_fence(*f, io, length, io, kBufferBytes) : -1;
}

}  // namespace
}  // namespace baton::boundary

// An event record of `length` bytes for session `handle` -> the result's length, or -1.
extern "C" EMSCRIPTEN_KEEPALIVE int baton_step(int handle, int length) {
  using namespace baton::boundary;
  Session* s = session(handle);
  return s && fits(length) ? s->step(io, length, io, kBufferBytes) : -1;
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
  emscripten::function("fenceOpen", &fence_open);
  emscripten::function("fenceClose", &fence_close);
  emscripten::function("fenceAsk", &fence_ask);
}
