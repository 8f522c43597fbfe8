# Sources of the store library (the public API in include/pmstore/).
set(PMSTORE_STORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/version.cc
)
