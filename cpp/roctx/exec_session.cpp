// libroctx64's exec family acts on the session of the process it is loaded into.
#include "roctx/exec_hooks.hpp"
#include "session/session.hpp"

namespace rocprof::exec_hooks {
void before() { session::before_exec(); }
void after_failed() { session::after_failed_exec(); }
}  // namespace rocprof::exec_hooks
