# cc1d-cache: list, count, verify and purge a disk cache (docs/cache.md).
add_executable(cc1d-cache ${CMAKE_CURRENT_LIST_DIR}/cc1d-cache.cpp)
target_link_libraries(cc1d-cache PRIVATE cc1d_core)
target_compile_options(cc1d-cache PRIVATE -Wall -Wextra)
install(TARGETS cc1d-cache RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The tool's test runs the built tool (found beside the test binary: ../tools/), so it
# must be built first. The test target is defined later, in tests/; a deferred call
# adds the dependency once the whole project has been read.
function(cc1d_cache_tool_test_dependency)
  if(TARGET unit_test_cache_tool)
    add_dependencies(unit_test_cache_tool cc1d-cache)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL cc1d_cache_tool_test_dependency)
