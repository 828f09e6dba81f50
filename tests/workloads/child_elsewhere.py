"""Runs a Python child in another working directory."""
import subprocess
import sys
import tempfile

with tempfile.TemporaryDirectory() as elsewhere:
    subprocess.run([sys.executable, "-c", "import roctx\nwith roctx.range('elsewhere'):\n    pass\n"],
                   cwd=elsewhere, check=True)
