"""PC-sample analysis (rocpd.pc_sampling, `rocpd pcsamples`, the report section) on databases the
real writer made (rocpd.testing: the C++ sink and mapping a session uses)."""

from __future__ import annotations

import hashlib

import pytest

from rocpd.testing import DatabaseBuilder

HOT = "_Z3hotPfi"
HOT_NAME = "hot(float*, int)"
COLD = "_Z4coldPf"


@pytest.fixture
def source_file(tmp_path):
    path = tmp_path / "kernels.cu"
    path.write_text("".join(f"// line {n}\n" for n in range(1, 41)).replace(
        "// line 10\n", "    for (int i = 0; i < n; ++i) acc += x[i] * x[i];  // the hot loop\n"))
    return str(path)


def build(path, source_file, pid=1000, scale=1):
    """hot: 80 % of kernel time, cold: 20 %. PC samples: hot has 800 on line 10 (long
    scoreboard; 500 of them not issued), 100 on line 11 (selected), 100 without a line;
    cold has 250 on line 30."""
    with DatabaseBuilder(path, pid=pid) as b:
        b.symbol(HOT, display_name=HOT_NAME)
        b.kernel(HOT, 1000, 1400)
        b.kernel(HOT, 2000, 2400)
        b.kernel(COLD, 3000, 3200)
        kw = dict(start=1000, end=4000, source_file=source_file)
        b.pc_sample(HOT, 0x100, 800 * scale, stall_reason="long_scoreboard", line=10,
                    code_object=0xFEDCBA9876543210, **kw)
        b.pc_sample(HOT, 0x100, 500 * scale, stall_reason="long_scoreboard", line=10,
                    not_issued=True, **kw)
        b.pc_sample(HOT, 0x110, 100 * scale, stall_reason="selected", line=11, **kw)
        b.pc_sample(HOT, 0x200, 100 * scale, stall_reason="wait", start=1000, end=4000)
        b.pc_sample(COLD, 0x40, 250 * scale, stall_reason="math_pipe_throttle", line=30, **kw)
        b.metadata("rocprof.pc_sampling.samples", 1250 * scale)
        b.metadata("rocprof.pc_sampling.dropped", 7)
        b.metadata("rocprof.pc_sampling.period", "GPU0=2^10 cycles")
        b.metadata("rocprof.pc_sampling.collector_cpu_ns", 2_500_000)
    return str(path)


@pytest.fixture
def db(tmp_path, source_file):
    return build(tmp_path / "pc.db", source_file)


def test_pc_samples_frame_counts_each_sample_once(db):
    import rocpd
    from rocpd import pc_sampling

    df = pc_sampling.pc_samples(db)
    assert int(df["count"].sum()) == 1250  # the 500 not-issued subset is left out
    assert len(pc_sampling.pc_samples(db, not_issued=True)) == 5
    hot = df[df["kernel_name"] == HOT]
    assert set(hot["name"]) == {HOT_NAME}  # the symbol's display name
    assert hot["code_object"].max() == 0xFEDCBA9876543210  # unsigned again
    row = hot[hot["pc_offset"] == 0x100].iloc[0]
    assert row["stall_reason"] == "long_scoreboard" and row["line"] == 10
    assert row["instruction_comment"].endswith("kernels.cu:10")
    assert pc_sampling.pcSamples is pc_sampling.pc_samples
    with rocpd.connect(db) as conn:  # a Connection works as well as a path
        assert int(pc_sampling.pc_samples(conn, kernel=HOT)["count"].sum()) == 1000


def test_top_kernels_lines_and_instructions(db, source_file):
    from rocpd import pc_sampling

    k = pc_sampling.top_kernels(db)
    assert list(k["name"]) == [HOT_NAME, COLD]
    assert list(k["samples"]) == [1000, 250]
    assert k["percent"].iloc[0] == pytest.approx(80.0)
    assert k["top_stall"].iloc[0] == "long_scoreboard"
    lines = pc_sampling.top_lines(db, HOT_NAME)
    assert lines["line"].iloc[0] == 10 and lines["percent"].iloc[0] == pytest.approx(80.0)
    assert lines["source_file"].iloc[0] == source_file
    assert lines["line"].isna().sum() == 1  # the samples without line info, in one row
    ins = pc_sampling.top_instructions(db, HOT, limit=2)
    assert list(ins["pc_offset"]) == [0x100, 0x110]
    assert ins["stalls"].iloc[0] == "long_scoreboard:800"


