# Every dependency is a Debian package (scripts/setup installs them); nothing
# is vendored or downloaded at configure time.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PMEM2 REQUIRED IMPORTED_TARGET libpmem2)
find_package(absl REQUIRED)
find_package(Threads REQUIRED)
find_package(nlohmann_json REQUIRED)

find_library(NUMA_LIBRARY numa REQUIRED)
find_path(NUMA_INCLUDE_DIR numa.h REQUIRED)
add_library(numa::numa UNKNOWN IMPORTED)
set_target_properties(numa::numa PROPERTIES
  IMPORTED_LOCATION ${NUMA_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${NUMA_INCLUDE_DIR})

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(xxhash::xxhash UNKNOWN IMPORTED)
set_target_properties(xxhash::xxhash PROPERTIES
  IMPORTED_LOCATION ${XXHASH_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${XXHASH_INCLUDE_DIR})

if(PMSTORE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(PMSTORE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
