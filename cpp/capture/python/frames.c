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

/* A thread state's innermost frame (NULL: none). */
static inline const void* innermost_frame(const PyThreadState* ts) {
#if PY_VERSION_HEX >= 0x030D0000
  return ts->current_frame;
#elif PY_VERSION_HEX >= 0x030B0000
  return ts->cframe == NULL ? NULL : ts->cframe->current_frame;
#else
  return ts->frame;
#endif
}

/* This thread's innermost frame (NULL: none), or -1 when the thread has no Python state. The
 * gilstate TSS slot (pthread_getspecific: a plain TLS read) names this thread's state whether
 * or not it holds the GIL; it is cleared before the state is freed at thread exit. */
static int current_frame(const void** first) {
  PyThreadState* ts = PyGILState_GetThisThreadState();
  if (ts == NULL) return -1;
  *first = innermost_frame(ts);
  return 0;
}

int rp_walk_current(uint64_t* out, int max_frames) {
  const void* first = NULL;
  if (current_frame(&first) < 0) return -1;
  return rp_walk_from(first, out, max_frames);
}

const void* rp_this_thread_state(void) { return PyGILState_GetThisThreadState(); }

int rp_is_python_thread(void) { return PyGILState_GetThisThreadState() != NULL; }

/* Both walks are one loop over the same frames, from the innermost one to the frames that run
 * code (code_frame() below), and differ only in what they copy of each: so a chain's key (the
 * keys walk) covers exactly the frames its site was resolved from (the full walk). */
#if PY_VERSION_HEX >= 0x030B0000
typedef _PyInterpreterFrame Frame;
#define OLDER(f) ((f)->previous)
#else
typedef PyFrameObject Frame;
#define OLDER(f) ((f)->f_back)
#endif

/* A walk's bounds, and what the full walk copied so far (where a shim it passes is marked). */
typedef struct {
  int walked, max; /* code frames walked, and the most it may walk (max_frames) */
  int skips;       /* other frames it may still pass over: a frame being pushed right now may
                    * be half-linked, so the walk is bounded */
  uint64_t* out;   /* the full walk's frames, `copied` of them (NULL: the keys walk) */
  int copied;
  Frame* last; /* the oldest frame visited; when `ended`, the chain's end as the walk read it */
  int ended;
} Walk;

static inline Walk walk_of(int max_frames, uint64_t* out) {
  Walk w = {0, max_frames, 3 * max_frames, out, 0, NULL, 0};
  return w;
}

/* Whether f runs no code: a shim at the bottom of one C activation of the eval loop (3.12+),
 * or a frame of something else than a code object (3.13+). */
static inline int no_code(Frame* f, Walk* w) {
  (void)f;
  (void)w;
#if PY_VERSION_HEX >= 0x030C0000
  if (f->owner == FRAME_OWNED_BY_CSTACK) {
    /* The frame copied last is its C activation's outermost: native merging splits there. */
    if (w->copied > 0) w->out[(w->copied - 1) * RP_PY_WORDS + 2] |= RP_PY_ENTRY;
    return 1;
  }
#endif
#if PY_VERSION_HEX >= 0x030D0000
  return f->f_executable == NULL || Py_TYPE(f->f_executable) != &PyCode_Type;
#else
  return 0;
#endif
}

/* f when it runs code, else the first older frame that does; NULL at the chain's end or the
 * walk's bounds. Reads frames only, never their code objects. */
static inline Frame* code_frame(Frame* f, Walk* w) {
  if (w->walked >= w->max) return NULL;
  for (; f != NULL; f = OLDER(f)) {
    w->last = f;
    if (no_code(f, w)) {
      if (--w->skips < 0) return NULL;
      continue;
    }
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    if (f->f_code == NULL) return NULL;
#endif
    ++w->walked;
    return f;
  }
  w->ended = 1;
  return NULL;
}

static inline PyCodeObject* code_of(Frame* f) {
#if PY_VERSION_HEX >= 0x030D0000
  return (PyCodeObject*)f->f_executable;
#else
  return f->f_code;
#endif
}

static inline int lasti_of(Frame* f) {
#if PY_VERSION_HEX >= 0x030B0000
  return _PyInterpreterFrame_LASTI(f);
#else
  return f->f_lasti;
#endif
}

static int walk_full(const void* first, Walk* wp) {
  Walk w = *wp;
  for (Frame* f = (Frame*)first; (f = code_frame(f, &w)) != NULL; f = OLDER(f)) {
#if PY_VERSION_HEX >= 0x030B0000
    /* Pushed but not started (its cells, free variables or generator not made yet): CPython
     * leaves it out of every stack it shows (f_back, tracebacks), and so do we. Telling reads
     * the code object, which the keys walk never does: keys keep such frames (3.11 runs Python
     * code over them: a collection inside the prologue), the walked frames are the same. */
    if (_PyFrame_IsIncomplete(f)) continue;
#endif
#if PY_VERSION_HEX >= 0x030C0000
    const int entry = 0;
#elif PY_VERSION_HEX >= 0x030B0000
    const int entry = f->is_entry;
#else
    const int entry = 1; /* one C activation of the eval loop per Python frame */
#endif
    PyCodeObject* co = code_of(f);
    put(w.out, w.copied++, co, co->co_name, lasti_of(f), co->co_firstlineno, entry);
  }
  *wp = w;
  return w.copied;
}

