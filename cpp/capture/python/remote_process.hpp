// Another process seen from outside, for the read-only sampler (remote_frames.hpp): its memory
// through process_vm_readv (the kernel's ptrace access check decides: same user, Yama's
// kernel.yama.ptrace_scope, CAP_SYS_PTRACE), its mapped files (/proc/<pid>/maps) and the
// symbols of those files (their ELF symbol tables, read from disk). Nothing runs in it and
// nothing of it is stopped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rocprof::python {

class RemoteProcess {
 public:
  explicit RemoteProcess(uint32_t pid) : pid_(pid) {}
  uint32_t pid() const { return pid_; }

  // False with errno set (EPERM: access refused; ESRCH: the process has ended; EFAULT: not
  // mapped there, e.g. an object freed since its address was read).
  bool read(uint64_t addr, void* out, size_t n) const;
  template <class T>
  bool read_value(uint64_t addr, T* out) const {
    return read(addr, out, sizeof(T));
  }

  struct Module {
    std::string path;   // as the process names it
    uint64_t bias = 0;  // load address minus link-time address
  };
  // Where an interpreter may be: the mapped libpython files, then the executable. False with
  // errno set when /proc/<pid>/maps cannot be read.
  bool interpreter_modules(std::vector<Module>* out) const;

  // Link-time address of the symbol `name` in `m`'s file (dynamic, then full symbol table),
  // or of the section `section` where no symbol is found; 0 when neither is there.
  uint64_t symbol(const Module& m, const char* name, const char* section = nullptr) const;

 private:
  uint32_t pid_;
};

}  // namespace rocprof::python
