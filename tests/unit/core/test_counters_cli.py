"""Hardware counters without a GPU: the counter names rocprof uses are checked against CUPTI's own
metric tables (the real libcupti host API, which needs no device), the --pmc/--sol options reach
the native settings, and every CLI error is one line with a non-zero exit."""

from __future__ import annotations

import json
import os

import pytest
from rocprof import _core, backends
from rocprof.cli import build_parser
from rocprof.cli.run import options_from, split_argv
from rocprof.options import Options
from support import run_rocprof

from rocshared import kernel_metrics as metrics


def _cupti_tables() -> str:
    """'' when CUPTI's host tables can be read here, else why not."""
    if not hasattr(_core, "counters_chips"):
        return "this build has no CUPTI counter support"
    try:
        _core.counters_chip("GH100")
    except RuntimeError as e:
        return str(e)
    return ""


NO_TABLES = _cupti_tables()
needs_tables = pytest.mark.skipif(bool(NO_TABLES), reason=f"CUPTI's metric tables unavailable: {NO_TABLES}")


def _gpu_here() -> bool:
    return os.path.exists("/proc/driver/nvidia/gpus") and bool(os.listdir("/proc/driver/nvidia/gpus"))


@needs_tables
def test_every_alias_is_a_collectable_hopper_metric():
    names = [metric for metric, _ in metrics.ALIASES.values()]
    problems = _core.counters_check("GH100", names)
    assert [(n, p) for n, p in zip(names, problems, strict=True) if p] == []


@needs_tables
def test_the_sol_set_exists_where_each_generation_names_it():
    """Each --sol name is a metric of at least one of Ampere, Ada, Hopper, Blackwell (the
    optional ones are left out elsewhere), and on Hopper every precision has its counters."""
    chips = ("GA100", "AD102", "GH100", "GB100")
    bare = [n[1:] for n in metrics.sol_metrics()]
    ok = {n: False for n in bare}
    for chip in chips:
        for n, p in zip(bare, _core.counters_check(chip, bare), strict=True):
            ok[n] = ok[n] or not p
    assert [n for n, good in ok.items() if not good] == []
    hopper = dict(zip(bare, _core.counters_check("GH100", bare), strict=True))
    for p in metrics.PRECISIONS:
        first = [m for m, _ in p.alternatives[0]]
        assert all(not hopper[m] for m in first + list(p.peak_metrics)[:1]), p.key
    for n in (metrics.DURATION, metrics.SM_CLOCK, metrics.DRAM_READ, metrics.DRAM_WRITE,
              metrics.L2_BYTES, metrics.DRAM_PEAK, metrics.L2_PEAK, metrics.OCCUPANCY):
        assert hopper[n] == "", (n, hopper[n])


@needs_tables
def test_check_names_the_problem():
    good, base, bogus = _core.counters_check(
        "GH100", ["dram__bytes_read.sum", "dram__bytes_read", "bogus__thing.sum"])
    assert good == ""
    assert base.startswith("a base metric: name a rollup (dram__bytes_read.sum")
    assert bogus == "not a metric of GH100"


@needs_tables
def test_avail_lists_a_chips_counters_without_a_gpu():
    r = run_rocprof("avail", "--chip", "GH100", "--filter", "^dram__bytes_read$")
    assert r.returncode == 0, r.stderr
    assert "chip GH100 (CUPTI's tables, no device): 1 counters" in r.stdout
    assert "dram__bytes_read  counter    byte             # of bytes read from DRAM" in r.stdout
    assert "FETCH_SIZE" in r.stdout and "dram__bytes_read.sum" in r.stdout
    r = run_rocprof("avail", "--chip", "GH100", "--json", "--filter", "^sm__throughput$",
                    "--submetrics")
    data = json.loads(r.stdout)
    (m,) = data["devices"][0]["metrics"]
    assert m["type"] == "throughput" and "sm__throughput.avg.pct_of_peak_sustained_elapsed" in m["submetrics"]


