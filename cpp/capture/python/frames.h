/* The CPython-facing half of the Python-frames module (the sampler and GPU launch sites), in C
 * so that it can include the interpreter's internal frame headers (Py_BUILD_CORE) of exactly
 * the Python version _core is built for. Everything else is C++ and never sees those headers.
 * Walks run only under the module's fault guard (guard.hpp). */
#ifndef ROCPROF_CAPTURE_PYTHON_FRAMES_H
#define ROCPROF_CAPTURE_PYTHON_FRAMES_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Words per Python frame in a raw sample: code object, its co_name pointer (identity check
 * at resolution), and (instruction index << 32) | kEntry bit | co_firstlineno. */
#define RP_PY_WORDS 3
#define RP_PY_ENTRY (1ull << 31)

/* Async-signal-safe: reads only the calling thread's own frame chain (no Python API, no
 * locks, no allocation). Walks at most `max_frames` frames that run code, innermost first, and
 * writes those that have started (their first instruction ran); returns the count written, or
 * -1 when the thread has no Python thread state (not a Python thread, or exiting). */
int rp_walk_current(uint64_t* out, int max_frames);
/* As rp_walk_current, from `first` (a _PyInterpreterFrame, or a PyFrameObject before 3.11;
 * NULL: no frames) instead of the thread's current frame: test hooks walk bad pointers. */
int rp_walk_from(const void* first, uint64_t* out, int max_frames);

/* The thread method of sampling (capture/sampling/thread_reader.cpp): another thread's frames,
 * read while that thread runs. `tstate` is its PyThreadState (rp_this_thread_state, or
 * rp_for_each_thread's), `tid` its native id: a state whose id no longer matches (freed and
 * reused) is not walked (-1). Walks as rp_walk_from; a frame whose code object is not one (the
 * thread popped and reused it mid-read) ends the walk as torn (RP_WALK_TORN). */
#define RP_WALK_TORN (-4)
int rp_walk_thread(const void* tstate, unsigned long tid, uint64_t* out, int max_frames);
/* The calling thread's Python thread state (NULL: none). */
const void* rp_this_thread_state(void);

/* A chain's identity only, for keying it: RP_PY_KEY_WORDS words a frame, the code object and
 * (instruction index << 32), innermost first. Walks the frames rp_walk_current walks and writes
 * every one: it reads the frames alone, not their code objects (3.13+: their type word only; a
 * deep chain's code objects are mostly out of cache), so frames that have not started yet are
 * kept. Returns the count written, or -1 as rp_walk_current. */
#define RP_PY_KEY_WORDS 2
int rp_walk_keys_current(uint64_t* out, int max_frames);

/* Whether the calling thread has a Python thread state (async-signal-safe: a TLS read). */
int rp_is_python_thread(void);

/* Whether the interpreter is initialised and not finalising. */
int rp_python_running(void);

/* GIL helpers for the resolver thread; rp_gil_ensure returns 0 when Python is not usable
 * (not initialised, or finalising) and nothing was taken. */
int rp_gil_ensure(void);
void rp_gil_release(void);
/* In a fork child, before any rp_gil_ensure: forgets the parent's waiters. */
void rp_gil_fork_child(void);
/* Releases the GIL around a blocking call when the calling thread holds it. */
void* rp_save_if_held(void);
void rp_restore(void* saved);

/* Under the GIL: calls fn(ctx, native_tid, thread state) for every thread state of the main
 * interpreter (3.10: every thread threading knows, the state NULL where none matches). */
void rp_for_each_thread(void (*fn)(void* ctx, unsigned long tid, const void* tstate), void* ctx);

/* Under the GIL. Validates that `code` still is the code object the sample saw (it may have
 * been freed since: reads go through process_vm_readv, which fails instead of faulting), then
 * takes a strong reference (kept for the session, so the address is never reused while
 * cached) and returns its name, qualified name and file as UTF-8 (valid while referenced).
 * Returns 0 when the object is gone. */
int rp_code_info(uint64_t code, uint64_t name_ptr, uint32_t firstlineno, const char** func,
                 const char** file);
/* Under the GIL, for a code object rp_code_info accepted: line of instruction `lasti`. */
int rp_code_line(uint64_t code, uint32_t lasti);
/* Address range of the interpreter's frame-evaluation function (for native merging). */
void rp_eval_range(uint64_t* lo, uint64_t* hi);

#ifdef __cplusplus
}
#endif
#endif
