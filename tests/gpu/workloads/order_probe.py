"""Diagnostic: does CUPTI started before/after `import torch` matter? argv[1] in {before, after}."""
import sys

import rocprof

if sys.argv[1] == "after":
    import torch
s = rocprof.profile(output_dir=sys.argv[2], kernel_trace=True, memory_copy_trace=True, runtime_trace=True)
s.start()
import torch  # noqa: E402,F811

x = torch.randn(1000, device="cuda")
print("sum", float((x * 2).sum()))
torch.cuda.synchronize()
s.stop()
print("ok", s.path)
