// What the null backend (null_backend.cpp) counts: the session's starts and stops of it.
#pragma once

namespace rocprof::null_backend {

struct Calls {
  int starts, stops;
};
Calls calls() noexcept;

}  // namespace rocprof::null_backend
