"""rocprof._core.compile_script (what `rocprof run` runs a script with) makes the code object
compile(source, filename, "exec", dont_inherit=True) makes of the same bytes, and raises what
it raises. This module has `from __future__ import annotations`: a compile that inherited its
caller's flags would store annotations as strings."""

from __future__ import annotations

import warnings

import pytest
from rocprof import _core

SOURCES = {
    "plain": b"print('hello')\n",
    "annotations": b"def f(x: int) -> str:\n    return str(x)\nclass C:\n    y: list[int] = []\n",
    "its own future": b"from __future__ import annotations\ndef f(x: int): pass\n",
    "latin-1 coding line": "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n".encode("latin-1"),
    "utf-8 BOM": b"\xef\xbb\xbfs = 'x'\n",
    "docstring and nesting": b'"""doc"""\nimport os\ndef g():\n    return [i for i in range(3)]\n',
    "no final newline": b"x = 1",
}
BAD = {
    "unclosed": b"x = (1,\n",
    "indent": b"def f():\nreturn 1\n",
    "bad coding": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "not utf-8": b"x = '\xff'\n",
}


def _same_code(a, b) -> None:
    assert a == b and a.co_filename == b.co_filename and a.co_flags == b.co_flags
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if hasattr(x, "co_code"):
            _same_code(x, y)


@pytest.mark.parametrize("name", SOURCES)
def test_the_code_is_what_compile_makes(name):
    source = SOURCES[name]
    _same_code(_core.compile_script(source, "dir/script.py"),
               compile(source, "dir/script.py", "exec", dont_inherit=True))


@pytest.mark.parametrize("name", BAD)
def test_errors_are_what_compile_raises(name):
    source = BAD[name]
    with pytest.raises(SyntaxError) as theirs:
        compile(source, "bad.py", "exec", dont_inherit=True)
    with pytest.raises(SyntaxError) as ours:
        _core.compile_script(source, "bad.py")
    assert type(ours.value) is type(theirs.value) and ours.value.args == theirs.value.args


def test_warnings_are_what_compile_warns():
    source = b"x = 1\nif x is 1:\n    pass\n"
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        compile(source, "w.py", "exec", dont_inherit=True)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        _core.compile_script(source, "w.py")
    assert [(w.category, str(w.message), w.filename, w.lineno) for w in ours] == \
        [(w.category, str(w.message), w.filename, w.lineno) for w in theirs]
    assert theirs


def test_nul_bytes_are_refused_as_compile_refuses_them():
    with pytest.raises((ValueError, SyntaxError), match="null bytes"):
        _core.compile_script(b"x = 1\0", "n.py")