@pytest.mark.skipif(_gpu_here(), reason="an NVIDIA GPU is present: avail lists its counters")
def test_avail_without_a_gpu_says_so_and_fails():
    for args in (("avail",), ("run", "-L"), ("run", "--list-avail")):
        r = run_rocprof(*args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert r.stderr.count("\n") == 1 and "no GPU counters to list here" in r.stderr
        assert "--chip GH100" in r.stderr


def test_avail_bad_filter_and_unknown_chip_are_one_line():
    r = run_rocprof("avail", "--chip", "GH100", "--filter", "(")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    r = run_rocprof("avail", "--chip", "NOSUCHCHIP")
    assert r.returncode == 1 and r.stderr.count("\n") == 1


@needs_tables
def test_run_refuses_an_unknown_counter_before_starting(tmp_path):
    script = tmp_path / "never.py"
    script.write_text("open('ran', 'w').close()\n")
    r = run_rocprof("run", "-d", tmp_path, "--pmc", "dram__bytes_read.sum", "dram__bytez.sum", script)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "'dram__bytez.sum'" in r.stderr and not (tmp_path / "ran").exists()


def test_pmc_names_end_where_the_script_starts():
    own, target = split_argv(["--pmc", "SQ_WAVES", "dram__bytes_read.sum", "train.py", "--epochs", "1"])
    assert own == ["--pmc", "SQ_WAVES", "dram__bytes_read.sum"] and target == ["train.py", "--epochs", "1"]
    own, target = split_argv(["--pmc", "SQ_WAVES", "--sol", "-m", "pkg.mod"])
    assert own == ["--pmc", "SQ_WAVES", "--sol", "-m", "pkg.mod"] and target == []


def test_pmc_options_resolve_names_and_trace_kernels():
    own, _ = split_argv(["--pmc", "SQ_WAVES", "FETCH_SIZE", "dram__bytes_read.sum", "x.py"])
    o = options_from(build_parser().parse_args(["run", *own]))
    assert o.pmc == ["sm__warps_launched.sum", "dram__bytes_read.sum"]  # FETCH_SIZE is the same metric
    assert o.counter_aliases == {"SQ_WAVES": "sm__warps_launched.sum", "FETCH_SIZE": "dram__bytes_read.sum"}
    assert "kernels" in o.activities() and not o.default_gpu


def test_resolve_rejects_malformed_names():
    with pytest.raises(ValueError, match="'dram;drop' is not a counter name"):
        metrics.resolve(["dram;drop"])
    assert metrics.resolve(["a.sum,b.sum", "a.sum"]) == (["a.sum", "b.sum"], {})


def test_counter_settings_reach_the_native_side_and_round_trip(monkeypatch):
    from rocprof.capture import cupti

    settings = _core.CaptureSettings()
    # rocprofv3's --kernel-include/exclude-regex pick the counter kernels; the trace's own
    # filters are --trace-kernel-include/exclude-regex.
    cupti.configure(Options(pmc=["dram__bytes_read.sum"], sol=True, kernel_include_regex="^gemm",
                            kernel_exclude_regex="fill"), settings)
    assert (settings.counters.kernel_include, settings.counters.kernel_exclude) == ("^gemm", "fill")
    names = settings.counters.metrics.split()
    assert names[0] == "dram__bytes_read.sum"            # asked for: required
    assert "?dram__bytes_read.sum" not in names           # not again as optional
    assert "?" + metrics.DRAM_PEAK in names and settings.counters.origin == "pmc+sol"
    settings.validate()
    back = _core.CaptureSettings.from_text(settings.to_text())
    assert back.counters.metrics == settings.counters.metrics
    assert back.counters.kernel_include == "^gemm" and back.counters.kernel_exclude == "fill"


def test_counter_settings_validation_names_the_option():
    s = _core.CaptureSettings()
    s.counters.metrics = "dram__bytes_read.sum sm;throughput"
    with pytest.raises(ValueError, match="--pmc: 'sm;throughput' is not a counter name"):
        s.validate()
    s.counters.metrics = " ".join(f"m{i}.sum" for i in range(_core.CounterSettings.MAX_METRICS + 1))
    with pytest.raises(ValueError, match="at most 256 per run"):
        s.validate()
    s.counters.metrics = "dram__bytes_read.sum"
    s.counters.kernel_include = "gemm("
    with pytest.raises(ValueError, match="--kernel-include-regex"):
        s.validate()


def test_info_lists_the_counter_backends():
    r = run_rocprof("info", "--json")
    names = {b["name"]: b for b in json.loads(r.stdout)["backends"]}
    assert "cupti-counters" in names and "rocprofiler-sdk-counters" in names
    assert not names["rocprofiler-sdk-counters"]["compiled"]
    assert "not written yet" in names["rocprofiler-sdk-counters"]["reason"]
    assert names["cupti-counters"]["description"].startswith("NVIDIA per-kernel hardware counters")
    assert names["cupti-counters"]["live"] == backends._status("cupti-counters")["live"]


@pytest.mark.skipif(_gpu_here(), reason="an NVIDIA GPU is present: the run would collect counters")
def test_pmc_run_without_a_gpu_runs_the_program_and_says_why(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("print('ran')\n")
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "--pmc", "dram__bytes_read.sum", script)
    assert r.returncode == 0 and "ran" in r.stdout
    assert "hardware counters (--pmc/--sol) requested but no GPU backend is live" in r.stderr
    assert (tmp_path / "p_results.db").exists()


def test_peaks_without_a_gpu_fail_in_one_line(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path), "CUDA_VISIBLE_DEVICES": ""}
    r = run_rocprof("peaks", env=env)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "rocprof peaks" in r.stderr


def test_sol_peaks_for_a_run(monkeypatch, tmp_path):
    """--sol keeps the cached peaks with the run; with no GPU visible it measures nothing and
    says that `rocpd sol` compares with theoretical peaks only."""
    from rocprof import peaks

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert peaks.for_run() == (None, "no NVIDIA GPU here: no empirical peaks measured; `rocpd sol` "
                                     "compares with theoretical peaks only")
    cached = {"GPU-1": {"device": "d", "dram_bytes_per_second": 1e12, "flops": {}}}
    (tmp_path / "rocprof").mkdir()
    (tmp_path / "rocprof" / "peaks.json").write_text(json.dumps(cached))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert peaks.for_run() == (cached, "")  # one GPU visible, one cached: no measurement
