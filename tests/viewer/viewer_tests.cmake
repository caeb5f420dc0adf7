# Tests of recordings, plots and the viewer that run the `impulse` binary from Python and node
# (included by tests/CMakeLists.txt). Each exits 77 (skipped, with a message) when its tools are
# missing; CI installs them (scripts/install-deps.sh).
if(NOT TARGET impulse_cli)
  return()
endif()
set(IMPULSE_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with numpy and matplotlib for the recording and plot tests")
add_test(NAME record_python_roundtrip
  COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../record/test_recording_python.py
          $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/record_python
          $<TARGET_FILE:impulse_tests>)
add_test(NAME plot_pngs
  COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../record/test_plot.py
          $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/plot)
set_tests_properties(record_python_roundtrip plot_pngs PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# COST: the longest entries of the suite (12-25 s) start first under ctest -j, so that on a fresh
# build tree (no timings from an earlier run, as in CI) they do not run alone at the end.
set_tests_properties(plot_pngs PROPERTIES COST 20)
# The HTTP server's limits and security rules, and a request fuzzer (12 s here; longer locally:
# http_fuzz.py IMPULSE SOURCE WORK --seconds 600). Under the sanitizer build they exercise its
# `impulse` binary.
add_test(NAME viewer_http
  COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test_http_server.py
          $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/viewer_http)
add_test(NAME viewer_http_fuzz
  COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/http_fuzz.py
          $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/viewer_http_fuzz --seconds 12)
set_tests_properties(viewer_http viewer_http_fuzz PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 COST 25)

find_program(IMPULSE_NODE node)
if(IMPULSE_NODE)
  add_test(NAME viewer_browser
    COMMAND ${IMPULSE_NODE} ${CMAKE_CURRENT_LIST_DIR}/browser_test.mjs
            $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/viewer)
  set_tests_properties(viewer_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 COST 30)
else()
  message(STATUS "viewer_browser test: skipped (no node; install nodejs: scripts/install-deps.sh)")
endif()

# One corpus of bad recordings (tests/record/corpus, tests/record/make_corpus.py), one verdict per
# file in its manifest: the Python reader and the page's JavaScript reader (node, no browser) must
# give it, as the C++ reader does (record/test_recording_corpus). And the CLI on inputs that are
# not regular files or recordings with nothing to show.
# (The two readers' entries run no binary of the build: the sanitizer build leaves them to Release.)
if(NOT IMPULSE_SANITIZE)
  add_test(NAME record_corpus_python
    COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../record/test_recording_corpus.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(record_corpus_python PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
add_test(NAME record_cli_inputs
  COMMAND ${IMPULSE_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../record/test_cli_inputs.py
          $<TARGET_FILE:impulse_cli> ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/record_cli_inputs)
set_tests_properties(record_cli_inputs PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
if(IMPULSE_NODE AND NOT IMPULSE_SANITIZE)
  add_test(NAME record_corpus_js
    COMMAND ${IMPULSE_NODE} ${CMAKE_CURRENT_LIST_DIR}/../record/test_recording_corpus.mjs ${PROJECT_SOURCE_DIR})
  set_tests_properties(record_corpus_js PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
endif()
