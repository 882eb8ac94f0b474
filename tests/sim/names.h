// Names for the core's event, effect, lock-mode and frame kinds, as traces and the
// scenario language spell them (the core's own vocabulary has to_string in types.h).
#pragma once
#include <string>
#include <vector>

#include "core/election.h"
#include "core/wire.h"

namespace baton {

const char* to_string(EventKind k);
const char* to_string(EffectKind k);
const char* to_string(LockMode m);

namespace wire {
const char* to_string(Kind k);
}

namespace sim {
// One line for a frame: "heartbeat claims ws@3", "goodbye ws successor b", or why it
// does not decode ("undecodable: truncated").
std::string describe_frame(const std::vector<uint8_t>& bytes);
}  // namespace sim

}  // namespace baton
