"""A generated Python package built milestone by milestone, whose tests really run.

Milestone ``k`` adds module ``m{k:02d}.py`` with two functions: ``core{k}(xs)``, its own logic
on a list of ints (one of :data:`TEMPLATES`), and ``f{k}(xs)``, which composes it with the
functions of the milestones it depends on (so a bug upstream changes ``f{k}``)::

    from .m03 import f03
    def core07(xs):
        return sum(x * x for x in xs)
    def f07(xs):
        return (core07(xs) + 3 * f03(xs)) % 1000003

Its test module ``test_m07.py`` holds ``n_tests`` tests, one per input list: the first
``round(beta * n_tests)`` are integration tests (``f07(xs) == expected``), the others unit
tests (``core07(xs) == expected``); the expected values come from running the reference
package.  An implementation is the correct template (variant 0) or one of its seeded real bugs
(variants 1..3: a dropped element, a wrong operator, an off-by-one slice ...); every bug is
caught by the inputs (:func:`bugs_caught` checks it by running them).

Tests run in-process (:func:`run_in_process`: the package is imported from memory into a
private namespace, never registered in ``sys.modules``, each test function called, an
exception is a failure) or in a subprocess under pytest with a timeout
(:func:`run_with_pytest`); a test checks they agree.
"""

from __future__ import annotations

import builtins
import functools
import subprocess
import sys
import tempfile
import types
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MOD = 1_000_003
#: name, the correct body, three buggy bodies (each a real, common slip).
TEMPLATES: tuple[tuple[str, str, tuple[str, str, str]], ...] = (
    ("sum_squares", "sum(x * x for x in xs)",
     ("sum(x * x for x in xs[1:])", "sum(2 * x for x in xs)", "sum(x * abs(x) for x in xs)")),
    ("spread", "max(xs) - min(xs)",
     ("max(xs) - xs[0]", "max(xs) + min(xs)", "max(xs[:-1] or xs) - min(xs)")),
    ("count_even", "sum(1 for x in xs if x % 2 == 0)",
     ("sum(1 for x in xs if x % 2 == 1)", "sum(1 for x in xs[:-1] if x % 2 == 0)",
      "sum(1 for x in xs if x % 4 == 0)")),
    ("weighted", "sum(i * x for i, x in enumerate(xs))",
     ("sum(i * x for i, x in enumerate(xs, 1))", "sum(i + x for i, x in enumerate(xs))",
      "sum(i * x for i, x in enumerate(xs[::-1]))")),
    ("alternating", "sum(x if i % 2 == 0 else -x for i, x in enumerate(xs))",
     ("sum(-x if i % 2 == 0 else x for i, x in enumerate(xs))", "sum(xs[::2])",
      "sum(x if i % 2 == 0 else -x for i, x in enumerate(xs[1:]))")),
    ("mirror_dot", "sum(a * b for a, b in zip(xs, xs[::-1]))",
     ("sum(a * b for a, b in zip(xs, xs))", "sum(a + b for a, b in zip(xs, xs[::-1]))",
      "sum(a * b for a, b in zip(xs, xs[-2::-1]))")),
    ("clipped", "sum(min(max(x, -3), 3) for x in xs)",
     ("sum(min(max(x, -3), 2) for x in xs)", "sum(min(x, 3) for x in xs)",
      "sum(max(x, -3) for x in xs)")),
    ("ends", "xs[-1] * 3 - xs[0]",
     ("xs[0] * 3 - xs[-1]", "xs[-1] * 3 + xs[0]", "xs[len(xs) // 2] * 3 - xs[0]")),
)
N_VARIANTS = 4  # 0 = correct, 1..3 = bugs
#: the test inputs (a test per input, cycled when n_tests > 4); they catch every bug above
INPUTS = ([3, -1, 4, 1, -5, 9, 2, 6], [7, 7, 2, 8], [0, -2, 5], [6, -4], [-7, 1, 1, 10, 3])


