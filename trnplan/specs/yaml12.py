"""YAML numbers as YAML 1.2 reads them, for PyYAML (a YAML 1.1 library): the loader base every trnplan
reading uses, and the dumper that writes text both readings agree on.

YAML 1.1 (PyYAML's reading) differs from YAML 1.2 (editors', and their schema checks') on numbers, and
silently: `0700` is 448 in 1.1 and 700 in 1.2; `1:30` is 90 in 1.1 (base 60) and the text '1:30' in 1.2;
`1e9` is text in 1.1 and a number in 1.2. trnplan reads the YAML 1.2 way in each case (see specs.yamlsafe's
docstring for the rules) and keeps what both readings agree on (`1_000`, `0x1f`, `0b101`, `.inf`).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import ScalarNode

_STD = "tag:yaml.org,2002:"


class Yaml12Loader(yaml.SafeLoader):  # type: ignore[misc, unused-ignore]  # typed only with types-PyYAML
    """SafeLoader whose ints and floats are YAML 1.2's (no octal from a leading zero, no base 60)."""


# Numbers as YAML 1.2 reads them (see the module docstring): PyYAML's YAML 1.1 int and float resolvers are
# replaced, so that what the editor's schema check accepts is what trnplan accepts.
_INT = re.compile(
    r"""^(?:[-+]?[0-9][0-9_]*      # decimal, a leading zero included (YAML 1.2: 0700 is 700)
        |[-+]?0o[0-7_]+            # octal, as YAML 1.2 writes it
        |[-+]?0x[0-9a-fA-F_]+
        |[-+]?0b[01_]+)$""",
    re.X,
)
_FLOAT = re.compile(
    r"""^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?
        |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
        |[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+   # 1e9: a number in YAML 1.2, text in 1.1
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_NUMBER_TAGS = (_STD + "int", _STD + "float")
Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _NUMBER_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(_STD + "float", _FLOAT, list("-+0123456789."))
Yaml12Loader.add_implicit_resolver(_STD + "int", _INT, list("-+0123456789"))


def _construct_int(loader: yaml.SafeLoader, node: ScalarNode) -> int:
    """A YAML 1.2 integer: decimal even with a leading zero, 0o octal, 0x hex, 0b binary; no base 60."""
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text[:1] == "-" else 1
    text = text[1:] if text[:1] in "+-" else text
    base = {"0o": 8, "0x": 16, "0b": 2}.get(text[:2].lower(), 10)
    digits = text[2:] if base != 10 else text
    if not digits.isascii() or not digits.isalnum():  # int() would take spaces, signs, other scripts' digits
        raise ValueError(f"not an integer: {node.value!r}")
    return sign * int(digits, base)


def _construct_float(loader: yaml.SafeLoader, node: ScalarNode) -> float:
    """A YAML 1.2 float: no base 60 (`!!float 1:30` is refused, not 90.0)."""
    if ":" in str(node.value):
        raise ValueError(f"not a number: {node.value!r}")
    return float(yaml.SafeLoader.construct_yaml_float(loader, node))


Yaml12Loader.add_constructor(_STD + "int", _construct_int)
Yaml12Loader.add_constructor(_STD + "float", _construct_float)


class _Dumper(yaml.SafeDumper):  # type: ignore[misc, unused-ignore]
    """SafeDumper that also quotes a string the YAML 1.2 reading above would take for a number (`09`,
    `0o7`, `1e9`); PyYAML's own resolvers already quote what YAML 1.1 would (`0700`, `1:30`, `yes`)."""


_Dumper.add_implicit_resolver(_STD + "float", _FLOAT, list("-+0123456789."))
_Dumper.add_implicit_resolver(_STD + "int", _INT, list("-+0123456789"))


def dump_yaml(data: Any) -> str:
    """`data` as block YAML text with sorted keys that reads back as `data` here, in YAML 1.1 (PyYAML's
    safe_load) and in YAML 1.2: the same as `yaml.safe_dump(..., sort_keys=True)` except that strings
    either reading would take for another type are quoted."""
    text: str = yaml.dump(
        data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False, width=1000
    )
    return text


__all__ = ["Yaml12Loader", "dump_yaml"]
