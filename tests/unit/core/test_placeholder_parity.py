"""The placeholders of output paths are expanded by the core (C++: native programs that have no
Python) and by rocshared.placeholders (every Python process: the launcher and rocpd). One table,
placeholders_golden.json, says what each template gives; both are held to every row of it."""

from __future__ import annotations

import json
import os
import pathlib

import pytest
from rocprof import _core

from rocshared import placeholders

TABLE = json.loads((pathlib.Path(__file__).with_name("placeholders_golden.json")).read_text())
IMPLEMENTATIONS = {"core (C++)": _core.expand_path, "rocshared.placeholders": placeholders.expand}


@pytest.fixture
def table_env(monkeypatch, tmp_path):
    for k, v in TABLE["env"].items():
        monkeypatch.setenv(k, v)
    for k in TABLE["unset"]:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    return {"hostname": os.uname().nodename, "pid": os.getpid(), "ppid": os.getppid(),
            "pgid": os.getpgid(0), "psid": os.getsid(0), "cwd": tmp_path.name}


@pytest.mark.parametrize("impl", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("template,expected", TABLE["cases"], ids=[c[0] for c in TABLE["cases"]])
def test_each_implementation_gives_the_tables_name(table_env, impl, template, expected):
    expand = IMPLEMENTATIONS[impl]
    if expected.startswith("!"):
        with pytest.raises(ValueError) as e:
            expand(template, TABLE["argv"])
        assert str(e.value).startswith(expected[1:]) and "\n" not in str(e.value), str(e.value)
    else:
        for key, value in table_env.items():
            expected = expected.replace("{" + key + "}", str(value))
        assert expand(template, TABLE["argv"]) == expected


def test_the_table_names_every_placeholder_the_core_knows():
    known = placeholders.KNOWN.replace(",", " ").replace(" and ", " ").replace("VAR}%", "").split()
    cases = " ".join(c[0] for c in TABLE["cases"])
    assert [k for k in known if k not in cases] == [], "add a row for each to the table"
    with pytest.raises(ValueError) as e:
        _core.expand_path("%nope%")
    assert placeholders.KNOWN in str(e.value)  # both say the same set


def test_a_process_without_argv_reads_its_own_command_line(table_env):
    assert placeholders.expand("%argv%") == _core.expand_path("%argv%")
    assert placeholders.expand("%tag%") == _core.expand_path("%tag%")
