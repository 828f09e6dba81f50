import json
import sys

import roctx

with roctx.range("module-main"):
    pass
print(json.dumps({"argv": sys.argv, "name": __name__}))
