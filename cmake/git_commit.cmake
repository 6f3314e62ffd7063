# CW_GIT_COMMIT: the commit the sources are at, for `causeway --version`; "unknown" outside
# git. Read at configure time; a new commit re-runs the configure step (its reflog changes).
set(CW_GIT_COMMIT unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${CMAKE_SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit RESULT_VARIABLE rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND NOT commit STREQUAL "")
    set(CW_GIT_COMMIT ${commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${CMAKE_SOURCE_DIR} rev-parse --absolute-git-dir
                    OUTPUT_VARIABLE git_dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(EXISTS "${git_dir}/logs/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${git_dir}/logs/HEAD")
    endif()
  endif()
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/commit.h.in ${CMAKE_BINARY_DIR}/generated/cw_commit.h @ONLY)
