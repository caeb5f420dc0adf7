# Included by the checks on the library's symbols (lanes_objects.cmake, isa_objects.cmake):
# requires -DNM and -DLIBRARY, runs `nm -C --defined-only` on LIBRARY and sets `lines` to its
# output, one list entry per line. CHECK names the including check in its errors.
foreach(var NM LIBRARY)
  if(NOT ${var})
    message(FATAL_ERROR "${CHECK}: -D${var}=... is required")
  endif()
endforeach()
execute_process(COMMAND ${NM} -C --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols ERROR_VARIABLE nm_error
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CHECK}: ${NM} failed on ${LIBRARY}: ${nm_error}")
endif()
string(REPLACE ";" "\\;" symbols "${symbols}")
string(REPLACE "\n" ";" lines "${symbols}")
