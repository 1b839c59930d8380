add_library(tachyon_warnings INTERFACE)
target_compile_options(tachyon_warnings INTERFACE -Wall -Wextra -Werror -Wno-error=deprecated-declarations)
