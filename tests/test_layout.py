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
    "web": ("web", "appliance.service", "appliance.store", "appliance.errors", "appliance.config",
            "appliance.words"),
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


# ------------------------------------------------------------------------------------------------ import cycles
CYCLE_PACKAGES = ("appliance", "gpio", "web")


def module_files() -> dict[str, Path]:
    """Every project module by dotted name (a package by its ``__init__``)."""
    modules = {}
    for package in CYCLE_PACKAGES:
        for path in files_under(package):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def import_edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in it, inside functions too (they run the same import when
    called), relative imports resolved; ``from package import submodule`` is an edge to the submodule. Only
    ``if TYPE_CHECKING:`` blocks are left out: they never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    never_run = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            never_run.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in never_run:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                if f"{module}.{alias.name}" in modules:
                    out.add(f"{module}.{alias.name}")
                elif module in modules:
                    out.add(module)
    out.discard(name)
    return out


def import_cycles() -> list[frozenset]:
    """Groups of project modules that import each other, directly or round a longer circle (Tarjan's strongly
    connected components of the import graph)."""
    modules = module_files()
    graph = {name: import_edges(name, path, modules) for name, path in modules.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in graph:
        if start in order:
            continue
        work = [(start, iter(graph[start]))]  # iterative: no recursion limit on a deep import chain
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], order[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(frozenset(group))
    return cycles


def test_the_cycle_finder_finds_a_cycle_through_an_import_inside_a_function(tmp_path):
    modules = {"appliance.a": tmp_path / "a.py", "appliance.b": tmp_path / "b.py"}
    modules["appliance.a"].write_text("from appliance import b\n")
    modules["appliance.b"].write_text("def f():\n    from appliance.a import x\n")
    assert import_edges("appliance.a", modules["appliance.a"], modules) == {"appliance.b"}
    assert import_edges("appliance.b", modules["appliance.b"], modules) == {"appliance.a"}
    modules["appliance.b"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import appliance.a\n")
    assert import_edges("appliance.b", modules["appliance.b"], modules) == set()


def test_no_two_project_modules_import_each_other_not_even_inside_a_function():
    """One direction only (the state records <- the rules' queries <- the engine): a module that needs another's
    function while that one needs it back holds a query in the wrong place."""
    assert [sorted(group) for group in import_cycles()] == []

