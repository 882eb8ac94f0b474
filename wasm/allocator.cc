// malloc and free for the WebAssembly build (linked with -sMALLOC=none, wasm.cmake): 749 B
// gzip of wasm less than emmalloc.
//
// Blocks come in powers of two and are never split or merged: a freed block goes on the
// free list of its size and serves the next allocation of that size. That wastes at most
// half of each block, and the heap never shrinks, which suits the core: its tables are
// bounded (fixed.h, wire.h), it allocates few sizes (sessions, the growing arrays of a
// step), and the same sizes again at every step, so the heap stops growing after warm-up
// (tests/node/leaks.test.js). The native build keeps the system allocator.
#include <cstddef>
#include <cstdint>

// Grows the wasm memory to at least `requested` bytes; 0 when it cannot (heap-growth.js).
extern "C" int emscripten_resize_heap(size_t requested);
// The end of the static data and the stack: the heap starts here (set by the linker).
extern "C" unsigned char __heap_base;

namespace {

// Room before each block's payload for its size class, and the payload's alignment: 16, as
// for max_align_t.
constexpr size_t kHeader = 16;
constexpr unsigned kMinClass = 5;   // 32 B: the header and 16 B of payload
constexpr unsigned kMaxClass = 31;  // 2 GiB, the most a wasm32 memory here can grow to

void* free_blocks[kMaxClass + 1];  // per size class, a list linked through the blocks
uintptr_t heap_end = reinterpret_cast<uintptr_t>(&__heap_base);

void* take_from_heap(size_t bytes) {
  uintptr_t at = heap_end;
  uintptr_t end = at + bytes;
  size_t memory_bytes = __builtin_wasm_memory_size(0) * 65536;
  if (end < at || (end > memory_bytes && !emscripten_resize_heap(end))) return nullptr;
  heap_end = end;
  return reinterpret_cast<void*>(at);
}

}  // namespace

extern "C" void* malloc(size_t size) {
  if (size > (size_t{1} << kMaxClass) - kHeader) return nullptr;
  unsigned size_class = kMinClass;
  while ((size_t{1} << size_class) < size + kHeader) ++size_class;
  void* block = free_blocks[size_class];
  if (block) {
    free_blocks[size_class] = *static_cast<void**>(block);
  } else {
    block = take_from_heap(size_t{1} << size_class);
    if (!block) return nullptr;
  }
  *static_cast<unsigned*>(block) = size_class;
  return static_cast<unsigned char*>(block) + kHeader;
}

extern "C" void free(void* payload) {
  if (!payload) return;
  void* block = static_cast<unsigned char*>(payload) - kHeader;
  unsigned size_class = *static_cast<unsigned*>(block);
  *static_cast<void**>(block) = free_blocks[size_class];
  free_blocks[size_class] = block;
}
