"""ROCm's own ``rocpd`` Python package as an external client of our databases, in a child process.

ROCm's package is also called ``rocpd``; ours must not be shadowed, and its modules must not mix
with ROCm's. So ROCm's files (the external judge's python/, tests/oracle.py; verbatim) are copied into a temporary
package named ``rocm_rocpd`` with ``__init__.py``'s CMake placeholders filled in (what ROCm's build
does with configure_file) and the test-only shim (libpyrocpd_shim.py) as its ``libpyrocpd``; the
child's import path holds that folder and the interpreter's own site-packages (pandas), never
this checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import oracle

HERE = Path(__file__).resolve().parent
# What ROCm's build substitutes into __init__.py (version_info only; nothing reads it).
CONFIGURE = {"PROJECT_VERSION": "1.0.0", "PROJECT_VERSION_MAJOR": "1",
             "PROJECT_VERSION_MINOR": "0", "PROJECT_VERSION_PATCH": "0"}


def build(folder: Path) -> Path:
    """The importable package ``folder/rocm_rocpd``; returns ``folder`` (the import root)."""
    pkg = folder / "rocm_rocpd"
    package = oracle.python()
    pkg.mkdir(parents=True, exist_ok=True)
    for src in package.glob("*.py"):
        text = src.read_text()
        if src.name == "__init__.py":
            text = re.sub(r"@(\w+)@", lambda m: CONFIGURE.get(m.group(1), "unknown"), text)
        (pkg / src.name).write_text(text)
    shutil.copyfile(HERE / "libpyrocpd_shim.py", pkg / "libpyrocpd.py")
    return folder


class Client:
    """Runs ROCm's ``rocpd`` (its __main__.main, or a snippet using the package) in a child."""

    def __init__(self, root: Path):
        self.root = root

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env.update(PYTHONPATH=str(self.root), ROCPD_SCHEMA_PATH=str(oracle.sql()), PYTHONNOUSERSITE="1")
        return env

    def cli(self, *args, cwd=None, check=True) -> subprocess.CompletedProcess:
        """``rocpd ARGS`` with ROCm's package; stdout/stderr captured as text."""
        code = "import sys\nfrom rocm_rocpd.__main__ import main\nsys.exit(main(sys.argv[1:]) or 0)"
        r = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=self._env(), cwd=cwd,
                           capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            raise AssertionError(f"ROCm's rocpd {args} failed:\n{r.stdout}\n{r.stderr}")
        return r

    def python(self, code: str, *args):
        """Runs ``code`` (which imports rocm_rocpd and sets ``result``) and returns ``result``
        sent back as JSON."""
        wrapper = f"{code}\nimport json, sys\nsys.stdout.write('\\n@@' + json.dumps(result))\n"
        r = subprocess.run([sys.executable, "-c", wrapper, *map(str, args)], env=self._env(),
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise AssertionError(f"ROCm's rocpd package failed:\n{r.stdout}\n{r.stderr}")
        return json.loads(r.stdout.rsplit("\n@@", 1)[1])
