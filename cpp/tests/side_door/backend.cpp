// A backend reaching the session past its context: check_capture_includes.cmake must refuse it
// (ctest: capture_check_finds_a_side_door).
#include "capture/context.hpp"
#include "session/session.hpp"