def test_kernel_time_shares_side_by_side(db):
    from rocpd import pc_sampling

    s = pc_sampling.kernel_time_shares(db).set_index("name")
    assert s.loc[HOT_NAME, "sample_percent"] == pytest.approx(80.0)
    assert s.loc[HOT_NAME, "time_percent"] == pytest.approx(80.0)
    assert s.loc[COLD, "time_percent"] == pytest.approx(20.0)


def test_sampling_info_sums_over_databases(tmp_path, source_file):
    from rocpd import pc_sampling

    a = build(tmp_path / "a.db", source_file, pid=1)
    b = build(tmp_path / "b.db", source_file, pid=2, scale=2)
    info = pc_sampling.sampling_info([a, b])
    assert info["samples"] == str(1250 * 3) and info["dropped"] == "14"
    assert info["period"] == "GPU0=2^10 cycles"
    assert int(pc_sampling.pc_samples([a, b])["count"].sum()) == 1250 * 3


def test_source_listing_shows_the_line_text_and_share(db):
    from rocpd.pc_sampling import source

    text = source.listing(db, HOT_NAME)
    hot = next(line for line in text.splitlines() if "| " in line and "the hot loop" in line)
    assert hot.split()[0] == "80.0%" and " 10 |" in hot
    assert "10.0% of the samples have no line information" in text


def test_source_listing_without_the_file_lists_sampled_lines(tmp_path):
    from rocpd.pc_sampling import source

    db = build(tmp_path / "gone.db", str(tmp_path / "not-here.cu"))
    text = source.listing(db, COLD)
    assert "source not found here" in text and " 30 |" in text


def test_cli_pcsamples_and_read_only(cli, db):
    before = hashlib.sha256(open(db, "rb").read()).hexdigest()
    rc, out, _ = cli("pcsamples", db, "--source")
    assert rc == 0
    assert out.splitlines()[0].startswith("PC samples: 1250 (dropped 7; period GPU0=2^10 cycles")
    assert f"80.0%      1000  {HOT_NAME}  (top stall: long_scoreboard)" in out
    assert "kernels.cu:10" in out and "pc+0x0100" in out and "the hot loop" in out
    assert hashlib.sha256(open(db, "rb").read()).hexdigest() == before


def test_samples_without_lines_say_why_per_sampler(cli, tmp_path):
    """NVIDIA's samples lack lines without the binary's line info; AMD's (rocprofiler-sdk's)
    come with none, which no compiler flag changes."""
    path = tmp_path / "amd.db"
    with DatabaseBuilder(path) as b:
        b.pc_sample(HOT, 0x40, 1, start=10, end=10)
        b.metadata("rocprof.pc_sampling.backend", "rocprofiler-sdk host_trap (librocprofiler-sdk.so)")
    rc, out, _ = cli("pcsamples", path)
    assert rc == 0 and "(no line info: rocprofiler-sdk gives no source lines)" in out
    rc, out, _ = cli("pcsamples", build(tmp_path / "nv.db", str(tmp_path / "k.cu")))
    assert rc == 0 and "(no line info: build with nvcc -lineinfo)" in out


def test_cli_pcsamples_without_samples_says_how(cli, tmp_path):
    path = tmp_path / "none.db"
    with DatabaseBuilder(path) as b:
        b.kernel("k", 1, 2)
    rc, _, err = cli("pcsamples", path)
    assert rc != 0 and "--pc-sampling" in err


def test_report_has_the_pc_sample_section(db):
    import rocpd
    from rocpd.pc_sampling import section
    from rocpd.report.sections import Context, optional_sections

    assert section.report_section in [f for _, f in optional_sections()]
    with rocpd.connect(db) as conn:
        sec = section.report_section(Context(db=conn, analysis=None))
    assert sec is not None and "the hot loop" in sec.markdown and "80.0%" in sec.html