@dataclass(frozen=True)
class PackageSpec:
    """The reference package: its milestones' templates, dependency coefficients and tests."""

    templates: tuple[int, ...]  # template index of each milestone
    parents: tuple[tuple[tuple[int, int], ...], ...]  # per milestone: (parent, coefficient)
    n_tests: int = 4
    beta: float = 1.0  # share of integration tests (errors upstream reach them)

    @property
    def n(self) -> int:
        return len(self.templates)

    def ancestors(self, k: int) -> tuple[int, ...]:
        """Every milestone ``k``'s code calls, directly or not (sorted)."""
        seen, todo = set(), [p for p, _ in self.parents[k]]
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo += [p for p, _ in self.parents[j]]
        return tuple(sorted(seen))

    def n_integration(self) -> int:
        return int(round(self.beta * self.n_tests))


def make_package(edges, n: int, rng: np.random.Generator, n_tests: int = 4,
                 beta: float = 1.0) -> PackageSpec:
    """A package over the DAG ``edges`` (``(parent, child)``, parents first)."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta!r}")
    if not 1 <= n_tests <= 16:
        raise ValueError(f"n_tests must be in [1, 16], got {n_tests!r}")
    templates = tuple(int(t) for t in rng.integers(0, len(TEMPLATES), n))
    parents = tuple(tuple((j, int(rng.integers(2, 8))) for j, c in sorted(edges) if c == k)
                    for k in range(n))
    return PackageSpec(templates, parents, n_tests, beta)


def module_source(spec: PackageSpec, k: int, variant: int = 0) -> str:
    """The source of milestone ``k``'s module with implementation ``variant``."""
    name, good, bugs = TEMPLATES[spec.templates[k]]
    body = good if variant == 0 else bugs[variant - 1]
    lines = [f'"""Milestone {k}: {name}."""', ""]
    lines += [f"from .m{j:02d} import f{j:02d}" for j, _ in spec.parents[k]]
    terms = "".join(f" + {c} * f{j:02d}(xs)" for j, c in spec.parents[k])
    lines += ["", "", f"def core{k:02d}(xs):", f"    return {body}", "", "",
              f"def f{k:02d}(xs):", f"    return (core{k:02d}(xs){terms}) % {MOD}", ""]
    return "\n".join(lines)


def case_inputs(spec: PackageSpec) -> list[list[int]]:
    return [INPUTS[i % len(INPUTS)] for i in range(spec.n_tests)]


