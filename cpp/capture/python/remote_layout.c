/* Layouts for the read-only sampler of other processes; see remote_layout.h. Compiled with
 * this build's interpreter headers, internal ones included (Py_BUILD_CORE), like frames.c. */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#endif
#include <string.h>

#include "remote_layout.h"

uint32_t rp_build_version(void) { return (uint32_t)PY_VERSION_HEX & 0xffff0000u; }

/* Bit positions of kind, compact and ascii in PyASCIIObject.state (bit fields: found by
 * setting each in a zeroed object and looking at the word). */
static void unicode_state_bits(struct rp_remote_layout* out) {
  PyASCIIObject probe;
  uint32_t word;
  memset(&probe, 0, sizeof probe);
  probe.state.kind = 7;
  memcpy(&word, &probe.state, sizeof word);
  out->unicode_kind_shift = (uint32_t)__builtin_ctz(word);
  out->unicode_kind_mask = word >> out->unicode_kind_shift;
  memset(&probe, 0, sizeof probe);
  probe.state.compact = 1;
  memcpy(&word, &probe.state, sizeof word);
  out->unicode_compact_bit = (uint32_t)__builtin_ctz(word);
  memset(&probe, 0, sizeof probe);
  probe.state.ascii = 1;
  memcpy(&word, &probe.state, sizeof word);
  out->unicode_ascii_bit = (uint32_t)__builtin_ctz(word);
}

int rp_layout_from_headers(struct rp_remote_layout* out) {
  memset(out, 0, sizeof *out);
#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
  /* 3.10 frames are PyFrameObject chains; 3.14 tags f_executable (_PyStackRef): neither is
   * read here. */
  return 0;
#else
  out->version_hex = rp_build_version();
  out->source = "headers";
  out->runtime_interpreters_head = offsetof(_PyRuntimeState, interpreters.head);
  out->interp_next = offsetof(PyInterpreterState, next);
  out->interp_threads_head = offsetof(PyInterpreterState, threads.head);
  out->tstate_next = offsetof(PyThreadState, next);
  out->tstate_native_thread_id = offsetof(PyThreadState, native_thread_id);
  out->tstate_size = sizeof(PyThreadState);
#if PY_VERSION_HEX >= 0x030D0000
  out->tstate_current_frame = offsetof(PyThreadState, current_frame);
  out->cframe_current_frame = RP_NO_OFFSET;
  out->frame_code = offsetof(_PyInterpreterFrame, f_executable);
  out->frame_instr_ptr = offsetof(_PyInterpreterFrame, instr_ptr);
#else
  out->tstate_current_frame = offsetof(PyThreadState, cframe);
  out->cframe_current_frame = offsetof(_PyCFrame, current_frame);
  out->frame_code = offsetof(_PyInterpreterFrame, f_code);
  out->frame_instr_ptr = offsetof(_PyInterpreterFrame, prev_instr);
#endif
  out->frame_previous = offsetof(_PyInterpreterFrame, previous);
  out->frame_owner = offsetof(_PyInterpreterFrame, owner);
  out->frame_size = sizeof(_PyInterpreterFrame);
#if PY_VERSION_HEX >= 0x030C0000
  out->owner_cstack = FRAME_OWNED_BY_CSTACK;
#else
  out->owner_cstack = -1;
#endif
  out->code_filename = offsetof(PyCodeObject, co_filename);
  out->code_qualname = offsetof(PyCodeObject, co_qualname);
  out->code_linetable = offsetof(PyCodeObject, co_linetable);
  out->code_firstlineno = offsetof(PyCodeObject, co_firstlineno);
  out->code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
  out->ob_type = offsetof(PyObject, ob_type);
  out->bytes_size = offsetof(PyVarObject, ob_size);
  out->bytes_sval = offsetof(PyBytesObject, ob_sval);
  out->unicode_state = offsetof(PyASCIIObject, state);
  out->unicode_length = offsetof(PyASCIIObject, length);
  out->unicode_ascii_size = sizeof(PyASCIIObject);
  out->unicode_compact_size = sizeof(PyCompactUnicodeObject);
  unicode_state_bits(out);
  return 1;
#endif
}

/* The 3.13 _Py_DebugOffsets table: 8 cookie bytes, then 64-bit words. Indexes of the words
 * read (Include/internal/pycore_runtime.h of 3.13), checked against the header when this file
 * is compiled for 3.13. */
