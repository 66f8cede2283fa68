"""The package's shape, read from the code: no import cycle (function-local imports count),
imports only downward (dashboards -> lib -> kernels), no other module's private names, and
library modules small enough to read (CONVENTIONS §1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"icml26.dashboards": "dashboards", "icml26.kernels": "kernels", "icml26": "lib"}
MAX_LIB_LINES = 400
LAYER = {"icml26.dashboards": 2, "icml26": 1, "icml26.kernels": 0}


def module_files() -> dict[str, Path]:
    out = {}
    for pkg, folder in PACKAGES.items():
        for f in (ROOT / folder).rglob("*.py"):
            parts = [p for p in f.relative_to(ROOT / folder).with_suffix("").parts
                     if p != "__init__"]
            out[".".join([pkg, *parts])] = f
    return out


MODULES = module_files()


def imports_of(name: str, path: Path) -> list[tuple[str, str]]:
    """``(module, imported name)`` for every icml26 import anywhere in the file."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, "") for a in node.names if a.name.startswith("icml26")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = f"{pkg}.{base}" if base else pkg
            if base.startswith("icml26"):
                out += [(base, a.name) for a in node.names]
    return out


def resolve(target: str) -> str | None:
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        for base, name in imports_of(mod, path):
            for target in (f"{base}.{name}", base):
                r = resolve(target)
                # a package's own __init__ importing its children is not an edge back up
                if r and r != mod and not mod.startswith(r + "."):
                    graph[mod].add(r)
                    break
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def layer(mod: str) -> int:
    return next(v for k, v in sorted(LAYER.items(), key=lambda kv: -len(kv[0]))
                if mod == k or mod.startswith(k + "."))


def test_no_import_cycle():
    assert find_cycle(import_graph(MODULES)) is None


def test_the_cycle_finder_finds_a_function_local_cycle(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from icml26.b import f\n")
    b.write_text("def g():\n    from icml26.a import h\n")
    global MODULES
    saved, MODULES = MODULES, {"icml26.a": a, "icml26.b": b}
    try:
        assert find_cycle(import_graph(MODULES)) is not None
    finally:
        MODULES = saved


def test_imports_go_down_only():
    graph = import_graph(MODULES)
    upward = [(m, t) for m, targets in graph.items() for t in targets if layer(t) > layer(m)]
    assert upward == []


def test_no_module_imports_another_modules_private_names():
    bad = []
    for mod, path in MODULES.items():
        for base, name in imports_of(mod, path):
            if name.startswith("_") and not name.startswith("__") and resolve(base) != mod:
                bad.append(f"{mod} imports {base}.{name}")
    assert bad == []


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if layer(m) == 1))
def test_library_modules_stay_readable(mod):
    lines = len(MODULES[mod].read_text().splitlines())
    assert lines <= MAX_LIB_LINES, f"{mod}: {lines} lines (split it by idea)"


def test_every_package_is_installed_by_pyproject():
    """A non-editable install ships exactly the packages pyproject lists: each one folder."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {m for m, f in MODULES.items() if f.name == "__init__.py"}
    assert found == listed
