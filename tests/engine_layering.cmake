# The layering of docs/architecture.md ("Layers"): the engine library (src/, include/impulse/
# except tasks/) holds no task and no benchmark code, and none of its sources includes a header of
# the layers above it (impulse/tasks/, the apps' cli/, scenarios/ and bench/). Run by ctest:
#   cmake -DNM=nm -DLIBRARY=build/lib/libimpulse.a -DSOURCE_DIR=. -P tests/engine_layering.cmake
foreach(var NM LIBRARY SOURCE_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "engine_layering: -D${var}=... is required")
  endif()
endforeach()

set(problems "")

# 1. symbols defined in the engine library
execute_process(COMMAND ${NM} -C --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols ERROR_VARIABLE nm_error
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "engine_layering: ${NM} failed on ${LIBRARY}: ${nm_error}")
endif()
foreach(word "impulse::tasks::" "LocomotionTask" "LocomotionSettings" "bench_collision" "CollisionBenchResult")
  string(REGEX MATCH "[^\n]*${word}[^\n]*" line "${symbols}")
  if(line)
    string(APPEND problems "\n  ${LIBRARY} defines '${word}': ${line}")
  endif()
endforeach()

# 2. includes in the engine's sources
file(GLOB_RECURSE sources ${SOURCE_DIR}/src/*.cpp ${SOURCE_DIR}/src/*.hpp ${SOURCE_DIR}/include/impulse/*.hpp)
list(FILTER sources EXCLUDE REGEX "/src/tasks/|/include/impulse/tasks/")
foreach(source IN LISTS sources)
  file(STRINGS ${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](impulse/tasks/|cli/|scenarios/|bench/)")
  foreach(line IN LISTS includes)
    file(RELATIVE_PATH path ${SOURCE_DIR} ${source})
    string(APPEND problems "\n  ${path} includes a header of a layer above the engine: ${line}")
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "engine_layering: the engine library reaches above itself:${problems}")
endif()
