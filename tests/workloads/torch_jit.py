"""Imports torch while a rocprof session is already running and exercises the JIT (schemas
are printed through libstdc++ iostreams): the path that crashed at `import torch` when our
libraries exported their own copy of the C++ runtime (issue: GPU-host build)."""

import roctx
import torch


@torch.jit.script
def scaled(x: torch.Tensor, n: int) -> torch.Tensor:
    return x * n + 1


with roctx.range("jit"):
    y = scaled(torch.ones(4), 3)
print("sum", y.sum().item())
print("schema", scaled.schema)
print("graph-lines", len(str(scaled.graph).splitlines()))
print(torch.ops.aten.add.Tensor._schema)