enum {
  k313Version = 1,
  k313FreeThreaded = 2,
  k313InterpretersHead = 5,
  k313InterpNext = 8,
  k313ThreadsHead = 9,
  k313TstateSize = 19,
  k313TstateNext = 21,
  k313TstateCurrentFrame = 23,
  k313TstateNativeThreadId = 25,
  k313FrameSize = 28,
  k313FramePrevious = 29,
  k313FrameExecutable = 30,
  k313FrameInstrPtr = 31,
  k313FrameOwner = 33,
  k313CodeFilename = 35,
  k313CodeQualname = 37,
  k313CodeLinetable = 38,
  k313CodeFirstlineno = 39,
  k313CodeAdaptive = 43,
  k313ObType = 45,
  k313BytesSize = 65,
  k313BytesSval = 66,
  k313UnicodeState = 68,
  k313UnicodeLength = 69,
  k313UnicodeAsciiSize = 70,
  k313Words = 73,
};
#if PY_VERSION_HEX >= 0x030D0000 && PY_VERSION_HEX < 0x030E0000
#define RP_AT(field, index) \
  _Static_assert(offsetof(_Py_DebugOffsets, field) == (index) * 8, "3.13 table: " #field)
RP_AT(version, k313Version);
RP_AT(free_threaded, k313FreeThreaded);
RP_AT(runtime_state.interpreters_head, k313InterpretersHead);
RP_AT(interpreter_state.next, k313InterpNext);
RP_AT(interpreter_state.threads_head, k313ThreadsHead);
RP_AT(thread_state.size, k313TstateSize);
RP_AT(thread_state.next, k313TstateNext);
RP_AT(thread_state.current_frame, k313TstateCurrentFrame);
RP_AT(thread_state.native_thread_id, k313TstateNativeThreadId);
RP_AT(interpreter_frame.size, k313FrameSize);
RP_AT(interpreter_frame.previous, k313FramePrevious);
RP_AT(interpreter_frame.executable, k313FrameExecutable);
RP_AT(interpreter_frame.instr_ptr, k313FrameInstrPtr);
RP_AT(interpreter_frame.owner, k313FrameOwner);
RP_AT(code_object.filename, k313CodeFilename);
RP_AT(code_object.qualname, k313CodeQualname);
RP_AT(code_object.linetable, k313CodeLinetable);
RP_AT(code_object.firstlineno, k313CodeFirstlineno);
RP_AT(code_object.co_code_adaptive, k313CodeAdaptive);
RP_AT(pyobject.ob_type, k313ObType);
RP_AT(bytes_object.ob_size, k313BytesSize);
RP_AT(bytes_object.ob_sval, k313BytesSval);
RP_AT(unicode_object.state, k313UnicodeState);
RP_AT(unicode_object.length, k313UnicodeLength);
RP_AT(unicode_object.asciiobject_size, k313UnicodeAsciiSize);
_Static_assert(sizeof(_Py_DebugOffsets) == k313Words * 8, "3.13 table size");
#undef RP_AT
#endif

int rp_layout_from_debug_offsets(const void* head, size_t n, struct rp_remote_layout* out,
                                 uint32_t* version_hex) {
  const unsigned char* bytes = (const unsigned char*)head;
  uint64_t w[k313Words];
  if (n < 16 || memcmp(bytes, "xdebugpy", 8) != 0) return 0;
  memcpy(&w[1], bytes + 8, 8);
  *version_hex = (uint32_t)w[1] & 0xffff0000u;
  if (*version_hex != 0x030D0000u || n < sizeof w) return -1;
  memcpy(w, bytes, sizeof w);
  if (w[k313FreeThreaded] != 0) return -2;
  memset(out, 0, sizeof *out);
  out->version_hex = *version_hex;
  out->source = "debug offsets";
  out->runtime_interpreters_head = w[k313InterpretersHead];
  out->interp_next = w[k313InterpNext];
  out->interp_threads_head = w[k313ThreadsHead];
  out->tstate_next = w[k313TstateNext];
  out->tstate_native_thread_id = w[k313TstateNativeThreadId];
  out->tstate_current_frame = w[k313TstateCurrentFrame];
  out->cframe_current_frame = RP_NO_OFFSET;
  out->tstate_size = w[k313TstateSize];
  out->frame_previous = w[k313FramePrevious];
  out->frame_code = w[k313FrameExecutable];
  out->frame_instr_ptr = w[k313FrameInstrPtr];
  out->frame_owner = w[k313FrameOwner];
  out->frame_size = w[k313FrameSize];
  out->owner_cstack = 3; /* FRAME_OWNED_BY_CSTACK */
  out->code_filename = w[k313CodeFilename];
  out->code_qualname = w[k313CodeQualname];
  out->code_linetable = w[k313CodeLinetable];
  out->code_firstlineno = w[k313CodeFirstlineno];
  out->code_adaptive = w[k313CodeAdaptive];
  out->ob_type = w[k313ObType];
  out->bytes_size = w[k313BytesSize];
  out->bytes_sval = w[k313BytesSval];
  out->unicode_state = w[k313UnicodeState];
  out->unicode_length = w[k313UnicodeLength];
  out->unicode_ascii_size = w[k313UnicodeAsciiSize];
  /* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject (3.12+). */
  out->unicode_compact_size = w[k313UnicodeAsciiSize] + 16;
  /* state: interned:2, kind:3, compact:1, ascii:1 (3.12+ without free threading). */
  out->unicode_kind_shift = 2;
  out->unicode_kind_mask = 7;
  out->unicode_compact_bit = 5;
  out->unicode_ascii_bit = 6;
  return 1;
}
