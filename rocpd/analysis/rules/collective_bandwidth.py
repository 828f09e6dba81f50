"""Finding: collectives that move their bytes far below the link's bandwidth.

Reference bandwidth, per run: the nominal per-direction GPU-to-GPU link bandwidth of the GPU
model (NVLink / Infinity Fabric, table below) when every rank of the run is on one host and the
model is known; otherwise the best bus bandwidth the run itself measured (over calls of at least
LARGE_BYTES: small messages are bound by latency, not bandwidth). A group of calls (operation,
size bucket of at least LARGE_BYTES) whose bus bandwidth (nccl-tests' definition, over the
group's summed kernel time) is below SLOW_SHARE of the reference is a finding; its score is the
time it would save at the reference bandwidth, as a share of the ranks' GPU time.
"""

from __future__ import annotations

from ...collectives.bandwidth import bucket_label, summary
from ..findings import Finding, _ms, _pct

LARGE_BYTES = 1 << 20
SLOW_SHARE = 0.30
MIN_SCORE = 0.005
# Per-direction GB/s between two GPUs of one host through all their links (vendor data sheets).
NOMINAL_LINK_GBS = (("B200", 900.0), ("H200", 450.0), ("H100", 450.0), ("A100", 300.0),
                    ("MI300", 448.0), ("MI250", 200.0))


def _nominal(a) -> tuple[float, str] | None:
    for p in a.processes:
        for value in p.agents.values():
            text = " ".join(str(v) for v in (value if isinstance(value, tuple) else (value,)))
            for model, gbs in NOMINAL_LINK_GBS:
                if model in text:
                    return gbs, f"nominal {model} link bandwidth"
    return None


def reference(a, calls) -> tuple[float, str] | None:
    if calls["host"].nunique() == 1:
        nominal = _nominal(a)
        if nominal is not None:
            return nominal
    big = calls[(calls["size_bytes"] >= LARGE_BYTES) & calls["busbw_gbs"].notna()]
    if big.empty:
        return None
    best = float(big["busbw_gbs"].max())
    return (best, "best bus bandwidth measured in this run") if best > 0 else None


def slow_collectives(a) -> list[Finding]:
    calls = getattr(a, "collectives", None)
    if calls is None or calls.empty:
        return []
    ref = reference(a, calls)
    if ref is None:
        return []
    ref_gbs, ref_what = ref
    span = sum(float(p.gpu_span()[1] - p.gpu_span()[0]) for p in a.processes
               if p.gpu_ops) or 1.0
    s = summary(calls[calls["size_bytes"] >= LARGE_BYTES])
    slow = s[s["BusBwGBs"] < SLOW_SHARE * ref_gbs]
    if slow.empty:
        return []
    lost = slow["TotalTimeNs"] * (1.0 - slow["BusBwGBs"] / ref_gbs)
    score = float(lost.sum()) / span
    if score < MIN_SCORE:
        return []
    worst = slow.assign(lost=lost).sort_values("lost", ascending=False)
    w = worst.iloc[0]
    title = (f"{w['Operation']} of {w['Size']} runs at {w['BusBwGBs']:.1f} GB/s bus bandwidth, "
             f"{_pct(w['BusBwGBs'] / ref_gbs)} of the {ref_gbs:.0f} GB/s reference")
    ev = [f"{r.Operation} {r.Size}: {r.Calls} calls, {_ms(r.TotalTimeNs)}, bus bandwidth "
          f"{r.BusBwGBs:.1f} GB/s (algorithm {r.AlgBwGBs:.1f} GB/s)" for r in worst.head(4).itertuples()]
    ev.append(f"reference: {ref_gbs:.0f} GB/s, the {ref_what}; bus bandwidth as nccl-tests "
              f"defines it; groups below {bucket_label(LARGE_BYTES)} are latency-bound and left out")
    sugg = ("check the transport NCCL chose (NCCL_DEBUG=INFO: NVLink/P2P vs SHM or sockets), "
            "GPU-NIC affinity and NCCL_P2P/NCCL_IB settings; compare with nccl-tests' "
            "all_reduce_perf on this machine; fuse small tensors into larger buckets")
    return [Finding("slow-collectives", title, sugg, score, ev)]


RULES = (slow_collectives,)
