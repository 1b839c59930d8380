# TACHYON_SANITIZE=address,undefined (the asan preset) or thread.
set(TACHYON_SANITIZE "" CACHE STRING "Sanitizers to build with (e.g. address,undefined)")
if(TACHYON_SANITIZE)
  add_compile_options(-fsanitize=${TACHYON_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  string(REPLACE ",fuzzer-no-link" "" TACHYON_SANITIZE_LINK "${TACHYON_SANITIZE}")
  add_link_options(-fsanitize=${TACHYON_SANITIZE_LINK})
  # Boost.Asio's handler fences (std_fenced_block) are not modelled by ThreadSanitizer, which GCC
  # says with -Wtsan; Asio's hand-offs between threads go through its scheduler's mutex, which is.
  if(TACHYON_SANITIZE STREQUAL "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
endif()
# Sanitizer builds also check thread ownership (core/thread_owner.hpp), as Debug builds do.
if(TACHYON_SANITIZE)
  add_compile_definitions(TACHYON_CHECK_OWNERS=1)
endif()
