"""Launch sites skip library frames by the library folders' exact paths (the standard library,
site-packages, rocprof's own package), never by folder names: a user's script living in a
folder named rocprof (a checkout cloned as `rocprof`, with python/rocprof/ inside) is the user's
code and names the launch site."""

import importlib.util
import json

import pytest
from rocprof import _core
from rocprof.capture import cupti

pytestmark = pytest.mark.skipif(not hasattr(_core, "_launch_site_here"),
                                reason="built without the CUPTI backend (launch sites are its)")

PROBE = "from rocprof import _core\n\n\ndef launch():\n    return _core._launch_site_here()\n"


@pytest.mark.parametrize("folder", ["rocprof", "my work/rocprof/python/rocprof/cli"])
def test_a_script_in_a_folder_named_rocprof_is_a_launch_site(tmp_path, folder, launch_sites_started):
    home = tmp_path / folder
    home.mkdir(parents=True)
    script = home / "train.py"
    script.write_text(PROBE)
    assert not any(str(script).startswith(p) for p in cupti.library_prefixes())
    spec = importlib.util.spec_from_file_location("probe_in_rocprof_folder", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _key, sid, text = module.launch()
    assert sid != 0
    assert json.loads(text)[0] == {"file": str(script), "line": 5, "function": "launch"}
