"""rocprof._core.json_text (the JSON text of the launcher's options and notes, stored in every
database and handed to each followed child) writes what json.dumps(value, sort_keys=True)
writes, byte for byte, and refuses what json.dumps refuses; the launcher then needs no json
(with re and enum) before the program starts."""

from __future__ import annotations

import json
import math
import random
from collections import OrderedDict

import pytest
from rocprof import _core

# Characters where json's escaping has a case of its own: the short escapes, the other controls,
# DEL, the printable range's ends, Latin-1, the BMP's top, lone surrogates (os.fsdecode's
# surrogateescape gives them to paths that are not UTF-8) and characters above the BMP.
SPECIAL = ['"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", " ", "~", "\x7f",
           "\x80", "é", "\u2028", "\uffff", "\ud800", "\udcff", "\U0001f600", "\U0010ffff"]
FLOATS = [0.0, -0.0, 1.5, -2.25, 0.1, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, 123456789.125,
          math.inf, -math.inf]
INTS = [0, -1, 7, 2**31, -(2**63), 2**64 + 1, 10**40]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(SPECIAL) if rng.random() < 0.4 else chr(rng.randrange(0x20, 0x7f))
                   for _ in range(rng.randrange(0, 12)))


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice(INTS + [rng.randrange(-10**6, 10**6)])
    if kind == 2:
        return rng.choice(FLOATS + [rng.uniform(-1e6, 1e6)])
    if kind in (3, 4, 5):
        return _text(rng)
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]
    if kind == 7:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randrange(0, 4)))
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(0, 6))}


def test_random_values_read_as_json_dumps_with_sorted_keys():
    rng = random.Random(20261129)
    for _ in range(3000):
        value = _value(rng)
        assert _core.json_text(value) == json.dumps(value, sort_keys=True), repr(value)


@pytest.mark.parametrize("value", [*SPECIAL, *FLOATS, *INTS, None, True, False, "", [], (), {}],
                         ids=repr)
def test_each_special_case(value):
    assert _core.json_text(value) == json.dumps(value, sort_keys=True)
    assert _core.json_text([value, {"k": value}]) == json.dumps([value, {"k": value}], sort_keys=True)


def test_nan_is_written_as_json_writes_it():
    assert _core.json_text([math.nan]) == json.dumps([math.nan]) == "[NaN]"


def test_subclasses_are_written_as_their_base_types():
    class Code(int):
        def __repr__(self):
            return "Code.X"

    class Ratio(float):
        def __repr__(self):
            return "Ratio.Y"

    class Name(str):
        pass

    value = OrderedDict([("z", Code(3)), ("a", [Ratio(0.5), Name("n\n")])])
    assert _core.json_text(value) == json.dumps(value, sort_keys=True) == \
        '{"a": [0.5, "n\\n"], "z": 3}'


def test_what_an_options_dict_holds():
    from rocprof.options import Options

    options = Options(output_dir="out dir/é", output_formats=["csv", "pftrace"], sample=1000)
    assert options.to_json() == json.dumps(options.as_dict(), sort_keys=True)
    assert json.loads(options.to_json()) == options.as_dict()


def test_what_json_refuses_is_refused():
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        _core.json_text({"a": {1, 2}})
    with pytest.raises(TypeError, match="Object of type bytes is not JSON serializable"):
        _core.json_text([b"x"])
    with pytest.raises(TypeError, match="keys must be str, not int"):
        _core.json_text({1: "one"})  # json would write "1": options never have such keys
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deeply"):
        _core.json_text(deep)
