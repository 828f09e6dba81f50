"""`rocprof run -S` prints a run's headline tables and first findings in one screen (at most 60
lines), naming the rocpd command that shows what it cut; a run without GPU work is analysed from
its ROCTx phases and samples."""

from __future__ import annotations

import importlib.util

import pytest
from support import ROOT, run_rocprof

SCREEN = 60


def _summary(stdout: str) -> list[str]:
    """The -S text: from the first table to the end (the program's own lines come before)."""
    lines = stdout.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("=="))
    return lines[first:]


def test_demo_with_samples_fits_one_screen(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "d", "--sample", "2000", "--sampling-mode", "wall",
                    "-S", ROOT / "examples" / "roctx_demo.py")
    assert r.returncode == 0, r.stderr
    shown = _summary(r.stdout)
    assert len(shown) <= SCREEN, "\n".join(shown)
    text = "\n".join(shown)
    assert "== SAMPLES" in text and "== TOP FINDINGS" in text
    # The findings come from the phases and the samples: which of the two ranks among the top
    # three moves with the machine's load (the hot lines' share of samples, the missed samples).
    assert "nothing to break down" not in text
    assert "slowest phase" in text or "sampled threads spent their time there" in text, text


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_training_run_with_samples_fits_one_screen(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "c", "--sample", "-S",
                    ROOT / "examples" / "train_cifar.py", "--epochs", "1", timeout=300)
    assert r.returncode == 0, r.stderr
    shown = _summary(r.stdout)
    assert len(shown) <= SCREEN, "\n".join(shown)
    text = "\n".join(shown)
    assert "(use rocpd samples DB --lines --all)" in text or "more (use" not in text
    assert "== TOP FINDINGS (3 of" in text and "trace less" not in text
