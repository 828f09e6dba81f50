"""Three processes of one --on-demand run: this one, a Python child (subprocess) and a fork
child, each serving numbered ROCTx ranges until the file argv[1] exists."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
server = os.path.join(here, "on_demand_server.py")
child = subprocess.Popen([sys.executable, server, sys.argv[1]])
pid = os.fork()
sys.argv = [server, sys.argv[1]]
with open(server) as f:
    code = compile(f.read(), server, "exec")
exec(code, {"__name__": "__main__"})
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
sys.exit(child.wait())
