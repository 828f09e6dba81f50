"""A multi-rank fixture: one database per rank of a synchronous data-parallel run, built with
``rocpd.testing.DatabaseBuilder`` (the real writer). Importable as ``rocpd.testing.build_ranks``."""

from __future__ import annotations

import os

from .builder import DatabaseBuilder

RANK_KERNELS = (("gemm_bf16_tn_128x128", 3, 900_000), ("layernorm_fwd", 1, 120_000),
                ("softmax_fwd", 1, 150_000), ("gemm_bf16_nt_128x128", 3, 850_000),
                ("adam_update", 1, 200_000))
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"


def build_ranks(folder, ranks: int = 64, steps: int = 20, straggler: int | None = 37,
                slowdown: float = 1.3, seed: int = 0, rank_var: str = "RANK",
                agent: bool = True) -> list[str]:
    """Databases of a synchronous data-parallel run, one per rank (``rank<N>_results.db``, the rank
    in ``rank_var`` of the recorded environment: RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, ...).

    Per step and rank: the kernels of RANK_KERNELS (each +-3 % noise; the GEMMs of rank
    ``straggler`` ``slowdown`` times longer), then an all-reduce that ends on every rank when the
    slowest rank's compute is done plus 1 ms: the fast ranks wait in it. ROCTx ranges: "train"
    around everything, "step" per step, "forward"/"backward" inside. With ``agent``, also the
    launcher's own database (no rank in its environment), as torchrun's agent leaves one."""
    import random

    os.makedirs(folder, exist_ok=True)
    rng = random.Random(seed)
    t0, comm = 1_000_000_000_000, 1_000_000
    # Every rank's kernel durations first: the all-reduce needs the slowest rank's compute.
    plan = []
    for r in range(ranks):
        per_step = []
        for _ in range(steps):
            ks = []
            for name, count, base in RANK_KERNELS:
                for _ in range(count):
                    slow = slowdown if (r == straggler and name.startswith("gemm")) else 1.0
                    ks.append((name, int(base * slow * rng.uniform(0.97, 1.03))))
            per_step.append(ks)
        plan.append(per_step)
    compute = [[sum(d for _, d in plan[r][k]) + 5_000 * len(plan[r][k]) for r in range(ranks)]
               for k in range(steps)]
    step_len = [max(c) + comm + 200_000 for c in compute]
    paths = []
    for r in range(ranks):
        path = os.path.join(os.fspath(folder), f"rank{r}_results.db")
        if os.path.exists(path):
            os.unlink(path)
        env = {rank_var: str(r), "LOCAL_RANK": str(r % 8), "WORLD_SIZE": str(ranks)}
        with DatabaseBuilder(path, pid=40_000 + r, hostname=f"node{r // 8:02d}", rank=None,
                             environment=env, command="python train.py") as b:
            t = t0
            b.marker("train", t0 - 10_000, t0 + sum(step_len) + 10_000)
            for k in range(steps):
                b.marker("step", t, t + step_len[k] - 50_000)
                kt = t + 20_000
                half = len(plan[r][k]) // 2
                b.marker("forward", t + 10_000, kt + sum(d + 5_000 for _, d in plan[r][k][:half]))
                b.marker("backward", kt + sum(d + 5_000 for _, d in plan[r][k][:half]),
                         kt + compute[k][r])
                for name, d in plan[r][k]:
                    b.kernel(name, kt, kt + d)
                    kt += d + 5_000
                b.kernel(ALLREDUCE, kt, t + 20_000 + max(compute[k]) + comm)
                t += step_len[k]
        paths.append(path)
    if agent:
        path = os.path.join(os.fspath(folder), "agent_results.db")
        if os.path.exists(path):
            os.unlink(path)
        with DatabaseBuilder(path, pid=39_999, hostname="node00", gpus=0,
                             environment={"PATH": "/usr/bin"}, command="torchrun train.py") as b:
            b.region("PYTHON", "torch.distributed.run.main", t0 - 1_000_000, t0 + sum(step_len))
        paths.append(path)
    return paths
