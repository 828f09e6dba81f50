# The capture context is a backend's one door (capture/context.hpp): no source under
# CAPTURE_DIR includes the session, the buffers, the storage or the Python bindings of the
# core, nor pybind11, nor reaches past its folder with "../". A test beside a backend
# (test_*.cpp) may include storage/ to read back what the sink wrote.
#   cmake -DCAPTURE_DIR=cpp/capture -P check_capture_includes.cmake
file(GLOB_RECURSE _files "${CAPTURE_DIR}/*.cpp" "${CAPTURE_DIR}/*.hpp" "${CAPTURE_DIR}/*.h"
     "${CAPTURE_DIR}/*.c" "${CAPTURE_DIR}/*.inc")
set(_bad "")
foreach(_f IN LISTS _files)
  get_filename_component(_name "${_f}" NAME)
  file(STRINGS "${_f}" _lines REGEX "^[ \t]*#[ \t]*include")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "[<\"](session|buffer|bindings|pybind11)/" OR _line MATCHES "[<\"][^>\"]*\\.\\./"
       OR (_line MATCHES "[<\"]storage/" AND NOT _name MATCHES "^test_"))
      file(RELATIVE_PATH _rel "${CAPTURE_DIR}" "${_f}")
      string(STRIP "${_line}" _line)
      list(APPEND _bad "${_rel}: ${_line}")
    endif()
  endforeach()
endforeach()
list(LENGTH _files _n)
if(_n EQUAL 0)
  message(FATAL_ERROR "no sources under ${CAPTURE_DIR}")
endif()
if(_bad)
  list(JOIN _bad "\n  " _text)
  message(FATAL_ERROR "capture sources reach the core past capture/context.hpp:\n  ${_text}")
endif()
message(STATUS "${_n} capture sources include only the capture context of the core")