int rp_walk_from(const void* first, uint64_t* out, int max_frames) {
  Walk w = walk_of(max_frames, out);
  return walk_full(first, &w);
}

int rp_walk_thread(const void* tstate, unsigned long tid, uint64_t* out, int max_frames) {
  const PyThreadState* ts = (const PyThreadState*)tstate;
  if (ts == NULL) return -1;
  /* Still one of the interpreter's states (a C thread's PyGILState_Release frees its state
   * between two of the sampler's scans): the list is read unlocked, which the guard covers. */
  int live = 0, steps = 0;
  for (PyThreadState* t = PyInterpreterState_ThreadHead(PyInterpreterState_Main());
       t != NULL && steps < 4096; t = PyThreadState_Next(t), ++steps)
    if (t == ts) {
      live = 1;
      break;
    }
  if (!live) return -1;
#if PY_VERSION_HEX >= 0x030B0000
  if (ts->native_thread_id != tid) return -1;
#else
  (void)tid; /* 3.10 states keep no native id; the thread hook unregisters the thread first */
#endif
  const void* first = innermost_frame(ts);
  Walk w = walk_of(max_frames, out);
  const int n = walk_full(first, &w);
  for (int i = 0; i < n; ++i)
    if (Py_TYPE((PyObject*)(uintptr_t)out[i * RP_PY_WORDS]) != &PyCode_Type) return RP_WALK_TORN;
  /* A running thread's chain never ends at a generator's frame (its caller, or 3.12+'s entry
   * shim, is older): one that does was read after the generator yielded, which unlinks its
   * frame from its caller. Stored, such a read would be a stack of the generator alone. */
#if PY_VERSION_HEX >= 0x030B0000
  if (w.ended && w.last != NULL && w.last->owner == FRAME_OWNED_BY_GENERATOR) return RP_WALK_TORN;
#else
  if (w.ended && w.last != NULL && w.last->f_gen != NULL) return RP_WALK_TORN;
#endif
  return n;
}

static int walk_keys_from(const void* first, uint64_t* out, int max_frames) {
  Walk w = walk_of(max_frames, NULL);
  int n = 0;
  for (Frame* f = (Frame*)first; (f = code_frame(f, &w)) != NULL; f = OLDER(f), ++n) {
    out[n * RP_PY_KEY_WORDS + 0] = (uint64_t)(uintptr_t)code_of(f);
    out[n * RP_PY_KEY_WORDS + 1] = (uint64_t)(uint32_t)lasti_of(f) << 32;
  }
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

void rp_for_each_thread(void (*fn)(void* ctx, unsigned long tid, const void* tstate), void* ctx) {
#if PY_VERSION_HEX >= 0x030B0000
  PyInterpreterState* interp = PyInterpreterState_Main();
  for (PyThreadState* t = PyInterpreterState_ThreadHead(interp); t; t = PyThreadState_Next(t))
    if (t->native_thread_id != 0) fn(ctx, t->native_thread_id, t);
#else
  /* 3.10 thread states record the pthread ident, not the OS thread id: threading's registry
   * maps one to the other (the main thread is reported without it when threading is not in). */
  PyObject* mod_name = PyUnicode_FromString("threading");
  PyObject* threading = mod_name ? PyImport_GetModule(mod_name) : NULL;
  Py_XDECREF(mod_name);
  PyObject* active = threading ? PyObject_GetAttrString(threading, "_active") : NULL;
  Py_XDECREF(threading);
  if (active == NULL || !PyDict_Check(active)) {
    Py_XDECREF(active);
    PyErr_Clear();
    fn(ctx, (unsigned long)getpid(), NULL);
    return;
  }
  int main_seen = 0;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(active, &pos, &key, &value)) {
    PyObject* nid = PyObject_GetAttrString(value, "native_id");
    if (nid != NULL && PyLong_Check(nid) && PyLong_Check(key)) {
      const unsigned long tid = PyLong_AsUnsignedLong(nid);
      const unsigned long ident = PyLong_AsUnsignedLong(key);
      const void* state = NULL;
      for (PyThreadState* t = PyInterpreterState_ThreadHead(PyInterpreterState_Main()); t;
           t = PyThreadState_Next(t))
        if (t->thread_id == ident) {
          state = t;
          break;
        }
      if (tid == (unsigned long)getpid()) main_seen = 1;
      fn(ctx, tid, state);
    }
    Py_XDECREF(nid);
    PyErr_Clear();
  }
  if (!main_seen) fn(ctx, (unsigned long)getpid(), NULL);
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
