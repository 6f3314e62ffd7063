# A library's sources compiled a few to a unit (CW_UNITY): the headers most files share
# (Boost's graph, nlohmann-json, CLI11, fmt) are parsed, and their inline code generated,
# once per batch instead of once per file. Names at a file's top level (an anonymous
# namespace included) must then be unique within its folder.
function(cw_unity target)
  if(CW_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 6)
    # GCC takes an included source for a header, and warns of a class there whose member's
    # type is a file's own (anonymous namespace): as the file's only definition, harmless.
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  endif()
endfunction()

# Tests, fuzz replays and their helpers are built at -O1 with line tables only (-g1) in a
# RelWithDebInfo build: the product's code they test is in the libraries, built as
# configured. A 2,300-line test file took 27 s at -O2 -g, 13 s at -O1 -g1 (bench/RESULTS.md).
function(cw_test_flags target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-O1;-g1>)
endfunction()

# Benchmarks keep the build's optimisation, with line tables only.
function(cw_bench_flags target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1>)
endfunction()

# One folder is one concept: cw_folder(NAME DEPS...) builds library cw_NAME from the
# folder's *.cc (not *_test.cc, *_perftest.cc, *_fuzz.cc) and, when there are any, the
# doctest binary NAME_tests from its *_test.cc, registered with CTest.
function(cw_folder name)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "_(test|perftest|fuzz)\\.cc$")
  list(FILTER srcs EXCLUDE REGEX "/main\\.cc$")
  if(srcs)
    add_library(cw_${name} STATIC ${srcs})
    target_link_libraries(cw_${name} PUBLIC ${ARGN})
    cw_unity(cw_${name})
  else()
    add_library(cw_${name} INTERFACE)
    target_link_libraries(cw_${name} INTERFACE ${ARGN})
  endif()
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(tests)
    add_executable(${name}_tests ${tests} ${CMAKE_SOURCE_DIR}/tests/doctest_main.cc)
    cw_test_flags(${name}_tests)
    target_link_libraries(${name}_tests PRIVATE cw_${name} doctest::doctest)
    target_compile_definitions(${name}_tests PRIVATE CW_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
    add_test(NAME ${name} COMMAND ${name}_tests WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  endif()
endfunction()

# cw_no_libbpf(TARGET): TARGET must not link the recorder (cw_kernel, libbpf). Checked twice:
# when configuring, over the targets it links (names the culprit at once), and by a test
# that looks in the built binary for libbpf (ldd and its symbols), in case a dependency
# comes in another way.
function(_cw_link_closure target out)
  set(seen ${${out}})
  get_target_property(type ${target} TYPE)
  set(props INTERFACE_LINK_LIBRARIES)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    list(APPEND props LINK_LIBRARIES)
  endif()
  foreach(prop ${props})
    get_target_property(libs ${target} ${prop})
    if(NOT libs)
      continue()
    endif()
    foreach(lib ${libs})
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
      if(lib IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${lib})
      if(TARGET ${lib})
        _cw_link_closure(${lib} seen)
      endif()
    endforeach()
  endforeach()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(_cw_check_no_libbpf target)
  set(closure "")
  _cw_link_closure(${target} closure)
  foreach(lib cw_kernel cw_recorder PkgConfig::LIBBPF)
    if(lib IN_LIST closure)
      message(FATAL_ERROR "${target} links ${lib}: the trace model and what only reads "
                          "traces must not link the recorder (libbpf)")
    endif()
  endforeach()
endfunction()

function(cw_no_libbpf target)
  # At the end of configuring, when every target it may link is defined.
  cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${CMAKE_SOURCE_DIR}]] CALL _cw_check_no_libbpf [[${target}]])")
  add_test(NAME ${target}-no-libbpf
           COMMAND ${CMAKE_SOURCE_DIR}/cmake/check_no_libbpf.sh $<TARGET_FILE:${target}>)
endfunction()
