"""The layout is the architecture: imports point inward (web -> service -> engine), never back.

Each rule below names a folder and the project modules it may import. The pure rules engine imports the
standard library, itself and the error tree only; the capture process reaches the appliance over its
socket, never by import (it shares only settings and errors).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("appliance", "gpio", "web", "bench", "tests")

# folder -> prefixes of project modules it may import
ALLOWED = {
    "appliance/rules": ("appliance.rules", "appliance.errors", "appliance.words"),
    "appliance/store": ("appliance.store", "appliance.rules", "appliance.errors", "appliance.config"),
    "appliance/service": ("appliance.service", "appliance.store", "appliance.packages", "appliance.rules",
                          "appliance.errors", "appliance.config", "appliance.words"),
    # Question packages: readers and the library; the service composes them with the battle store.
    "appliance/packages": ("appliance.packages", "appliance.errors", "appliance.config"),
    "gpio": ("gpio", "appliance.errors", "appliance.config"),
    "web": ("web", "appliance.service", "appliance.store", "appliance.rules", "appliance.errors",
            "appliance.config", "appliance.words"),
}
THIRD_PARTY_FORBIDDEN_IN_RULES = True


def project_imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def files_under(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_imports_point_inward(folder):
    allowed = ALLOWED[folder]
    offenders = []
    for path in files_under(folder):
        for name in project_imports(path):
            if name.split(".")[0] in PROJECT and not any(name == p or name.startswith(p + ".") for p in allowed):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_rules_engine_is_pure():
    """No clock, randomness, I/O, threads or logging in the engine (style.md); time and seeds come in."""
    forbidden = {"time", "datetime", "random", "threading", "logging", "socket", "sqlite3", "os", "subprocess",
                 "asyncio", "secrets"}
    stdlib_ok = {"dataclasses", "enum", "typing", "collections", "itertools", "functools", "math", "fractions",
                 "tomllib", "json", "__future__", "abc", "types", "importlib", "pathlib", "bisect", "operator",
                 "hashlib", "statistics", "re", "string", "copy", "heapq"}
    offenders = []
    for path in files_under("appliance/rules"):
        for name in project_imports(path):
            top = name.split(".")[0]
            if top in forbidden or (top not in stdlib_ok and top != "appliance"):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []
