"""A long run in bounded space (tests/gpu/test_gpu_bounded.py): STEPS training-like steps, each
a ROCTx range "step N", with three slow steps planted on purpose, each of another cause:
  HOST     the host sleeps 60 ms inside the step (the GPU waits)
  KERNELS  the step launches 1,000 extra GEMMs
  PAGEABLE the step copies 512 MB from the GPU into pageable host memory
Prints one JSON line: the planted steps, the loop's seconds and the median time of the other
steps (what a profiler's cost per kernel is read from: the planted steps vary by themselves),
the loop's thread's own counts over the loop (page faults, context switches: how a profiler's
other threads reach the measured one) and each thread's CPU seconds at the end."""

import argparse
import json
import os
import resource
import statistics
import time

import roctx
import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2000)
    a = p.parse_args()
    n = a.steps
    planted = {"host": n // 4, "kernels": n // 2, "pageable": 3 * n // 4}
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(*[m for _ in range(12) for m in (torch.nn.Linear(512, 512),
                                                              torch.nn.ReLU())]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device=dev)
    w = torch.randn(1024, 1024, device=dev)
    big = torch.empty(128 << 20, device=dev)  # 512 MB of float32

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        return loss.item()  # a sync each step, as a training loop's logging does

    for _ in range(5):  # CUDA, cuBLAS and the allocator set up before the measured steps
        step()
    torch.cuda.synchronize()
    ru0 = resource.getrusage(resource.RUSAGE_THREAD)
    t0 = time.perf_counter()
    times = []
    for i in range(n):
        t = time.perf_counter()
        with roctx.range(f"step {i}"):
            if i == planted["host"]:
                time.sleep(0.06)
            if i == planted["kernels"]:
                for _ in range(1000):
                    w @ w
            if i == planted["pageable"]:
                big.cpu()  # into pageable host memory
            step()
        if i not in planted.values():
            times.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_THREAD)
    loop_thread = {k: getattr(ru1, k) - getattr(ru0, k)
                   for k in ("ru_minflt", "ru_majflt", "ru_nvcsw", "ru_nivcsw", "ru_utime",
                             "ru_stime")}
    print(json.dumps({"planted": planted, "steps": n, "loop_s": loop_s,
                      "step_ms_median": 1e3 * statistics.median(times),
                      "loop_thread": loop_thread, "threads_cpu_s": threads_cpu()}))


def threads_cpu():
    """{thread name: CPU seconds} of this process's threads (names repeat: summed)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[name] = round(out.get(name, 0) + (int(fields[11]) + int(fields[12])) / tick, 2)
    return out


if __name__ == "__main__":
    main()
