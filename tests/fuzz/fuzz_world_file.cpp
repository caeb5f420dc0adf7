// libFuzzer target: the world-file parser (phase 1, parse_world_string) on arbitrary bytes. Any
// input must either parse or throw impulse::Error: never crash, hang, leak or trip a sanitizer.
// Run from the source root: relative URDF paths then resolve as for models/worlds/*.xml (the
// seed corpus, .ci/run), so robots are loaded and stepped too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/world/world_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  try {
    const impulse::WorldDescription d = impulse::parse_world_string(xml, "models/worlds/fuzz.xml");
    impulse::World world;
    impulse::build_world(d, world);
    world.integrate();
  } catch (const impulse::Error&) {
  }
  return 0;
}
