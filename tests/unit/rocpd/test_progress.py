"""Progress bars: drawn on stderr by the command line when stderr is a terminal, never otherwise."""

import os
import pty
import re
import subprocess
import sys

from support import ROOT


def _run(args, tty: bool):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)])}
    if not tty:
        r = subprocess.run([sys.executable, "-m", "rocpd", *args], capture_output=True, text=True, env=env)
        return r.returncode, r.stderr
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "rocpd", *args], stdout=subprocess.DEVNULL,
                             stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO once the child has closed its end
                break
            if not data:
                break
            chunks.append(data)
        return p.wait(), b"".join(chunks).decode(errors="replace")
    finally:
        os.close(master)


def test_convert_and_summary_bars_only_on_a_terminal(tmp_path, make_run):
    paths = []
    for i in range(3):
        make_run(tmp_path / f"r{i}.db", seed=i, pid=10 + i, n_kernels=20)
        paths.append(str(tmp_path / f"r{i}.db"))
    rc, err = _run(["convert", *paths, "-f", "chrome", "-o", str(tmp_path / "t.json")], tty=True)
    assert rc == 0 and "converting [" in err and "3/3" in err, err
    rc, err = _run(["summary", *paths], tty=True)
    assert rc == 0 and "kernel summary [" in err and "3/3" in err, err
    import importlib.util

    if importlib.util.find_spec("perfetto") is not None:  # optional dependency
        rc, err = _run(["convert", *paths, "-f", "perfetto", "-o", str(tmp_path / "t.pftrace")], tty=True)
        assert rc == 0 and "reading [" in err and "writing [" in err, err
    for fmt in ("csv", "chrome", "otf2"):  # a bar over each file's rows too
        rc, err = _run(["convert", paths[0], "-f", fmt, "-o", str(tmp_path / f"one_{fmt}")],
                       tty=True)
        got = re.findall(r"(?:converting|writing) r0\.db \[[#.]+\] (\d+)/(\d+)", err)
        # the total counts the file's tables; a format leaves a few rows out (CSV: samples)
        assert rc == 0 and got and 0.9 <= int(got[-1][0]) / int(got[-1][1]) <= 1, err
    rc, err = _run(["convert", *paths, "-f", "chrome", "-o", str(tmp_path / "u.json")], tty=False)
    assert rc == 0 and err == ""


def test_library_calls_draw_nothing(tmp_path, make_run, capsys):
    import rocpd
    from rocpd import progress

    make_run(tmp_path / "a.db")
    assert not progress.active()
    with rocpd.connect(str(tmp_path / "a.db")) as db:
        db.kernel_stats()
    assert capsys.readouterr().err == ""


def test_bar_says_time_taken_and_left_and_ends_its_line(monkeypatch, capsys):
    from rocpd import progress

    clock = iter([100.0, 100.5, 102.0, 104.0, 200.0])  # start, then one reading per tick
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(progress, "active", lambda: True)
    bar = progress.Bar(8, "reading")
    bar.tick(1)  # 0.5 s in: no times yet
    bar.tick(2)  # 2 s for 2 of 8: 6 s left at that rate
    bar.tick(4)  # 4 s for 4 of 8: 4 s left
    bar.close()  # a filter left the total unreached: the line still ends
    bar.close()
    lines = capsys.readouterr().err.split("\r")[1:]
    assert lines[0].startswith("reading [###") and "1/8\x1b[K" in lines[0]
    assert "2/8 0:02, ~0:06 left" in lines[1] and "4/8 0:04, ~0:04 left\x1b[K\n" == \
        lines[2][lines[2].index("4/8"):]


def test_a_bar_that_reaches_its_total_ends_its_line_once(monkeypatch, capsys):
    from rocpd import progress

    monkeypatch.setattr(progress, "active", lambda: True)
    bar = progress.Bar(3, "writing")
    bar.tick(3)
    bar.close()
    assert capsys.readouterr().err.count("\n") == 1
