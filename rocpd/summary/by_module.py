"""GPU time per ``nn.Module`` (``rocpd summary --by module``), from a ``--module-trace`` run.

Under ``rocprof run --module-trace`` every module call is a ROCTx range ``nn.Module: <path>``
(rocprof/capture/module_trace.py), so a kernel's innermost range names the innermost module
around its launch. Self time: the kernels launched directly in that module; total time: also in
every module under it (``Net.blocks.0`` includes ``Net.blocks.0.proj``).
"""

from __future__ import annotations

import pandas as pd

from ..textfmt import more_rows

PREFIX = "nn.Module: "
OUTSIDE = "(not in a module)"
_SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def table(db, **filters):
    """DataFrame Module, Kernels, SelfNs, TotalNs, SelfPercent (of all kernel time), sorted by
    total time; a row OUTSIDE for kernels launched outside any module."""
    k = db.kernels(**filters)
    cols = ["Module", "Kernels", "SelfNs", "TotalNs", "SelfPercent"]
    if k.empty:
        return pd.DataFrame(columns=cols)
    rng = k["roctx_range"].astype("string").fillna("")
    module = rng.where(rng.str.startswith(PREFIX), "").str.slice(len(PREFIX))
    module = module.where(module != "", OUTSIDE)
    grouped = k.assign(Module=module).groupby("Module")["duration"].agg(["count", "sum"])
    self_ns = grouped["sum"].to_dict()
    counts = grouped["count"].to_dict()
    all_ns = float(k["duration"].sum()) or 1.0
    rows = []
    for path in self_ns:
        if path == OUTSIDE:
            total = self_ns[path]
        else:
            total = sum(ns for p, ns in self_ns.items() if p == path or p.startswith(path + "."))
        rows.append((path, int(counts[path]), int(self_ns[path]), int(total), 100.0 * self_ns[path] / all_ns))
    # Modules with no kernel of their own still show their children's total.
    for path in list(self_ns):
        parts = path.split(".") if path != OUTSIDE else []
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent not in self_ns and not any(r[0] == parent for r in rows):
                total = sum(ns for p, ns in self_ns.items() if p.startswith(parent + "."))
                rows.append((parent, 0, 0, int(total), 0.0))
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(["TotalNs", "Module"], ascending=[False, True], ignore_index=True)


def format_table(db, top: int | None = None, units: str = "ns", **filters) -> str:
    df = table(db, **filters)
    if df.empty:
        return "== GPU TIME BY MODULE ==\n(no kernels)\n"
    if not df["Module"].ne(OUTSIDE).any():
        note = ("no kernel was launched inside an nn.Module range: record with "
                "`rocprof run --module-trace`")
        return f"== GPU TIME BY MODULE ==\n{note}\n"
    shown = df if top is None else df.head(top)
    scale = _SCALE[units]
    out = shown.assign(**{f"Self ({units})": shown["SelfNs"] / scale,
                          f"Total ({units})": shown["TotalNs"] / scale})
    out = out[["Module", "Kernels", f"Self ({units})", f"Total ({units})", "SelfPercent"]]
    text = out.to_string(index=False, float_format=lambda v: f"{v:,.3f}")
    more = f"\n{more_rows(len(df) - len(shown))}" if len(shown) < len(df) else ""
    return f"== GPU TIME BY MODULE ==\n{text}{more}\n"
