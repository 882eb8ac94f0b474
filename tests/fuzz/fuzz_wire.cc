// libFuzzer target: the wire decoder. Any bytes must decode to an error or to a frame
// that re-encodes to the same bytes (the format has one encoding per frame).
#include <cstdint>
#include <cstdlib>

#include "core/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  baton::wire::Frame f;
  if (baton::wire::decode(data, size, f) != baton::wire::DecodeError::ok) return 0;
  baton::wire::FrameBytes again = baton::wire::encode(f);
  // A frame cut short by its fixed buffer would not decode.
  baton::wire::Frame g;
  if (baton::wire::decode(again.data(), again.size(), g) != baton::wire::DecodeError::ok) std::abort();
  if (baton::wire::encode(g) != again) std::abort();
  return 0;
}
