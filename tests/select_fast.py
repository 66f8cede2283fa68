"""Which tests ``bash tests/run.sh --fast`` runs: prints pytest arguments, one per line.

The fast loop runs every test that is not marked ``slow`` (structure, status, the claims
contract, unit and property tests, kernels under the Triton interpreter, the dashboards'
non-browser tests) and, of the ``slow`` ones (the quick-scale claim trainings, the seed
parametrisations, the mutations that retrain), only those of the papers the working tree
changes:

- a paper is changed when one of its files is: ``lib/<slug>/``, ``lib/<slug>.py``,
  ``lib/data/<slug>_*``, ``dashboards/<slug>.py``, ``notebooks/<slug>.ipynb``,
  ``tests/test_<slug>.py``, ``tests/dashboards/test_<slug>_app.py``, ``benchmarks/<slug>/``
  (and a ``benchmarks/<slug>_*`` left at the top);
  all its slow tests run (``tests/test_<slug>.py``, ``tests/test_all_claims.py[<slug>-*]``);
- a shared file (top-level ``lib/*.py``, another ``lib/`` folder or data file, ``kernels/``,
  ``dashboards/app/``, ``dashboards/__init__.py``, ``tests/conftest.py``, ``pyproject.toml``)
  changes the papers that can import it, and of those only the slow tests parametrised on
  seed 0 run (each paper's quick claims at seed 0). "Can import" is read from the source
  (:func:`import_closure`: every ``import`` statement of the package's modules, in functions
  too, followed transitively from the paper's modules, its tests and the shared claim tests),
  so a change to the status table or the report runs no training while one to
  ``lib/claims.py`` or ``lib/numerics.py`` (imported by every paper) runs all nineteen;
  a shared file that is not a module (``pyproject.toml``, a data file) reaches every paper;
- anything else (README, other tests, other benchmarks) selects no slow test.

"Changed" means against ``origin/main`` when it exists, else ``HEAD~1``, uncommitted and
untracked files included. ``FAST_PAPERS="slug ..."`` (or ``all``) overrides the detection.

A slow test belongs to a paper by its module (``tests/test_<slug>.py``,
``tests/dashboards/test_<slug>_app.py``) or by a ``slug`` / ``paper`` parameter
(``tests/test_all_claims.py``); its seed is its ``seed`` parameter. The helper collects the
suite once in this process (pytest's own marker semantics, ~10 s) and prints ``--deselect``
for every slow test not wanted, checking that no deselected id is a prefix of a kept one
(pytest deselects by prefix).

    python tests/select_fast.py [--explain]      # arguments on stdout, the why on stderr
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
#: what the fast loop collects (the browser tests never run in it)
COLLECT = ["tests", "--ignore=tests/ui"]
#: files whose change touches every paper
SHARED_FILES = {"tests/conftest.py", "pyproject.toml", "dashboards/__init__.py"}
SHARED_DIRS = ("kernels/", "dashboards/app/")
#: the package's import names and the folders they live in (pyproject.toml's package-dir)
PACKAGE_DIRS = {"icml26.kernels": "kernels", "icml26.dashboards": "dashboards", "icml26": "lib"}
#: test modules every paper's slow tests run in besides its own (parametrised by paper)
SHARED_CLAIM_TESTS = ("tests/test_all_claims.py", "tests/test_claim_values.py",
                      "tests/conftest.py")


@dataclass(frozen=True)
class Change:
    """What a set of changed files means for the claims: the papers changed directly, and
    whether a shared file changed (then every paper at seed 0)."""

    papers: frozenset[str] = frozenset()
    shared: tuple[str, ...] = ()  # the shared files that changed (empty: none)
    why: dict[str, list[str]] = field(default_factory=dict, compare=False)
    #: the papers the shared files reach (their seed-0 tests run); None: every paper
    reach: frozenset[str] | None = None


def _prefixed(name: str, slugs) -> str | None:
    """The longest slug ``s`` with ``name == s + ext`` or ``name`` starting ``s + "_"``."""
    hits = [s for s in slugs if name.startswith(s + "_") or name.split(".", 1)[0] == s]
    return max(hits, key=len) if hits else None


def paper_of(path: str, slugs) -> str | None:
    """The paper a repository file belongs to, or None (a shared or unrelated file)."""
    parts = PurePosixPath(path).parts
    if len(parts) < 2:
        return None
    top, name = parts[0], parts[-1]
    if top == "lib":
        if len(parts) >= 3 and parts[1] == "data":
            return _prefixed(name, slugs) if len(parts) == 3 else None
        if len(parts) >= 3:
            return parts[1] if parts[1] in slugs else None
        return name[:-3] if name.endswith(".py") and name[:-3] in slugs else None
    if top == "dashboards" and len(parts) == 2 and name.endswith(".py"):
        return name[:-3] if name[:-3] in slugs else None
    if top == "notebooks" and len(parts) == 2 and name.endswith(".ipynb"):
        return name[:-6] if name[:-6] in slugs else None
    if top == "benchmarks":
        if len(parts) == 2:
            return _prefixed(name, slugs)
        return parts[1] if parts[1] in slugs else None
    if top == "tests" and name.startswith("test_") and name.endswith(".py"):
        stem = name[5:-3]
        if len(parts) == 2:
            return stem if stem in slugs else None
        if parts[1:-1] == ("dashboards",) and stem.endswith("_app"):
            return stem[:-4] if stem[:-4] in slugs else None
    return None


def is_shared(path: str, slugs) -> bool:
    """A file every paper depends on (see the module docstring)."""
    if path in SHARED_FILES or path.startswith(SHARED_DIRS):
        return True
    return path.startswith("lib/") and paper_of(path, slugs) is None


def classify(files, slugs, deps: dict[str, set[str]] | None = None) -> Change:
    """The papers ``files`` change; with ``deps`` (paper -> the repository files its slow
    tests can import, :func:`paper_dependencies`) a shared module reaches only the papers
    that import it, without (or for a shared file that is no module) every paper."""
    papers: dict[str, list[str]] = {}
    shared = []
    for f in sorted(set(files)):
        slug = paper_of(f, slugs)
        if slug is not None:
            papers.setdefault(slug, []).append(f)
        elif is_shared(f, slugs):
            shared.append(f)
    reach = None
    if deps is not None and all(f.endswith(".py") for f in shared):
        reach = frozenset(s for s in slugs if any(f in deps.get(s, ()) for f in shared))
    return Change(frozenset(papers), tuple(shared), papers, reach)


# ---------------------------------------------------------------------- the import graph
def module_file(name: str, root: Path = ROOT) -> str | None:
    """The repository file of module ``name`` (``icml26.claims`` -> ``lib/claims.py``), or
    None for a module outside the package."""
    for package, folder in PACKAGE_DIRS.items():  # longest package first
        if name == package or name.startswith(package + "."):
            rest = name[len(package):].lstrip(".").replace(".", "/")
            base = f"{folder}/{rest}" if rest else folder
            for candidate in (f"{base}.py", f"{base}/__init__.py"):
                if (root / candidate).is_file():
                    return candidate
            return None
    return None


def imported_modules(path: str, root: Path = ROOT) -> set[str]:
    """Every package module ``path`` imports anywhere (functions included), with the
    packages whose ``__init__`` each import runs."""
    tree = ast.parse((root / path).read_text(), path)
    own = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    for package, folder in PACKAGE_DIRS.items():
        if own == folder or own.startswith(folder + "."):
            own = package + own[len(folder):]
            break
    is_package = path.endswith("__init__.py")
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, up level - 1 more
                parts = own.split(".")[:len(own.split(".")) - node.level + is_package]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    found = set()
    for name in names:
        parts = name.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {n for n in found if n.startswith("icml26")}


def import_closure(starts, root: Path = ROOT) -> set[str]:
    """The repository files that importing ``starts`` (paths) can execute."""
    seen: set[str] = set()
    todo = [s for s in starts if (root / s).is_file()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.endswith(".py"):
            todo += [f for m in imported_modules(path, root)
                     if (f := module_file(m, root)) and f not in seen]
    return seen


def paper_dependencies(slugs, root: Path = ROOT) -> dict[str, set[str]]:
    """Paper -> the files its slow tests can import: from its own modules, its test module
    and the shared claim tests (:data:`SHARED_CLAIM_TESTS`); the slow tests live there, so
    an app a test module does not import is no dependency of them."""
    deps = {}
    for slug in slugs:
        own = [str(p.relative_to(root)) for p in sorted((root / "lib" / slug).rglob("*.py"))]
        own += [f"lib/{slug}.py", f"tests/test_{slug}.py", *SHARED_CLAIM_TESTS]
        deps[slug] = import_closure(own, root)
    return deps


def choose_base(has_origin_main: bool, has_parent: bool) -> str | None:
    """``origin/main`` if it exists, else ``HEAD~1``, else None (a lone commit)."""
    return "origin/main" if has_origin_main else "HEAD~1" if has_parent else None


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def changed_files() -> tuple[str | None, list[str]]:
    """``(base, files)``: files that differ from the base in the working tree (committed or
    not, renames as both names) plus untracked ones; ``(None, [])`` without a base."""
    base = choose_base(_git("rev-parse", "--verify", "-q", "origin/main").returncode == 0,
                       _git("rev-parse", "--verify", "-q", "HEAD~1").returncode == 0)
    if base is None:
        return None, []
    diff = _git("diff", "--name-only", "--no-renames", base)
    if diff.returncode:
        raise RuntimeError(f"git diff {base}: {diff.stderr.strip()}")
    untracked = _git("ls-files", "--others", "--exclude-standard").stdout
    return base, [f for f in (diff.stdout + untracked).splitlines() if f]


@dataclass(frozen=True)
class Item:
    """What the selection needs of a collected test."""

    nodeid: str
    slow: bool
    params: dict = field(default_factory=dict, hash=False)


def item_paper(item: Item, slugs) -> str | None:
    for key in ("slug", "paper"):
        if item.params.get(key) in slugs:
            return item.params[key]
    return paper_of(item.nodeid.split("::", 1)[0], slugs)


def wanted(item: Item, change: Change, slugs) -> bool:
    """Whether the fast loop runs ``item``."""
    if not item.slow:
        return True
    paper = item_paper(item, slugs)
    if paper is None:
        return False
    reached = bool(change.shared) and (change.reach is None or paper in change.reach)
    return paper in change.papers or (reached and item.params.get("seed") == 0)


def deselections(items: list[Item], change: Change, slugs) -> list[str]:
    """Node ids to pass as ``--deselect``; ValueError if one would also drop a kept test
    (pytest deselects every id that starts with the given one)."""
    drop = [i.nodeid for i in items if not wanted(i, change, slugs)]
    kept = sorted(i.nodeid for i in items if wanted(i, change, slugs))
    for d in drop:
        clash = [k for k in kept if k.startswith(d)]
        if clash:
            raise ValueError(f"--deselect {d} would also deselect {clash[0]}")
    return drop


class _Recorder:
    def __init__(self):
        self.items: list[Item] = []

    def pytest_collection_finish(self, session):
        for it in session.items:
            params = dict(getattr(getattr(it, "callspec", None), "params", {}) or {})
            self.items.append(Item(it.nodeid, it.get_closest_marker("slow") is not None, params))


def collect() -> list[Item]:
    """Every test the fast loop could run, collected here as pytest collects it."""
    import pytest

    rec, out = _Recorder(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                            *COLLECT], plugins=[rec])
    if code != 0:
        sys.stderr.write(out.getvalue()[-5000:])
        raise RuntimeError(f"collecting the tests failed (pytest exit {code})")
    return rec.items


def _override(text: str, slugs) -> Change:
    names = text.replace(",", " ").split()
    if names == ["all"]:
        return Change(frozenset(), ("FAST_PAPERS=all",))
    unknown = sorted(set(names) - set(slugs))
    if unknown:
        raise ValueError(f"FAST_PAPERS: unknown papers {unknown} (known: {sorted(slugs)})")
    return Change(frozenset(names), (), {n: ["FAST_PAPERS"] for n in names})


def main(argv: list[str] | None = None) -> int:
    os.chdir(ROOT)
    from icml26 import papers

    slugs = {p.slug for p in papers.PAPERS}
    if os.environ.get("FAST_PAPERS", "").strip():
        change, where = _override(os.environ["FAST_PAPERS"], slugs), "FAST_PAPERS"
    else:
        base, files = changed_files()
        change = (classify(files, slugs, paper_dependencies(slugs)) if base
                  else Change(frozenset(), ("no base commit",)))
        where = f"changes against {base}" if base else "no origin/main or HEAD~1"
    items = collect()
    drop = deselections(items, change, slugs)
    slow = [i for i in items if i.slow]
    say = sys.stderr.write
    say(f"fast: {where}: papers changed: {', '.join(sorted(change.papers)) or 'none'}\n")
    if change.shared:
        whom = ("every paper's seed-0 claims" if change.reach is None else
                f"the seed-0 claims of the {len(change.reach)} papers that import them"
                f" ({', '.join(sorted(change.reach)) or 'none'})")
        say(f"fast: shared files changed ({', '.join(change.shared[:5])}"
            f"{' ...' if len(change.shared) > 5 else ''}): {whom}\n")
    say(f"fast: {len(items) - len(drop)} of {len(items)} tests; slow ones kept: "
        f"{len(slow) - len(drop)} of {len(slow)}\n")
    if "--explain" in (argv or []):
        for slug, fs in sorted(change.why.items()):
            say(f"  {slug}: {' '.join(fs[:6])}\n")
    for d in drop:
        print(f"--deselect={d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
