"""Kernel regexes are glibc POSIX ERE everywhere (rocpd.regex), the engine the native capture uses."""

import threading

import pandas as pd
import pytest

import rocpd
from rocpd import regex
from rocpd.errors import RocpdError
from rocpd.testing import DatabaseBuilder

HINT = r"(POSIX extended syntax: use [0-9] not \d, no (?i) flags)"

NAMES = ["gemm_12", "gemm_d1", "gemm_fp16", "GEMM_7", "relu",
         "void at::native::vectorized_elementwise_kernel<4>", "at::native::void_not_anchored",
         "softmax_warp_forward", "layernorm"]


def _one_line_error(pattern):
    with pytest.raises(ValueError) as e:
        regex.compile(pattern)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"invalid kernel regex '{pattern}': ")
    assert msg.endswith(HINT)
    return msg


def test_glibc_reads_backslash_d_as_a_literal_d():
    # The reason compile() refuses \d: glibc takes it as the letter d, not a digit, so
    # "gemm_\d+" would match "gemm_d1" and never "gemm_12". Checked on the raw engine.
    raw = regex._Compiled(r"gemm_\d+")
    assert raw.search("gemm_d1") and not raw.search("gemm_12")


@pytest.mark.parametrize("esc", ["d", "w", "s", "D", "W", "S", "b", "B", "n", "t"])
def test_backslash_letter_escapes_rejected(esc):
    msg = _one_line_error(rf"gemm_\{esc}+")
    assert f"\\{esc}" in msg


def test_gemm_backslash_d_message_is_exact():
    with pytest.raises(ValueError) as e:
        regex.compile(r"gemm_\d+")
    assert str(e.value) == (r"invalid kernel regex 'gemm_\d+': \d is not POSIX (glibc reads it as"
                            r" a literal 'd') " + HINT)


@pytest.mark.parametrize("pattern", ["(?i)gemm", "gemm(?=_)", "(?<!x)gemm", "(?:gemm)"])
def test_inline_flags_and_lookarounds_rejected(pattern):
    _one_line_error(pattern)


@pytest.mark.parametrize("pattern", ["gemm_[0-9]+?", "gemm.*?relu", "a??", "a{1,2}?", "a++"])
def test_lazy_and_possessive_quantifiers_rejected(pattern):
    # glibc takes "x*?" as "(x*)?": it compiles and silently matches greedily.
    assert "quantifier" in _one_line_error(pattern)


@pytest.mark.parametrize("pattern", ["gemm(", "[a-", "a{2,", "*a", "(a)\\2"])
def test_malformed_rejected_with_glibc_text(pattern):
    _one_line_error(pattern)


def test_nul_rejected():
    # C strings end at NUL: "gemm\0relu" would be compiled as "gemm".
    with pytest.raises(ValueError, match="NUL"):
        regex.compile("gemm\0relu")


def test_posix_ere_matches():
    assert regex.compile("gemm_[0-9]+").search("gemm_12")
    assert not regex.compile("gemm_[0-9]+").search("gemm_d1")
    assert regex.compile("gemm_[[:digit:]]{2}$").search("gemm_12")
    assert regex.compile("^void at::native::").search(NAMES[5])
    assert not regex.compile("^void at::native::").search(NAMES[6])
    assert regex.compile("(relu|softmax)_?").search("softmax_warp_forward")
    assert regex.compile("lay(er)?norm$").search("layernorm")
    assert regex.compile("[*?+]").search("a+b") and not regex.compile("[*?+]").search("ab")
    assert regex.compile(r"a\.b").search("a.b") and not regex.compile(r"a\.b").search("axb")
    assert not regex.compile("gemm").search("GEMM_7")  # case-sensitive, as in capture


def test_mask_over_series_and_list_with_cache():
    r = regex.compile("^gemm_[0-9]+$|relu")
    s = pd.Series(NAMES * 3 + [None], index=range(100, 100 + 3 * len(NAMES) + 1))
    m = r.mask(s)
    assert list(m.index) == list(s.index) and m.dtype == bool
    expected = [n in ("gemm_12", "relu") for n in NAMES] * 3 + [False]
    assert m.tolist() == expected
    assert r.mask(NAMES) == expected[: len(NAMES)]
    assert r.cache_size() == len(NAMES) + 1  # each distinct name (and the missing one) once


def test_threads_share_one_regex():
    r = regex.compile("gemm_[0-9]+")
    out, errors = [], []

    def work(i):
        try:
            out.append(all(r.search(f"gemm_{i}{j}") and not r.search(f"relu{j}") for j in range(300)))
        except Exception as e:  # pragma: no cover - only on failure
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and out == [True] * 8


def test_freed_once():
    r = regex.compile("relu")
    r.close()
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.search("relu")
    del r  # __del__ after close must not free twice (glibc would abort)


@pytest.fixture
def names_db(tmp_path):
    path = tmp_path / "names.db"
    with DatabaseBuilder(path) as b:
        t = 1_000_000
        for i in range(60):
            b.kernel(NAMES[i % len(NAMES)], t + i * 100, t + i * 100 + 50)
    return str(path)


@pytest.mark.parametrize("include,exclude", [("gemm_[0-9]+", None), ("^void at::native::", None),
                                             ("gemm", "_[[:digit:]]+$"), (None, "relu|norm$")])
def test_filters_match_regex_applied_by_hand(names_db, include, exclude):
    inc = include and regex.compile(include)
    exc = exclude and regex.compile(exclude)
    with rocpd.connect(names_db) as db:
        every = db.kernels()["name"].tolist()
        want = [n for n in every if (not inc or inc.search(n)) and not (exc and exc.search(n))]
        got = db.kernels(include=include, exclude=exclude)["name"].tolist()
        assert got == want and got
        stats = db.kernel_stats(include=include, exclude=exclude)
        assert sorted(stats["Name"]) == sorted(set(want))


def test_filters_reject_python_only_syntax(names_db):
    with rocpd.connect(names_db) as db:
        with pytest.raises(RocpdError, match=r"invalid kernel regex 'gemm_\\d\+'"):
            db.kernels(include=r"gemm_\d+")
        with pytest.raises(RocpdError, match=r"invalid kernel regex '\(\?i\)gemm'"):
            db.kernel_stats(exclude="(?i)gemm")


def test_cli_rejects_python_only_syntax(names_db, capsys):
    from rocpd.cli import main

    with pytest.raises(SystemExit) as e:
        main(["summary", names_db, "--include", r"gemm_\d+"])
    assert e.value.code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(
        f"invalid kernel regex 'gemm_\\d+': \\d is not POSIX (glibc reads it as a literal 'd')"
        f" {HINT} (see `rocpd summary --help`)")
