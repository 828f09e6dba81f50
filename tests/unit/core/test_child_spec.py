"""ROCPROF_CHILD_SESSION: the launcher configures a session once and describes it; each followed
Python child starts from that description (rocprof/children.py) without configuring or probing
anything itself."""

from __future__ import annotations

import json
import os
import sys

from rocprof import _core, backends, children
from rocprof.options import Options


def test_values_with_newlines_backslashes_and_equals_signs_come_back_as_written():
    values = {"settings": "cupti.enabled=1\nsampling.hz=100\n", "a": "C:\\new\\n", "b": "x=y",
              "c": "\\\\n\n\\", "empty": ""}
    text = children.encode(values)
    assert "\n" in text and text.count("\n") == len(values) - 1  # one line per key
    assert children.decode(text) == values


def test_a_child_gets_the_launchers_settings_database_template_and_options(tmp_path):
    options = Options(output_dir=str(tmp_path / "out"), output_file="run", sample=250,
                      stats=True, summary=True, output_formats=["csv"], selected_regions=True,
                      collection_periods=[(0.5, 1.0, 2)], collection_period_unit="msec")
    settings, notes = backends.configure(options)
    env = children.child_environment(options, settings, ["a note"])
    assert env["PYTHONPATH"].split(os.pathsep)[0].endswith(os.path.join("rocprof", "_child"))
    values = children.decode(env[children.ENV])
    assert _core.CaptureSettings.from_text(values["settings"]).to_text() == settings.to_text()
    assert values["template"] == str(tmp_path / "out" / "run_%pid%_results.db")
    stored = json.loads(values["options"])
    assert stored["output_dir"] == str(tmp_path / "out") and stored["output_file"] == "run_%pid%"
    assert not stored["stats"] and not stored["summary"] and stored["output_formats"] == []
    assert stored["sample"] == 250
    assert json.loads(values["notes"]) == ["a note"]
    assert values["capture"].split() == ["sampling"]  # its in_child: the threads' hook
    assert values["periods"] == "0.5:1.0:2" and values["period_unit"] == "msec"
    assert values["python"] == sys.prefix


def test_library_code_is_the_launchers_for_the_same_interpreter_and_found_again_for_another():
    same = children.ChildSpec({"python": sys.prefix, "site_prefixes": "/lib/a\n/lib/b",
                               "site_filter": "none"})
    assert same.same_python and same.site_prefixes() == "/lib/a\n/lib/b"
    other = children.ChildSpec({"python": "/another/venv", "site_prefixes": "/lib/a",
                                "site_filter": "+/opt/mine/"})
    assert not other.same_python
    from rocprof.capture import site_filter

    assert other.site_prefixes() == "\n".join(site_filter.patterns("+/opt/mine/"))
    assert "/opt/mine/" in other.site_prefixes().split("\n")
