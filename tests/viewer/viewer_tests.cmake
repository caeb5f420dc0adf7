# Tests of recordings, plots and the viewer that run the `impulse` binary from Python and node
# (included by tests/CMakeLists.txt). Each exits 77 (skipped, with a message) when its tools are
# missing; CI installs them (scripts/install-deps.sh).
if(NOT TARGET impulse_cli)
  return()
endif()
set(IMPULSE_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with numpy and matplotlib for the recording and plot tests")
add_test(NAME record_python_roundtrip
  COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../record/test_recording_python.py
          $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/record_python)
set_tests_properties(record_python_roundtrip PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
