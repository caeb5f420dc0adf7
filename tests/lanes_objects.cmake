# The lane kernels compiled for AVX2 and AVX-512 (src/dynamics/lanes_w4.cpp, lanes_w8.cpp; see
# src/dynamics/lanes_kernels.inc) define no code but their entry points: an inline function of a
# shared header instantiated there (a weak symbol, W) could be the copy the linker keeps for the
# baseline callers too, which would then crash on a CPU without those instructions. CPUs that have
# them never show it, so this checks the objects themselves. Run by ctest:
#   cmake -DNM=nm -DLIBRARY=build/lib/libimpulse.a -P tests/lanes_objects.cmake
set(CHECK lanes_objects)
include(${CMAKE_CURRENT_LIST_DIR}/nm_symbols.cmake)
set(member "")
set(seen 0)
set(problems "")
foreach(line IN LISTS lines)
  if(line MATCHES "^(.*\\.o):$")
    set(member "${CMAKE_MATCH_1}")
  elseif(member MATCHES "lanes_w[0-9]+\\.cpp\\.o$" AND line MATCHES " [TWV] (.*)$")
    set(symbol "${CMAKE_MATCH_1}")
    if(line MATCHES " T " AND symbol MATCHES "^impulse::lanes_abi::(step_dynamics|ltdl_factor|ltdl_solve|transpose|implicit_pd|pd_second_pass|dense_products|contact_paths|gather|scatter|copy_out|velocity_update|bisection_sweep)_w[0-9]+\\(")
      math(EXPR seen "${seen} + 1")
    elseif(line MATCHES " [TW] ")
      string(APPEND problems "\n  ${member}: ${line}")
    endif()
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "lanes_objects: the lane kernels define shared code:${problems}")
endif()
if(NOT seen EQUAL 39)
  message(FATAL_ERROR "lanes_objects: expected the 39 entry points of lanes_w2/4/8.cpp in ${LIBRARY}, found ${seen}")
endif()
