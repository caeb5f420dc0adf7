// Heap-allocation counter for "no allocation after Data construction" tests. malloc, calloc,
// realloc and aligned allocations are interposed in tests/dynamics/test_no_alloc.cpp (which
// defines these functions once for the whole test binary; Eigen allocates with std::malloc and
// operator new ends in malloc, so both are seen). Not available under AddressSanitizer.
#pragma once

namespace impulse {
namespace test {

// True when the counter works in this build (false under AddressSanitizer).
bool alloc_counter_available();
// Starts counting (resets the count) / stops counting and returns the number of allocations.
void alloc_counter_start();
long alloc_counter_stop();
// Net bytes held by the allocations made while counting (usable sizes of blocks allocated minus
// those freed, blocks from before the start included when freed), read after stop.
long alloc_counter_bytes();

}  // namespace test
}  // namespace impulse
