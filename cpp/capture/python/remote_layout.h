/* Where CPython keeps what a read-only sampler of another process needs (`rocprof attach PID
 * --method read-only`): the offsets of the fields on the way from _PyRuntime to each thread's
 * frames and from a frame to its code object's names and line table, for one minor version.
 * The reader (remote_frames.hpp) follows them with process_vm_readv and runs no code in the
 * target. Two sources, both in remote_layout.c:
 *   - the _Py_DebugOffsets table a 3.13+ interpreter keeps at the start of _PyRuntime, for
 *     the versions whose table layout this file knows (3.13), whatever the build: taken first;
 *   - this build's interpreter headers (offsetof, Py_BUILD_CORE), for targets of the minor
 *     version _core is built for.
 * Plain C: no Python header is seen by its users. */
#ifndef ROCPROF_CAPTURE_PYTHON_REMOTE_LAYOUT_H
#define ROCPROF_CAPTURE_PYTHON_REMOTE_LAYOUT_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define RP_NO_OFFSET UINT64_MAX

struct rp_remote_layout {
  uint32_t version_hex; /* major.minor of the layout (PY_VERSION_HEX & 0xffff0000) */
  const char* source;   /* "headers" or "debug offsets" (for messages and metadata) */
  /* _PyRuntimeState */
  uint64_t runtime_interpreters_head;
  /* PyInterpreterState */
  uint64_t interp_next, interp_threads_head;
  /* PyThreadState; current_frame is the _PyCFrame pointer (3.11/3.12) when
   * cframe_current_frame is not RP_NO_OFFSET, else the frame itself (3.13+). */
  uint64_t tstate_next, tstate_native_thread_id, tstate_current_frame;
  uint64_t cframe_current_frame;
  uint64_t tstate_size; /* bytes read per thread state: covers the fields above */
  /* _PyInterpreterFrame; instr_ptr is prev_instr (the code unit before the next one) up to
   * 3.12 and the current instruction from 3.13: both index the line table the same way. */
  uint64_t frame_previous, frame_code, frame_instr_ptr, frame_owner;
  uint64_t frame_size;
  int owner_cstack; /* the owner value of the C-stack shim frames (3.12+), -1: none */
  /* PyCodeObject */
  uint64_t code_filename, code_qualname, code_linetable, code_firstlineno, code_adaptive;
  /* PyObject, bytes, str */
  uint64_t ob_type;
  uint64_t bytes_size, bytes_sval;
  uint64_t unicode_state, unicode_length;
  uint64_t unicode_ascii_size;   /* data of a compact ASCII string follows */
  uint64_t unicode_compact_size; /* data of a compact non-ASCII string follows */
  uint32_t unicode_kind_shift, unicode_kind_mask, unicode_compact_bit, unicode_ascii_bit;
};

/* The minor version _core is built for (PY_VERSION_HEX & 0xffff0000). */
uint32_t rp_build_version(void);

/* The layout of this build's interpreter, from its headers. 0 when the build's version has
 * no _PyInterpreterFrame (3.10 and older: not read). */
int rp_layout_from_headers(struct rp_remote_layout* out);

/* Bytes of _PyRuntime to read for rp_layout_from_debug_offsets. */
#define RP_DEBUG_OFFSETS_BYTES 1024

/* The layout a target states in the _Py_DebugOffsets at the start of its _PyRuntime (`head`,
 * `n` bytes of it). Returns 1 when read; 0 when there is no table there (no cookie: before
 * 3.13); -1 when there is one of a version whose table this build does not know; -2 for a
 * free-threaded interpreter (other object layouts). *version_hex is set whenever a table is
 * found. */
int rp_layout_from_debug_offsets(const void* head, size_t n, struct rp_remote_layout* out,
                                 uint32_t* version_hex);

#ifdef __cplusplus
}
#endif
#endif
