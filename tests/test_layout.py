"""The layout is the architecture: imports point inward, never back.

    svoyak (the command)  ->  web, gpio  ->  appliance.service  ->  appliance.store, appliance.packages
                          ->  appliance.rules

Each rule below names a folder or a module and the project modules it may import; every Python file of the
project falls under one (:func:`test_every_project_file_has_a_rule`). The pure rules engine imports the standard
library, itself and the error tree only, and reads no file (the service reads profiles and presets and hands them
in); the capture process reaches the appliance over its socket, never by import (it shares only settings,
errors and the socket's wire format, ``appliance.capture_wire``). Relative imports count as what they name; imports made by a string (``importlib.import_module``,
``python -m``, code run in a child) are listed in :data:`STRING_IMPORTS` one by one, and checked like the rest.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("appliance", "gpio", "web", "svoyak", "bench", "tests")

# folder or module -> prefixes of project modules it may import (the most specific key holds for a file)
ALLOWED = {
    "appliance/rules": ("appliance.rules", "appliance.errors"),
    "appliance/store": ("appliance.store", "appliance.rules", "appliance.errors"),
    # Question packages: readers and the library; the service composes them with the battle store.
    "appliance/packages": ("appliance.packages", "appliance.errors", "appliance.config"),
    "appliance/service": ("appliance.service", "appliance.store", "appliance.packages", "appliance.rules",
                          "appliance.errors", "appliance.config", "appliance.words", "appliance.capture_wire"),
    # The capture socket's wire format: both ends import it, it imports only the error tree.
    "appliance/capture_wire.py": ("appliance.errors",),
    "appliance/__init__.py": (),
    "appliance/errors.py": (),
    "appliance/words.py": ("appliance.errors",),
    # The catalogues' editor behind ./dev words (docs/words.md): reads and writes the .po files; it imports the
    # module named on its command line to fold that module's old dict of words.
    "appliance/wordbook.py": (),
    "appliance/config.py": ("appliance.errors",),
    "gpio": ("gpio", "appliance.errors", "appliance.config", "appliance.capture_wire"),
    "web": ("web", "appliance.service", "appliance.errors", "appliance.config", "appliance.words"),
    # The outermost layer composes the others; nothing but the tests imports it.
    "svoyak": ("svoyak", "web", "gpio", "appliance"),
    # The benchmarks drive every layer and share helpers with the tests through tests.support only.
    "bench": ("bench", "svoyak", "web", "gpio", "appliance", "tests.support"),
    "tests": PROJECT,
}
# A folder may import these through the ones it lists (a prefix it may use but need not).
UNUSED_ALLOWANCE_OK = {"tests": PROJECT, "svoyak": ("svoyak",), "bench": ("svoyak",),
                       "appliance/errors.py": (), "appliance/wordbook.py": (), "appliance/__init__.py": ()}

# Imports made by a string, file by file: every one is listed here (and checked like an import statement).
STRING_IMPORTS = {
    "appliance/rules/tournament/simulate.py": {"appliance.rules.tournament.battle_driver"},
    "svoyak/cli.py": {"svoyak.commands.capture", "svoyak.commands.config", "svoyak.commands.firstboot",
                      "svoyak.commands.hwcheck", "svoyak.commands.nats", "svoyak.commands.pin",
                      "svoyak.commands.protocol", "svoyak.commands.replay", "svoyak.commands.rooms",
                      "svoyak.commands.run", "svoyak.commands.serve", "svoyak.commands.spectators",
                      "svoyak.commands.tournament"},
    "svoyak/commands/rooms.py": {"svoyak.cli"},
    "svoyak/commands/serve.py": {"svoyak.cli"},  # not imported: the holder's command line is shortened by it
    "svoyak/commands/run.py": {"svoyak.cli"},
}


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(node: ast.ImportFrom, path: Path) -> str:
    """The module an ``ImportFrom`` names, a relative one resolved against ``path``'s package."""
    if not node.level:
        return node.module or ""
    package = module_of(path) if path.name == "__init__.py" else module_of(path).rpartition(".")[0]
    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def project_imports(path: Path) -> list[str]:
    """Every module ``path`` imports by statement, anywhere in it; relative imports resolved."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node, path)
            names += [f"{module}.{alias.name}" if (ROOT / f"{module}.{alias.name}".replace(".", "/")).is_dir()
                      or (ROOT / (f"{module}.{alias.name}".replace(".", "/") + ".py")).is_file() else module
                      for alias in node.names]
    return names


def is_module(name: str) -> bool:
    relative = name.replace(".", "/")
    return name.split(".")[0] in PROJECT and ((ROOT / (relative + ".py")).is_file()
                                                or (ROOT / relative / "__init__.py").is_file())


def string_imports(path: Path) -> set[str]:
    """The project modules ``path`` names in a string: a module's dotted name (``import_module``, ``-m``), or an
    import statement in code it hands to a child (``python -c``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        text = node.value
        if "." in text and is_module(text):
            found.add(text)
        elif "import " in text and "\n" in text:
            try:
                code = ast.parse(text)
            except SyntaxError:
                continue
            for inner in ast.walk(code):
                if isinstance(inner, ast.Import):
                    found.update(alias.name for alias in inner.names if is_module(alias.name))
                elif isinstance(inner, ast.ImportFrom) and inner.module and is_module(inner.module):
                    found.add(inner.module)
    return found


def files_under(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def project_files() -> list[Path]:
    return [path for top in PROJECT for path in files_under(top) if ".venv" not in path.parts]


def rule_of(path: Path) -> str | None:
    """The most specific key of :data:`ALLOWED` that holds ``path``."""
    relative = path.relative_to(ROOT).as_posix()
    keys = [key for key in ALLOWED if relative == key or relative.startswith(key + "/")]
    return max(keys, key=len) if keys else None


def allowed(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_every_project_file_has_a_rule():
    assert [path.relative_to(ROOT).as_posix() for path in project_files() if rule_of(path) is None] == []


@pytest.mark.parametrize("rule", sorted(ALLOWED))
def test_imports_point_inward(rule):
    offenders = []
    for path in project_files():
        if rule_of(path) != rule:
            continue
        listed = STRING_IMPORTS.get(path.relative_to(ROOT).as_posix(), set())
        for name in [*project_imports(path), *listed]:
            if name.split(".")[0] in PROJECT and not allowed(name, ALLOWED[rule]):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_every_import_by_a_string_is_listed():
    found = {}
    for path in project_files():
        if path.relative_to(ROOT).parts[0] in ("tests", "bench"):
            continue  # they may import anything; their children run the same rules' code
        names = string_imports(path)
        if names:
            found[path.relative_to(ROOT).as_posix()] = names
    assert found == STRING_IMPORTS


def test_no_allowance_goes_unused():
    """A rule allows only what its files import: an allowance nobody uses is a door left open."""
    unused = []
    for rule, prefixes in ALLOWED.items():
        used = [name for path in project_files() if rule_of(path) == rule
                for name in [*project_imports(path), *STRING_IMPORTS.get(path.relative_to(ROOT).as_posix(), ())]]
        for prefix in prefixes:
            if prefix not in UNUSED_ALLOWANCE_OK.get(rule, ()) and not any(allowed(name, (prefix,)) for name in used):
                unused.append(f"{rule} may import {prefix} but never does")
    assert unused == []


def test_nothing_imports_the_command_but_the_tests():
    offenders = [f"{path.relative_to(ROOT)} imports {name}" for path in project_files()
                 if path.relative_to(ROOT).parts[0] not in ("svoyak", "tests")
                 for name in project_imports(path) if name.split(".")[0] == "svoyak"]
    assert offenders == []


def test_the_cycle_finder_and_the_layout_see_relative_imports(tmp_path):
    path = ROOT / "appliance" / "rules" / "battle" / "engine.py"
    node = ast.parse("from ..tournament import formats\nfrom . import state\n").body
    assert absolute(node[0], path) == "appliance.rules.tournament"
    assert absolute(node[1], path) == "appliance.rules.battle"


def test_the_string_finder_finds_a_module_name_and_code_for_a_child(tmp_path):
    (tmp_path / "x.py").write_text('CHILD = "import json\\nfrom web.fault import create_fault_app\\n"\n'
                                   'name = "svoyak.commands.run"\nother = "not.a.module"\n')
    assert string_imports(tmp_path / "x.py") == {"web.fault", "svoyak.commands.run"}


def test_only_the_store_speaks_to_the_database_driver():
    """The store wraps every ``sqlite3`` error (``StoreDriverError``): the service, the web and the command catch
    the project's errors, never the driver's."""
    offenders = [f"{path.relative_to(ROOT)} imports sqlite3" for top in ("appliance", "web", "gpio", "svoyak")
                 for path in files_under(top) if not path.relative_to(ROOT).as_posix().startswith("appliance/store/")
                 and "sqlite3" in project_imports(path)]
    # Landed with the standby desk (issue 22) beside this rule: its copy of the store goes through the store next.
    assert offenders == ["appliance/service/rooms/standby.py imports sqlite3"]


def test_every_error_class_hangs_from_the_tree():
    """Every exception class the project defines descends from ``SvoyakError`` (or is the web edge's HTTP
    refusal, which Werkzeug answers), as gpiozero's ``exc.py`` keeps one tree."""
    import importlib

    from appliance.errors import SvoyakError

    outside = []
    for top in ("appliance", "gpio", "web", "svoyak"):
        for path in files_under(top):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and any(
                        getattr(base, "id", getattr(base, "attr", "")).endswith(("Error", "Exception", "Rejected"))
                        or getattr(base, "id", "") in ("TypeError", "ValueError", "LookupError", "RuntimeError")
                        for base in node.bases):
                    cls = getattr(importlib.import_module(module_of(path)), node.name, None)
                    if isinstance(cls, type) and issubclass(cls, BaseException) and not issubclass(cls, SvoyakError):
                        outside.append(f"{module_of(path)}.{node.name}")
    assert outside == ["web.edge.EdgeRefusal"]


def test_rules_engine_is_pure():
    """No clock, randomness, I/O, threads or logging in the engine (style.md); time and seeds come in, and so do
    the profiles and presets (the service reads their files)."""
    forbidden = {"time", "datetime", "random", "threading", "logging", "socket", "sqlite3", "os", "subprocess",
                 "asyncio", "secrets", "pathlib", "io", "shutil", "tempfile", "glob"}
    stdlib_ok = {"dataclasses", "enum", "typing", "collections", "itertools", "functools", "math", "fractions",
                 "tomllib", "json", "__future__", "abc", "types", "importlib", "bisect", "operator",
                 "hashlib", "statistics", "re", "string", "copy", "heapq"}
    offenders = []
    for path in files_under("appliance/rules"):
        for name in project_imports(path):
            top = name.split(".")[0]
            if top in forbidden or name.startswith("importlib.resources") or (top not in stdlib_ok
                                                                              and top != "appliance"):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_the_rules_read_no_file():
    """No ``open``, no ``read_text``/``read_bytes``, no ``tomllib.load`` of a file, no ``importlib.resources`` in
    the rules: what they need is read by the service and handed in."""
    calls = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "load", "files", "iterdir", "glob"}
    offenders = []
    for path in files_under("appliance/rules"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in calls:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {name}")
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

