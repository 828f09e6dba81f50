/* CPython frame access (sampler and launch sites); see frames.h for the contracts.
 * Built once per Python version (the extension is), so the internal layouts below always
 * match the interpreter that loads us: 3.10 PyFrameObject chains, 3.11/3.12
 * tstate->cframe->current_frame, 3.13 tstate->current_frame of _PyInterpreterFrame. */
#define _GNU_SOURCE 1
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <link.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "frames.h"

static void put(uint64_t* out, int i, const void* code, const void* name, int lasti, int first,
                int entry) {
  out[i * RP_PY_WORDS + 0] = (uint64_t)(uintptr_t)code;
  out[i * RP_PY_WORDS + 1] = (uint64_t)(uintptr_t)name;
  out[i * RP_PY_WORDS + 2] = ((uint64_t)(uint32_t)lasti << 32) | (entry ? RP_PY_ENTRY : 0) |
                             ((uint64_t)first & 0x7fffffffu);
}

/* This thread's innermost frame (NULL: none), or -1 when the thread has no Python state. The
 * gilstate TSS slot (pthread_getspecific: a plain TLS read) names this thread's state whether
 * or not it holds the GIL; it is cleared before the state is freed at thread exit. */
static int current_frame(const void** first) {
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts == NULL) return -1;
#if PY_VERSION_HEX >= 0x030D0000
  *first = ts->current_frame;
#elif PY_VERSION_HEX >= 0x030B0000
  *first = ts->cframe == NULL ? NULL : ts->cframe->current_frame;
#else
  *first = ts->frame;
#endif
  return 0;
}

int rp_walk_current(uint64_t* out, int max_frames) {
  const void* first = NULL;
  if (current_frame(&first) < 0) return -1;
  return rp_walk_from(first, out, max_frames);
}

int rp_is_python_thread(void) { return PyGILState_GetThisThreadState() != NULL; }

int rp_walk_from(const void* first, uint64_t* out, int max_frames) {
  int n = 0;
#if PY_VERSION_HEX >= 0x030B0000
  _PyInterpreterFrame* f = (_PyInterpreterFrame*)first;
  /* The walk is bounded: a frame being pushed right now may be half-linked. */
  for (int guard = 0; f != NULL && n < max_frames && guard < 4 * max_frames; ++guard) {
#if PY_VERSION_HEX >= 0x030C0000
    if (f->owner == FRAME_OWNED_BY_CSTACK) {
      /* Shim frame at the bottom of one C activation of the eval loop: the frame recorded
       * just before it is that activation's outermost (native merging splits there). */
      if (n > 0) out[(n - 1) * RP_PY_WORDS + 2] |= RP_PY_ENTRY;
      f = f->previous;
      continue;
    }
#endif
#if PY_VERSION_HEX >= 0x030D0000
    PyObject* exe = f->f_executable;
    if (exe == NULL || Py_TYPE(exe) != &PyCode_Type) {
      f = f->previous;
      continue;
    }
    PyCodeObject* co = (PyCodeObject*)exe;
#else
    PyCodeObject* co = f->f_code;
    if (co == NULL) break;
#endif
    if (!_PyFrame_IsIncomplete(f)) {
#if PY_VERSION_HEX >= 0x030C0000
      const int entry = 0;
#else
      const int entry = f->is_entry;
#endif
      put(out, n++, co, co->co_name, _PyInterpreterFrame_LASTI(f), co->co_firstlineno, entry);
    }
    f = f->previous;
  }
#else
  /* 3.10: one C activation of the eval loop per Python frame. */
  for (PyFrameObject* f = (PyFrameObject*)first; f != NULL && n < max_frames; f = f->f_back) {
    PyCodeObject* co = f->f_code;
    put(out, n++, co, co->co_name, f->f_lasti, co->co_firstlineno, 1);
  }
#endif
  return n;
}