def suite_source(spec: PackageSpec, k: int, expected: dict[str, list[int]]) -> str:
    """Milestone ``k``'s test module; ``expected`` holds the reference ``core``/``f`` values."""
    n_int = spec.n_integration()
    lines = [f'"""Tests of milestone {k} ({n_int} integration, '
             f'{spec.n_tests - n_int} unit)."""', "",
             f"from .m{k:02d} import core{k:02d}, f{k:02d}", ""]
    for i, xs in enumerate(case_inputs(spec)):
        fn, kind = ("f", "integration") if i < n_int else ("core", "unit")
        lines += ["", f"def test_{kind}_{i}():",
                  f"    assert {fn}{k:02d}({xs!r}) == {expected[fn][i]}", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- running
class _PrivatePackage:
    """A generated package imported into a private namespace (an in-memory checkout).

    Its modules are plain module objects held here: nothing is registered in the
    process-wide ``sys.modules`` and no finder is added to ``sys.meta_path``, so a package
    imported on a worker thread never changes what another thread (a server snapshotting
    ``sys.modules`` for each page load) sees. A relative import in its code (``from .m03
    import f03``) goes to :meth:`import_` through the modules' own ``__builtins__``; an
    absolute one goes to the usual import system.
    """

    def __init__(self, package: str, sources: dict[str, str]):
        self.package, self.sources = package, sources
        self.modules: dict[str, types.ModuleType] = {}
        self.builtins = {**builtins.__dict__, "__import__": self.import_}

    def module(self, tail: str) -> types.ModuleType:
        """Module ``<package>.<tail>``, executed on first use (as the import system would)."""
        if tail in self.modules:
            return self.modules[tail]
        if tail not in self.sources:
            raise ModuleNotFoundError(f"No module named '{self.package}.{tail}'",
                                      name=f"{self.package}.{tail}")
        module = types.ModuleType(f"{self.package}.{tail}")
        module.__package__, module.__builtins__ = self.package, self.builtins
        self.modules[tail] = module  # before executing it, as sys.modules would be
        try:
            exec(compiled(self.sources[tail]), module.__dict__)
        except BaseException:
            del self.modules[tail]
            raise
        return module

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        """``__import__`` of the package's modules: ``from .name import ...`` resolves here."""
        if level == 0:
            return builtins.__import__(name, globals, locals, fromlist, level)
        if level != 1 or "." in name:
            raise ImportError(f"only 'from .module import ...' works in {self.package}, "
                              f"got level {level}, {name!r}")
        if name:  # from .m03 import f03
            return self.module(name)
        package = types.ModuleType(self.package)  # from . import m03
        for tail in fromlist or ():
            setattr(package, tail, self.module(tail))
        return package


@functools.lru_cache(maxsize=8192)
def compiled(source: str):
    """The code object of a generated module (the same text compiles to the same code)."""
    return compile(source, "<evoclaw generated>", "exec")


def run_in_process(sources: dict[str, str], tests: list[str]) -> dict[str, dict[str, bool]]:
    """Import the test modules ``tests`` of the package ``sources`` (module name -> source)
    and call every ``test_*`` function: ``{module: {test: passed}}``.  An import error fails
    every test of that module.  Each call imports a fresh private copy of the package
    (:class:`_PrivatePackage`): no state is shared between calls or with other threads."""
    package = _PrivatePackage("_evoclaw_pkg", sources)
    out: dict[str, dict[str, bool]] = {}
    for name in tests:
        names = [line[4:line.index("(")] for line in sources[name].splitlines()
                 if line.startswith("def test_")]
        try:
            module = package.module(name)
        except Exception:  # noqa: BLE001 - a broken import fails its tests
            out[name] = dict.fromkeys(names, False)
            continue
        results = {}
        for t in names:
            try:
                getattr(module, t)()
                results[t] = True
            except Exception:  # noqa: BLE001 - an assertion or crash fails the test
                results[t] = False
        out[name] = results
    return out


def run_with_pytest(sources: dict[str, str], timeout: float = 60.0
                    ) -> dict[str, dict[str, bool]]:
    """The same, written to a temporary folder and run by pytest in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "evopkg"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        for name, src in sources.items():
            (pkg / f"{name}.py").write_text(src)
        report = Path(tmp) / "report.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--rootdir", tmp, f"--junitxml={report}", str(pkg)],
                       cwd=tmp, capture_output=True, timeout=timeout, check=False)
        out: dict[str, dict[str, bool]] = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            module = case.get("classname", "").rpartition(".")[2]
            failed = any(child.tag in ("failure", "error") for child in case)
            out.setdefault(module, {})[case.get("name")] = not failed
        return out


def reference_values(spec: PackageSpec) -> list[dict[str, list[int]]]:
    """Run the reference package on the test inputs: per milestone, ``core`` and ``f``."""
    sources = {f"m{k:02d}": module_source(spec, k) for k in range(spec.n)}
    calls = [f"    out.append({{'core': [core{k:02d}(xs) for xs in INPUTS], "
             f"'f': [f{k:02d}(xs) for xs in INPUTS]}})" for k in range(spec.n)]
    imports = [f"from .m{k:02d} import core{k:02d}, f{k:02d}" for k in range(spec.n)]
    sources["probe"] = "\n".join([*imports, f"INPUTS = {case_inputs(spec)!r}",
                                  "def test_values():", "    out = []", *calls,
                                  "    VALUES.extend(out)", "VALUES = []", ""])
    probe = _PrivatePackage("_evoclaw_ref", sources).module("probe")
    probe.test_values()
    return list(probe.VALUES)


def bugs_caught(n_tests: int = 4) -> dict[tuple[str, int], bool]:
    """For every template and bug: does some test input tell it from the correct body?"""
    out = {}
    inputs = [INPUTS[i % len(INPUTS)] for i in range(n_tests)]
    for name, good, bugs in TEMPLATES:
        ref = [eval(f"lambda xs: {good}")(xs) for xs in inputs]  # noqa: S307 - our templates
        for b, body in enumerate(bugs, 1):
            fn = eval(f"lambda xs: {body}")  # noqa: S307
            got = []
            for xs in inputs:
                try:
                    got.append(fn(xs))
                except Exception:  # noqa: BLE001 - a crash is caught by the test too
                    got.append(None)
            out[(name, b)] = got != ref
    return out
