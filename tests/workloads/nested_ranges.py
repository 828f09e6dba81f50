"""Known ranges: outer ⊃ 3 × inner ⊃ leaf, a mark, then the argv/__main__ facts as JSON."""
import json
import os
import sys

import roctx

with roctx.range("outer"):
    for _ in range(3):
        with roctx.range("inner"):
            with roctx.range("leaf"):
                pass
    roctx.mark("checkpoint")

print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                  "file": os.path.abspath(__file__)}))
