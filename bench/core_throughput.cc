// Core throughput, native: frames decoded per second, and frames decoded *and* stepped
// through a follower per second. The same workload runs in wasm through the glue
// (bench/wasm-throughput.mjs); the ratio between the two is the cost of the boundary.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/election.h"

using namespace baton;

int main(int argc, char** argv) {
  long frames = argc > 1 ? std::atol(argv[1]) : 1000000;
  // A realistic heartbeat: a UUID-sized sender, two capabilities, two claims.
  std::vector<std::vector<uint8_t>> heartbeats;
  for (int i = 0; i < 1024; ++i) {
    wire::Frame f;
    f.kind = wire::Kind::heartbeat;
    f.sender = "3f1c2a9e-5b7d-4c1e-9a2b-7d8e6f5a4b3c";
    f.generation = 1;
    f.app_version = "1.4.2";
    f.start_ms = 1760000000000ull;
    f.tick_seq = static_cast<uint64_t>(i + 2);
    f.refresh_ms = 1000;
    f.capabilities = {"ws.owner.v1", "auth.refresh.v1"};
    f.claims = {{"websocket-owner", 41}, {"token-refresh", 7}};
    heartbeats.push_back(wire::encode(f));
  }

  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  size_t ok = 0;
  wire::Frame out;
  for (long i = 0; i < frames; ++i) {
    const auto& b = heartbeats[static_cast<size_t>(i) & 1023];
    ok += wire::decode(b.data(), b.size(), out) == wire::DecodeError::ok;
  }
  double decode_s = std::chrono::duration<double>(clock::now() - t0).count();

  Config c;
  c.id = "follower";
  c.capabilities = {"ws.owner.v1"};
  Election election(c);
  Event join;
  join.kind = EventKind::join;
  join.resource = "websocket-owner";
  election.step(join);
  join.resource = "token-refresh";
  election.step(join);
  double now = 1;
  auto t1 = clock::now();
  size_t effects = 0;
  for (long i = 0; i < frames; ++i) {
    const auto& b = heartbeats[static_cast<size_t>(i) & 1023];
    Event e;
    e.kind = EventKind::message;
    e.now_ms = now;
    e.wall_ms = now;
    now += 0.01;
    e.data = b.data();
    e.size = b.size();
    effects += election.step(e).size();
  }
  double step_s = std::chrono::duration<double>(clock::now() - t1).count();

  std::printf("core (native): heartbeat frame %zu bytes\n", heartbeats[0].size());
  std::printf("core (native): decode        %12.0f frames/s (%zu ok)\n", frames / decode_s, ok);
  std::printf("core (native): decode + step %12.0f frames/s (%zu effects)\n", frames / step_s, effects);
  return ok == static_cast<size_t>(frames) ? 0 : 1;
}
