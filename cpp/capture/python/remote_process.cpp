#include "remote_process.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rocprof::python {
namespace {

constexpr uint64_t kPage = 4096;

bool pread_all(int fd, void* out, size_t n, uint64_t at) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    at += static_cast<uint64_t>(r);
  }
  return true;
}

// A mapped file opened as the process sees it (its root: containers), else by its name here.
int open_module(uint32_t pid, const std::string& path) {
  int fd = ::open(("/proc/" + std::to_string(pid) + "/root" + path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  return fd;
}

struct Elf {
  int fd = -1;
  Elf64_Ehdr eh{};
  std::vector<Elf64_Shdr> sh;
  std::vector<Elf64_Phdr> ph;
  ~Elf() {
    if (fd >= 0) ::close(fd);
  }
  bool load(uint32_t pid, const std::string& path) {
    fd = open_module(pid, path);
    if (fd < 0 || !pread_all(fd, &eh, sizeof eh, 0)) return false;
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_phentsize != sizeof(Elf64_Phdr))
      return false;
    sh.resize(eh.e_shnum);
    ph.resize(eh.e_phnum);
    return pread_all(fd, sh.data(), sh.size() * sizeof(Elf64_Shdr), eh.e_shoff) &&
           pread_all(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff);
  }
  std::string section_bytes(const Elf64_Shdr& s) const {
    std::string out(s.sh_size, '\0');
    if (s.sh_type == SHT_NOBITS || !pread_all(fd, out.data(), out.size(), s.sh_offset)) return {};
    return out;
  }
  uint64_t find(const char* name, uint32_t table_type) const {
    for (const Elf64_Shdr& s : sh) {
      if (s.sh_type != table_type || s.sh_link >= sh.size() || s.sh_entsize != sizeof(Elf64_Sym))
        continue;
      const std::string syms = section_bytes(s), names = section_bytes(sh[s.sh_link]);
      const size_t len = std::strlen(name);
      for (size_t at = 0; at + sizeof(Elf64_Sym) <= syms.size(); at += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, syms.data() + at, sizeof sym);
        if (sym.st_value == 0 || sym.st_shndx == SHN_UNDEF || sym.st_name + len >= names.size())
          continue;
        if (std::memcmp(names.data() + sym.st_name, name, len + 1) == 0) return sym.st_value;
      }
    }
    return 0;
  }
  uint64_t section(const char* name) const {
    if (eh.e_shstrndx >= sh.size()) return 0;
    const std::string names = section_bytes(sh[eh.e_shstrndx]);
    for (const Elf64_Shdr& s : sh)
      if (s.sh_name < names.size() && std::strcmp(names.c_str() + s.sh_name, name) == 0)
        return s.sh_addr;
    return 0;
  }
};

bool is_libpython(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("libpython", 0) == 0 && base.find(".so") != std::string::npos;
}

}  // namespace

bool RemoteProcess::read(uint64_t addr, void* out, size_t n) const {
  iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
  const ssize_t got = process_vm_readv(static_cast<pid_t>(pid_), &local, 1, &remote, 1, 0);
  if (got == static_cast<ssize_t>(n)) return true;
  if (got >= 0) errno = EFAULT;  // a part only: the rest is not mapped
  return false;
}

bool RemoteProcess::interpreter_modules(std::vector<Module>* out) const {
  const std::string proc = "/proc/" + std::to_string(pid_);
  std::ifstream maps(proc + "/maps");
  if (!maps) return false;
  char exe[4096] = {};
  const ssize_t n = ::readlink((proc + "/exe").c_str(), exe, sizeof exe - 1);
  const std::string exe_path = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "";
  // Each file's lowest mapping: its start and file offset give the load bias below.
  struct Lowest {
    std::string path;
    uint64_t start, offset;
  };
  std::vector<Lowest> found;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    // The path is the rest of the line: it may hold spaces.
    if (!(in >> range >> perms >> offset >> dev >> inode) || !std::getline(in >> std::ws, path) ||
        path.empty() || path[0] != '/')
      continue;
    if (!is_libpython(path) && path != exe_path) continue;
    const uint64_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    bool known = false;
    for (Lowest& l : found)
      if (l.path == path) {
        known = true;
        if (start < l.start) l = Lowest{path, start, std::stoull(offset, nullptr, 16)};
      }
    if (!known) found.push_back(Lowest{path, start, std::stoull(offset, nullptr, 16)});
  }
  out->clear();
  for (int pass = 0; pass < 2; ++pass)
    for (const Lowest& l : found) {
      if ((pass == 0) != is_libpython(l.path)) continue;
      Elf elf;
      if (!elf.load(pid_, l.path)) continue;
      // The loadable segment this mapping starts: its link-time page is at `start`.
      for (const Elf64_Phdr& p : elf.ph)
        if (p.p_type == PT_LOAD && (p.p_offset & ~(kPage - 1)) == l.offset) {
          out->push_back(Module{l.path, l.start - (p.p_vaddr & ~(kPage - 1))});
          break;
        }
    }
  return true;
}

uint64_t RemoteProcess::symbol(const Module& m, const char* name, const char* section) const {
  Elf elf;
  if (!elf.load(pid_, m.path)) return 0;
  uint64_t at = elf.find(name, SHT_DYNSYM);
  if (at == 0) at = elf.find(name, SHT_SYMTAB);
  if (at == 0 && section != nullptr) at = elf.section(section);
  return at;
}

}  // namespace rocprof::python
