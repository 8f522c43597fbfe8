# PMSTORE_SANITIZE=address,undefined | thread: instrument every target of
# the project (the Debian libraries it links stay uninstrumented).
set(PMSTORE_SANITIZE "" CACHE STRING "Sanitizers to build with: address,undefined or thread")
if(PMSTORE_SANITIZE)
  set(flags -fsanitize=${PMSTORE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${flags})
  add_link_options(${flags})
  # Values the sanitizers need to see at run time.
  add_compile_definitions(PMSTORE_SANITIZE_BUILD=1)
endif()
