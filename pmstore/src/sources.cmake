# Sources of the store library (the public API in include/pmstore/).
set(PMSTORE_STORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/version.cc
  ${CMAKE_CURRENT_LIST_DIR}/allocator.cc
  ${CMAKE_CURRENT_LIST_DIR}/format.cc
  ${CMAKE_CURRENT_LIST_DIR}/leaf_index.cc
  ${CMAKE_CURRENT_LIST_DIR}/misc.cc
  ${CMAKE_CURRENT_LIST_DIR}/persister.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool.cc
  ${CMAKE_CURRENT_LIST_DIR}/separator_map.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_check.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_impl.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_write.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_run.cc
  ${CMAKE_CURRENT_LIST_DIR}/store_read.cc
  ${CMAKE_CURRENT_LIST_DIR}/transaction.cc
  ${CMAKE_CURRENT_LIST_DIR}/undo_log.cc
)
