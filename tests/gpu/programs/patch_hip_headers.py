"""Make Debian's HIP 5.2 nvidia_detail headers compile against CUDA 13: remove the inline
wrappers of CUDA APIs that CUDA 12/13 changed or removed (vcopy.hip uses none of them).
Usage: patch_hip_headers.py <include dir holding hip/> <nvcc command...>; repeats until clean."""

import re
import subprocess
import sys

root, cmd = sys.argv[1], sys.argv[2:]
header = f"{root}/hip/nvidia_detail/nvidia_hip_runtime_api.h"
for _ in range(20):
    out = subprocess.run(cmd, capture_output=True, text=True)
    bad = sorted({int(m) for m in re.findall(r"nvidia_hip_runtime_api\.h\((\d+)\): error", out.stderr)})
    if out.returncode == 0 or not bad:
        print(out.stderr[-2000:] if out.returncode else "patched headers compile")
        sys.exit(out.returncode)
    lines = open(header).read().split("\n")
    drop = set()
    for ln in bad:
        i = ln - 1
        while i > 0 and not re.match(r"^(inline|static|__HIP|hip|HIP|__host__)", lines[i]):
            i -= 1
        while i > 0 and lines[i - 1].lstrip().startswith("template"):
            i -= 1
        j, depth, seen = i, 0, False
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            seen = seen or "{" in lines[j]
            if seen and depth <= 0:
                break
            j += 1
        drop.update(range(i, j + 1))
    lines = [ln for k, ln in enumerate(lines) if k not in drop]
    open(header, "w").write("\n".join(lines))
sys.exit(1)
