// libFuzzer target: the heightfield image reader (Heightfield::from_pgm_data) on arbitrary bytes.
// Any input must either give a heightfield or throw impulse::Error: never crash, hang, exhaust
// memory or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "impulse/collision/heightfield.hpp"
#include "impulse/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const impulse::Heightfield h = impulse::Heightfield::from_pgm_data(bytes, "fuzz.pgm", 4, 3, 0.5);
    impulse::Scalar z;
    // the centre lies on the grid, between black and white
    if (!h.height(0, 0, z) || !(z >= -1e-12 && z <= 0.5 + 1e-12)) __builtin_trap();
  } catch (const impulse::Error&) {
  }
  return 0;
}
