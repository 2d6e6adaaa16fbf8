"""The tournament engine's modules import one way only: records, then queries, then transitions (no circle, not
even through an import inside a function), and each concern has its module."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[4] / "appliance" / "rules" / "tournament"
PREFIX = "appliance.rules.tournament."


def imports_of(path: Path) -> set[str]:
    """Sibling modules ``path`` imports anywhere (top level or inside a function)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(PREFIX):
                names.add(node.module[len(PREFIX):].split(".")[0])
            elif node.module == PREFIX[:-1]:
                names.update(alias.name for alias in node.names if (PACKAGE / f"{alias.name}.py").exists())
        elif isinstance(node, ast.Import):
            names.update(a.name[len(PREFIX):].split(".")[0] for a in node.names if a.name.startswith(PREFIX))
    return names


def test_no_module_of_the_tournament_engine_imports_another_in_a_circle():
    graph = {path.stem: imports_of(path) for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    circles = []

    def visit(module: str, trail: tuple[str, ...]) -> None:
        for imported in sorted(graph.get(module, ())):
            if imported in trail:
                circles.append(trail[trail.index(imported):] + (imported,))
            elif imported in graph:
                visit(imported, trail + (imported,))

    for module in sorted(graph):
        visit(module, (module,))
    assert circles == []


def test_records_import_no_queries_and_queries_no_transitions():
    queries = {"entry", "seats", "outcomes", "draw_plan", "progress"}
    assert imports_of(PACKAGE / "state.py") & (queries | {"transitions"}) == set()
    for module in queries:
        assert "transitions" not in imports_of(PACKAGE / f"{module}.py"), module
    assert not (PACKAGE / "engine.py").exists()  # the five concerns of the old engine.py have their modules
