#include "rocprof/exit_safe_tls.hpp"

#include <pthread.h>

namespace rocprof::exit_safe_tls {
namespace {

struct Owned {
  void** slot;
  void* object;
  void (*free_fn)(void*);
  Owned* next;
};

// A thread's owned objects, newest first. The key's value is cleared before this runs, so an
// object made again by a later destructor starts a new list, which pthread frees in its next
// round of destructors.
void on_thread_end(void* head) {
  for (auto* n = static_cast<Owned*>(head); n != nullptr;) {
    *n->slot = nullptr;
    n->free_fn(n->object);
    Owned* next = n->next;
    delete n;
    n = next;
  }
}

pthread_key_t key() {
  static const pthread_key_t k = [] {
    pthread_key_t made;
    pthread_key_create(&made, on_thread_end);
    return made;
  }();
  return k;
}

}  // namespace

void own_until_thread_end(void** slot, void* object, void (*free_fn)(void*)) {
  auto* head = static_cast<Owned*>(pthread_getspecific(key()));
  pthread_setspecific(key(), new Owned{slot, object, free_fn, head});
}

}  // namespace rocprof::exit_safe_tls
