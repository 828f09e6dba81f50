// What the exec family of roctx/exec.cpp does around the real exec: the library it is built
// into says (libroctx64: its session, roctx/exec_session.cpp; librocprof_exec: the session
// that registered itself, inject/exec_preload.cpp).
#pragma once

namespace rocprof::exec_hooks {
void before();        // the database is closed: the new image replaces this one's memory
void after_failed();  // still this program: recording resumes
}  // namespace rocprof::exec_hooks
