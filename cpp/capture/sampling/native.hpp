// Native (C/C++) frames for --native-stacks. Built on libunwind when the build found it;
// otherwise native_available() is false and the sampler records Python frames only.
#pragma once
#include <cstdint>
#include <string>

namespace rocprof::sampling {

inline constexpr int kMaxNative = 256;

bool native_available();
// Why native_available() is false, with what to install ("" when available).
const char* native_unavailable_reason();
// Async-signal-safe: instruction pointers of the interrupted context `ucontext`, innermost
// first. Returns 0 (the sample keeps its Python frames) while the dynamic loader is changing
// its object list: libunwind's lookup walks that list (dl_iterate_phdr, under the loader
// lock), and a signal landing inside dlopen/dlclose would otherwise deadlock or read a list
// in mid-update.
int native_walk(void* ucontext, uint64_t* out, int max);
// Off the hot path: symbol (demangled) and object file of an instruction pointer.
void native_symbol(uint64_t ip, std::string* func, std::string* file);

}  // namespace rocprof::sampling
