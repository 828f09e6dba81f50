# Fails the build, in one line, when a shipped library exports a symbol outside its API.
# Run after linking: cmake -DLIB=<file> -DNM=<nm> -DALLOW=<regex> -P check_exports.cmake
#
# Why: a library that exports C++ runtime symbols (std::, __cxa_*, operator new, GNU-unique
# template statics) interposes on every library loaded after it. A toolchain that links
# libstdc++ statically into shared objects (GPU hosts' /opt/gcc, manylinux devtoolset, conda
# compilers) made PyTorch's iostreams use our private copy and crash at `import torch`.
if(NOT NM)
  message(WARNING "rocprof: no nm found, exported symbols of ${LIB} not checked")
  return()
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" OUTPUT_VARIABLE _out
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "rocprof: `${NM} -D ${LIB}` failed: ${_err}")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
set(_bad "")
set(_n 0)
foreach(_line IN LISTS _lines)
  # "<address> <type> <name>[@version]"; absolute (A) symbols are version nodes.
  if(_line MATCHES "^[0-9a-fA-F]+ ([A-Za-z]) ([^@ ]+)")
    set(_type "${CMAKE_MATCH_1}")
    set(_name "${CMAKE_MATCH_2}")
    if(_type STREQUAL "A" OR _name MATCHES "${ALLOW}")
      continue()
    endif()
    math(EXPR _n "${_n} + 1")
    if(_n LESS 4)
      list(APPEND _bad "${_name}")
    endif()
  endif()
endforeach()
if(_n GREATER 0)
  get_filename_component(_lib "${LIB}" NAME)
  string(REPLACE ";" ", " _bad "${_bad}")
  # NOTICE prints the line unwrapped; FATAL_ERROR alone would reflow it.
  message(NOTICE "rocprof: ${_lib} exports ${_n} symbol(s) outside its API (${_bad}): "
          "C++ runtime symbols must stay hidden (cpp/exports/*.map, --exclude-libs,ALL)")
  message(FATAL_ERROR "exported-symbol check failed for ${_lib}")
endif()
