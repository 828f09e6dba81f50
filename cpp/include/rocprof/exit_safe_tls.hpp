// Per-thread objects that stay usable inside exit handlers.
//
// exit() runs the calling thread's thread_local destructors before its atexit handlers, and a
// native program's session is stopped from such a handler (it interns strings and emits the
// last records there). A thread_local with a destructor would be used after its destruction:
// the heap corruption a native CUDA program under --pc-sampling died of. So such an object is
// reached through a trivially destructible thread_local pointer (the slot), made on the
// thread's first use and freed when the thread ends (one pthread key for all of them); for the
// thread that calls exit() it is never destroyed, as the process is ending. Hot-path cost: one
// thread-local load and a null check.
//
//   thread_local Cache* t_cache = nullptr;              // in the user's .cpp
//   Cache& c = exit_safe_tls::get(t_cache);
#pragma once

namespace rocprof::exit_safe_tls {

// Frees `object` with `free_fn` when the calling thread ends, and sets `*slot` to nullptr then.
void own_until_thread_end(void** slot, void* object, void (*free_fn)(void*));

template <class T>
T& get(T*& slot) {
  if (slot != nullptr) return *slot;
  T* made = new T();
  slot = made;
  own_until_thread_end(reinterpret_cast<void**>(&slot), made,
                       [](void* p) { delete static_cast<T*>(p); });
  return *made;
}

}  // namespace rocprof::exit_safe_tls
