"""--module-trace: each nn.Module call is a ROCTx range named by the module's path, so every
launch names the innermost module around it; `rocpd summary --by module` adds GPU time up per
module. On CPU the ranges themselves are checked (a real torch model under `rocprof run`), and
the summary on a database with kernels launched inside such ranges (the real writer)."""

import json
import sqlite3
import subprocess
import sys

import pytest

from rocpd.testing import DatabaseBuilder

MODEL = """\
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return self.act(self.proj(x)) + torch.nn.functional.relu(x)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


class Boom(torch.nn.Module):
    def forward(self, x):
        raise ValueError("boom")


net = Net()
for _ in range(2):
    net(torch.ones(3, 8))
try:
    Boom()(torch.ones(1))
except ValueError:
    pass
net.head(torch.ones(3, 8))  # a submodule called on its own is a root of its own
print("ok")
"""


def _ranges(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT extdata, start, \"end\" FROM regions WHERE category = 'MARKER_CORE_API' "
                       "ORDER BY start").fetchall()
    return [(json.loads(x)["message"], s, e) for x, s, e in rows if x and "message" in x]


@pytest.mark.parametrize("flag", ["--module-trace", None])
def test_module_calls_are_ranges_named_by_their_path(tmp_path, flag):
    pytest.importorskip("torch")
    script = tmp_path / "model.py"
    script.write_text(MODEL)
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", *([flag] if flag else []), "-d",
                        str(tmp_path), "-o", "m", str(script)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and "ok" in p.stdout, p.stderr
    ranges = _ranges(tmp_path / "m_results.db")
    names = [n for n, _, _ in ranges if n.startswith("nn.Module: ")]
    if flag is None:
        assert names == []  # opt-in
        return
    expected = {"nn.Module: Net", "nn.Module: Net.blocks.0", "nn.Module: Net.blocks.0.proj",
                "nn.Module: Net.blocks.0.act", "nn.Module: Net.blocks.1.proj", "nn.Module: Net.head",
                "nn.Module: Boom", "nn.Module: Linear"}
    assert expected <= set(names), sorted(set(names))
    assert names.count("nn.Module: Net") == 2 and names.count("nn.Module: Net.blocks.1.act") == 2
    # Nesting: each block's proj lies inside its block, inside the net.
    net = [(s, e) for n, s, e in ranges if n == "nn.Module: Net"][0]
    proj = [(s, e) for n, s, e in ranges if n == "nn.Module: Net.blocks.0.proj"][0]
    assert net[0] <= proj[0] and proj[1] <= net[1]
    # The module that raised closed its range (the next root is no child of it).
    assert "nn.Module: Boom.Linear" not in names


def test_summary_by_module_adds_self_and_total_time(tmp_path):
    from rocpd.summary import by_module

    db_path = tmp_path / "mods.db"
    with DatabaseBuilder(db_path) as b:
        b.marker("nn.Module: Net", 0, 10_000)
        b.marker("nn.Module: Net.blocks.0", 100, 5_000)
        b.marker("nn.Module: Net.blocks.0.proj", 200, 1_000)
        b.kernel("gemm", 300, 700, region="nn.Module: Net.blocks.0.proj")      # 400
        b.kernel("gelu", 1_100, 1_200, region="nn.Module: Net.blocks.0")       # 100
        b.kernel("head", 6_000, 7_000, region="nn.Module: Net")                # 1000
        b.kernel("copy_k", 20_000, 20_500)                                      # 500, outside
    import rocpd

    with rocpd.connect(str(db_path)) as db:
        t = by_module.table(db).set_index("Module")
        text = by_module.format_table(db, units="ns")
    assert t.loc["Net", "TotalNs"] == 1500 and t.loc["Net", "SelfNs"] == 1000
    assert t.loc["Net.blocks.0", "TotalNs"] == 500 and t.loc["Net.blocks.0", "SelfNs"] == 100
    assert t.loc["Net.blocks.0.proj", "TotalNs"] == 400 and t.loc["Net.blocks.0.proj", "Kernels"] == 1
    assert t.loc[by_module.OUTSIDE, "SelfNs"] == 500
    assert text.startswith("== GPU TIME BY MODULE ==") and "Net.blocks.0.proj" in text
    cli = subprocess.run([sys.executable, "-m", "rocpd", "summary", str(db_path), "--by", "module"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert "GPU TIME BY MODULE" in cli.stdout and "Net.blocks.0.proj" in cli.stdout
