// libFuzzer target: the URDF loader (load_urdf_string) on arbitrary bytes, then one step of the
// model in a World. Any input must either load or throw impulse::Error: never crash, hang, leak
// or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  try {
    const impulse::Model m = impulse::load_urdf_string(xml);
    impulse::World world;
    world.add_ground();
    world.add_articulated_system(m);
    world.integrate();
  } catch (const impulse::Error&) {
  }
  return 0;
}
