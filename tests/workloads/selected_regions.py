"""--selected-regions: only what runs between resume and pause is recorded."""
import roctx

with roctx.range("before"):
    pass
roctx.resume()
with roctx.range("inside"):
    pass
roctx.pause()
with roctx.range("after"):
    pass
