"""`rocprof run`'s two readers of its own options give the same settings: run_args.py, which reads
the usual command line straight from the option table, and the argparse parser built from the
same table (run_parser.py), which reads everything else. The command lines are made from the
table: every spelling of every option in each form its kind takes, good values and bad ones,
then random mixes of them."""

from __future__ import annotations

import random

import pytest
from rocprof import option_table as table
from rocprof.cli import UsageError, build_parser
from rocprof.cli.run import options_from
from rocprof.cli.run_args import namespace


def _argparse(own: list[str]):
    """argparse's namespace of `rocprof run OWN`, or "error"."""
    try:
        args = build_parser("run").parse_args(["run", *own])
    except (UsageError, SystemExit):
        return "error"
    return vars(args)


def _samples(option: table.Option) -> list[str]:
    """Values for a value option: each choice (also in capitals), a number, a path, bad ones."""
    kw = option.argparse
    if "choices" in kw:
        return [*kw["choices"], kw["choices"][0].upper(), "no-such-choice"]
    if kw.get("type") is int:
        return ["7", "0", "x7", ""]
    if kw.get("type") == "period":
        return ["1:2:0", "0.5:1:3", "1:2", "x"]
    return ["out/dir", "", "a=b", "%pid%"]


def forms(option: table.Option) -> list[tuple[list[str], bool]]:
    """(tokens, plain): each form of each spelling; plain ones are forms run_args must read
    itself whenever argparse takes them (the rest it may leave to argparse)."""
    out: list[tuple[list[str], bool]] = []
    longs = [n for n in option.names if n.startswith("--")]
    for name in option.names:
        if option.kind == "switch":
            out += [([name], True)] + [([f"{n}=1"], False) for n in longs]
        elif option.kind == "bool":
            out += [([name], True), ([name, "false"], True), ([name, "YES"], True),
                    ([name, "maybe"], True), ([name, "-1"], False)]
            out += [([f"{n}={v}"], True) for n in longs for v in ("true", "off", "", "2")]
        elif option.kind == "rate":
            out += [([name], True), ([name, "500"], True), ([name, "-5"], False)]
            out += [([f"{n}={v}"], True) for n in longs for v in ("250", "x", "")]
        elif option.kind in ("value", "module"):
            for v in _samples(option):
                out.append(([name, v], True))
                out += [([f"{n}={v}"], True) for n in longs]
            out += [([name], True), ([name, "-x"], False)]
        elif option.kind == "values":
            out += [([name, "csv"], False), ([name, "a", "b"], False)]
    return out


ALL = [f for o in table.OPTIONS if o.kind != "target" for f in forms(o)]
UNUSUAL = [["--sys"], ["--output-dir", "x"], ["-dout"], ["-d=out"], ["-sS"], ["-h"], ["--help"],
           ["--nope"], ["-x"], ["-f", "csv"], ["--pmc", "A", "B"], ["-d", "-5"], ["-5"], ["stray"]]


def _check(own: list[str], plain: bool) -> bool:
    """Whether run_args read `own` itself (it must, for a plain line argparse takes)."""
    ours = namespace(own)
    theirs = _argparse(own)
    if ours is None:
        assert not (plain and theirs != "error"), f"run_args left a plain line to argparse: {own}"
        return False
    assert theirs != "error", f"run_args read a line argparse refuses: {own} -> {vars(ours)}"
    assert vars(ours) == theirs, own
    return True


@pytest.mark.parametrize("tokens,plain", ALL, ids=[" ".join(t) or "''" for t, _ in ALL])
def test_each_form_of_each_option_reads_as_argparse_reads_it(tokens, plain):
    _check(tokens, plain)


def test_mixed_and_repeated_options_read_as_argparse_reads_them():
    rng = random.Random(27)
    read = 0
    for _ in range(400):
        picked = [rng.choice(ALL) for _ in range(rng.randint(2, 6))]
        own = [t for tokens, _ in picked for t in tokens]
        read += _check(own, all(plain for _, plain in picked))
    assert read >= 50  # many mixes hold a bad value: argparse refuses those


@pytest.mark.parametrize("own", UNUSUAL, ids=" ".join)
def test_unusual_lines_are_left_to_argparse(own):
    assert namespace(own) is None


def test_the_usual_lines_give_the_same_options():
    lines = [[], ["-d", "out", "-o", "x"], ["--sys-trace"], ["--sample", "--sampling-mode", "wall"],
             ["-P", "1:2:0", "-P", "0:1:1", "--collection-period-unit", "msec"],
             ["--kernel-trace=false", "--process-freq", "50", "--gpus", "0,2-3"],
             ["-m", "timeit"], ["--no-follow-children", "-T", "-M", "--log-level", "error"]]
    for own in lines:
        ours = namespace(own)
        assert ours is not None, own
        theirs = build_parser("run").parse_args(["run", *own])
        for args in (ours, theirs):
            args.target = ["script.py"]
        assert options_from(ours) == options_from(theirs), own
