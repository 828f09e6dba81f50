"""Records ROCTx text holding credentials (the test passes secrets in this script's argv too)
and starts one followed Python child whose own argv holds a key."""

import subprocess
import sys

import roctx

URL_1 = "https://alice:url-pw-one@db.example/x"
URL_2 = "https://alice:url-pw-two@db.example/x"  # the same text once the password is cut
TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"

with roctx.range(f"fetch {URL_1}"):
    with roctx.range(f"fetch {URL_2}"):
        pass
roctx.mark(f"auth with {TOKEN}")
roctx.name_thread(f"loader {TOKEN}")
with roctx.range("hf_model_forward_pass_step2"):  # looks like a prefix, is an identifier
    pass
if "--child" not in sys.argv:
    subprocess.run([sys.executable, __file__, "--child", "--api-key", "child-key-Secret-123"],
                   check=True)
