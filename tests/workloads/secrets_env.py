import roctx

with roctx.range("x"):
    pass