static int walk_keys_from(const void* first, uint64_t* out, int max_frames) {
  int n = 0;
#if PY_VERSION_HEX >= 0x030B0000
  _PyInterpreterFrame* f = (_PyInterpreterFrame*)first;
  for (int guard = 0; f != NULL && n < max_frames && guard < 4 * max_frames; ++guard) {
#if PY_VERSION_HEX >= 0x030C0000
    if (f->owner == FRAME_OWNED_BY_CSTACK) {
      f = f->previous;
      continue;
    }
#endif
#if PY_VERSION_HEX >= 0x030D0000
    PyObject* exe = f->f_executable;
    if (exe == NULL || Py_TYPE(exe) != &PyCode_Type) {
      f = f->previous;
      continue;
    }
    const void* co = exe;
#else
    const void* co = f->f_code;
    if (co == NULL) break;
#endif
    out[n * RP_PY_KEY_WORDS + 0] = (uint64_t)(uintptr_t)co;
    out[n * RP_PY_KEY_WORDS + 1] = (uint64_t)(uint32_t)_PyInterpreterFrame_LASTI(f) << 32;
    ++n;
    f = f->previous;
  }
#else
  for (PyFrameObject* f = (PyFrameObject*)first; f != NULL && n < max_frames; f = f->f_back) {
    out[n * RP_PY_KEY_WORDS + 0] = (uint64_t)(uintptr_t)f->f_code;
    out[n * RP_PY_KEY_WORDS + 1] = (uint64_t)(uint32_t)f->f_lasti << 32;
    ++n;
  }
#endif
  return n;
}

int rp_walk_keys_current(uint64_t* out, int max_frames) {
  const void* first = NULL;
  if (current_frame(&first) < 0) return -1;
  return walk_keys_from(first, out, max_frames);
}

int rp_python_running(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

/* CPython's GIL asks its holder to drop it only after a waiter's 5 ms wait saw no switch at
 * all, and every release counts as one: a thread that releases and retakes it more often than
 * that (a stat, a small read, a CUDA call in a loop) keeps a waiter out for seconds while it
 * never hands over (measured: 8.8 s on 3.11, the on-demand window then armed no thread). Our
 * threads waiting for the GIL therefore also post a pending call, which the main thread runs
 * at its next eval-loop check, GIL held: it releases the GIL until they have it (bounded). */
static atomic_int g_gil_waiters;
static atomic_int g_handoff_posted;

static int hand_over_gil(void* unused) {
  (void)unused;
  atomic_store(&g_handoff_posted, 0);
  if (atomic_load(&g_gil_waiters) == 0) return 0; /* they got it the usual way */
  PyThreadState* self = PyEval_SaveThread();
  /* A waiter wakes on the release and takes the GIL within microseconds; 20 ms bounds the
   * main thread's pause should it not (a waiter that gave up: Python finalising). */
  for (int i = 0; i < 200 && atomic_load(&g_gil_waiters) > 0; ++i) usleep(100);
  PyEval_RestoreThread(self);
  return 0;
}

int rp_gil_ensure(void) {
  if (!rp_python_running()) return 0;
  atomic_fetch_add(&g_gil_waiters, 1);
  if (atomic_exchange(&g_handoff_posted, 1) == 0 && Py_AddPendingCall(hand_over_gil, NULL) != 0)
    atomic_store(&g_handoff_posted, 0); /* the queue is full: the usual way only */
  PyGILState_Ensure(); /* the state is always "unlocked" here: callers never hold the GIL */
  atomic_fetch_sub(&g_gil_waiters, 1);
  return 1;
}

void rp_gil_fork_child(void) {
  /* The child has one thread and whatever the parent had queued: start from nothing. */
  atomic_store(&g_gil_waiters, 0);
  atomic_store(&g_handoff_posted, 0);
}

void rp_gil_release(void) { PyGILState_Release(PyGILState_UNLOCKED); }

void* rp_save_if_held(void) {
  if (!Py_IsInitialized() || !PyGILState_Check()) return NULL;
  return PyEval_SaveThread();
}

void rp_restore(void* saved) {
  if (saved != NULL) PyEval_RestoreThread((PyThreadState*)saved);
}

void rp_for_each_thread(void (*fn)(void* ctx, unsigned long tid), void* ctx) {
#if PY_VERSION_HEX >= 0x030B0000
  PyInterpreterState* interp = PyInterpreterState_Main();
  for (PyThreadState* t = PyInterpreterState_ThreadHead(interp); t; t = PyThreadState_Next(t))
    if (t->native_thread_id != 0) fn(ctx, t->native_thread_id);
#else
  /* 3.10 thread states do not record the OS thread id: threading's registry does. */
  fn(ctx, (unsigned long)getpid());
  PyObject* mod_name = PyUnicode_FromString("threading");
  PyObject* threading = mod_name ? PyImport_GetModule(mod_name) : NULL;
  Py_XDECREF(mod_name);
  if (threading == NULL) {
    PyErr_Clear();
    return;
  }
  PyObject* active = PyObject_GetAttrString(threading, "_active");
  Py_DECREF(threading);
  if (active == NULL || !PyDict_Check(active)) {
    Py_XDECREF(active);
    PyErr_Clear();
    return;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(active, &pos, &key, &value)) {
    PyObject* nid = PyObject_GetAttrString(value, "native_id");
    if (nid != NULL && PyLong_Check(nid)) {
      unsigned long tid = PyLong_AsUnsignedLong(nid);
      if (tid != (unsigned long)getpid()) fn(ctx, tid);
    }
    Py_XDECREF(nid);
    PyErr_Clear();
  }
  Py_DECREF(active);
#endif
}

/* Reads that fail (EFAULT) instead of faulting when the memory was unmapped since. */
static int safe_read(const void* addr, void* buf, size_t len) {
  struct iovec local = {buf, len}, remote = {(void*)addr, len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

int rp_code_info(uint64_t code, uint64_t name_ptr, uint32_t firstlineno, const char** func,
                 const char** file) {
  PyCodeObject copy;
  if (code == 0 || !safe_read((const void*)(uintptr_t)code, &copy, sizeof copy)) return 0;
  if (Py_TYPE((PyObject*)&copy) != &PyCode_Type || (uint64_t)(uintptr_t)copy.co_name != name_ptr ||
      (uint32_t)copy.co_firstlineno != firstlineno)
    return 0;
  /* A freed block keeps its type word, but its first word (ob_refcnt) becomes an allocator
   * free-list link: NULL or an address (>= 2^32 on x86-64, also when glibc mangles it).
   * Real counts, immortal ones included, are below 2^32. Incrementing a freed block would
   * corrupt the allocator, so anything else is refused. */
  const Py_ssize_t rc = Py_REFCNT((PyObject*)&copy);
  if (rc <= 0 || rc >= ((Py_ssize_t)1 << 32)) return 0;
  PyCodeObject* co = (PyCodeObject*)(uintptr_t)code;
  Py_INCREF(co);
#if PY_VERSION_HEX >= 0x030B0000
  PyObject* qual = co->co_qualname;
#else
  PyObject* qual = co->co_name;
#endif
  *func = PyUnicode_Check(qual) ? PyUnicode_AsUTF8(qual) : NULL;
  *file = PyUnicode_Check(co->co_filename) ? PyUnicode_AsUTF8(co->co_filename) : NULL;
  if (*func == NULL || *file == NULL) PyErr_Clear();
  if (*func == NULL) *func = "<unknown>";
  if (*file == NULL) *file = "<unknown>";
  return 1;
}

int rp_code_line(uint64_t code, uint32_t lasti) {
  const int idx = (int)lasti; /* -1 before the first instruction */
  return PyCode_Addr2Line((PyCodeObject*)(uintptr_t)code,
                          (idx < 0 ? 0 : idx) * (int)sizeof(_Py_CODEUNIT));
}

void rp_eval_range(uint64_t* lo, uint64_t* hi) {
  *lo = *hi = 0;
  void* sym = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  Dl_info info;
  const ElfW(Sym)* es = NULL;
  if (sym != NULL && dladdr1(sym, &info, (void**)&es, RTLD_DL_SYMENT) && es != NULL) {
    *lo = (uint64_t)(uintptr_t)sym;
    *hi = *lo + (es->st_size ? es->st_size : 1);
  }
}
