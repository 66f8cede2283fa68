"""The fast loop's selection (tests/select_fast.py, issue 45) on made-up file lists and tests:
which papers a change touches, which slow tests then run, and the ``--deselect`` safety."""

from __future__ import annotations

import pytest
from select_fast import (
    Change,
    Item,
    choose_base,
    classify,
    deselections,
    import_closure,
    imported_modules,
    is_shared,
    module_file,
    paper_dependencies,
    paper_of,
    wanted,
)

SLUGS = {"recruitment", "red", "panda", "function_vectors", "grids", "gsrq"}


@pytest.mark.parametrize("path, slug", [
    ("lib/recruitment/dp.py", "recruitment"),
    ("lib/red.py", "red"),
    ("lib/data/function_vectors_seed0.pt", "function_vectors"),
    ("lib/data/red_teacher.pt", "red"),
    ("dashboards/panda.py", "panda"),
    ("notebooks/grids.ipynb", "grids"),
    ("tests/test_gsrq.py", "gsrq"),
    ("tests/dashboards/test_red_app.py", "red"),
    ("benchmarks/red/red_outliers.csv", "red"),
    ("benchmarks/recruitment/recruitment_dp.py", "recruitment"),
    ("benchmarks/function_vectors/function_vectors_seeds.csv", "function_vectors"),
    ("benchmarks/gsrq/notes/anything.txt", "gsrq"),
    ("benchmarks/red_left_at_the_top.csv", "red"),
])
def test_a_papers_own_file_names_the_paper(path, slug):
    assert paper_of(path, SLUGS) == slug
    assert not is_shared(path, SLUGS)


@pytest.mark.parametrize("path", ["lib/claims.py", "lib/tinylm.py", "lib/__init__.py",
                                  "lib/data/shared_corpus.txt", "lib/newpkg/x.py",
                                  "kernels/soft_bellman.py", "kernels/bench/bench_pgf.py",
                                  "dashboards/app/report.py", "dashboards/__init__.py",
                                  "tests/conftest.py", "pyproject.toml"])
def test_a_shared_file_changes_every_paper(path):
    assert paper_of(path, SLUGS) is None and is_shared(path, SLUGS)


@pytest.mark.parametrize("path", ["README.md", "tests/test_status.py", "tests/ui/test_report.py",
                                  "tests/kernels/test_pgf.py", "benchmarks/claim_values.csv",
                                  "benchmarks/seed_record.py", "benchmarks/gpu/README.md",
                                  "benchmarks/ui/contact_sheet.py", "benchmarks/redder/x.csv",
                                  "tests/dashboards/test_explorers.py", ".ci/run",
                                  "notebooks/README.md", "dashboards/unknown.py",
                                  "tests/test_redder.py"])
def test_other_files_change_no_paper(path):
    assert paper_of(path, SLUGS) is None and not is_shared(path, SLUGS)


def test_classify_collects_papers_and_shared_files():
    got = classify(["lib/red/model.py", "notebooks/red.ipynb", "tests/test_panda.py",
                    "README.md"], SLUGS)
    assert got.papers == {"red", "panda"} and got.shared == ()
    assert got.why["red"] == ["lib/red/model.py", "notebooks/red.ipynb"]
    got = classify(["kernels/pgf.py", "lib/red/model.py"], SLUGS)
    assert got.papers == {"red"} and got.shared == ("kernels/pgf.py",)
    assert classify([], SLUGS) == Change()


def test_base_is_origin_main_else_the_parent_commit():
    assert choose_base(True, True) == "origin/main"
    assert choose_base(False, True) == "HEAD~1"
    assert choose_base(False, False) is None


ITEMS = [
    Item("tests/test_red.py::test_shapes", slow=False),
    Item("tests/test_red.py::test_mutation_retrains", slow=True),
    Item("tests/test_red.py::test_expected_claims_hold[0]", slow=True, params={"seed": 0}),
    Item("tests/test_red.py::test_expected_claims_hold[1]", slow=True, params={"seed": 1}),
    Item("tests/test_panda.py::test_expected_claims_hold[0]", slow=True, params={"seed": 0}),
    Item("tests/test_panda.py::test_mutation_frozen_penalty", slow=True),
    Item("tests/test_all_claims.py::test_expected_claims_hold[red-seed0]", slow=True,
         params={"slug": "red", "seed": 0}),
    Item("tests/test_all_claims.py::test_expected_claims_hold[red-seed1]", slow=True,
         params={"slug": "red", "seed": 1}),
    Item("tests/test_all_claims.py::test_expected_claims_hold[panda-seed0]", slow=True,
         params={"slug": "panda", "seed": 0}),
    Item("tests/test_all_claims.py::test_expected_claims_hold[panda-seed1]", slow=True,
         params={"slug": "panda", "seed": 1}),
    Item("tests/test_notebook_outputs.py::test_nbval_scratch_copy", slow=True),
    Item("tests/dashboards/test_explorers.py::test_a_slow_app[panda]", slow=False,
         params={"slug": "panda"}),
]


def _kept(change: Change) -> set[str]:
    """The slow tests kept, as ``module:test`` (``all`` for test_all_claims)."""
    return {i.nodeid.removeprefix("tests/test_").replace(".py::", ":").replace(
        "all_claims:test_expected_claims_hold", "all") for i in ITEMS
        if i.slow and wanted(i, change, SLUGS)}


def test_nothing_changed_runs_no_slow_test():
    assert _kept(Change()) == set()
    assert all(wanted(i, Change(), SLUGS) for i in ITEMS if not i.slow)


def test_a_changed_paper_runs_all_its_slow_tests_and_both_claim_seeds():
    assert _kept(Change(frozenset({"red"}))) == {
        "red:test_mutation_retrains", "red:test_expected_claims_hold[0]",
        "red:test_expected_claims_hold[1]", "all[red-seed0]", "all[red-seed1]"}


def test_a_shared_change_runs_every_paper_at_seed_0_only():
    assert _kept(Change(shared=("lib/claims.py",))) == {
        "red:test_expected_claims_hold[0]", "panda:test_expected_claims_hold[0]",
        "all[red-seed0]", "all[panda-seed0]"}
    both = _kept(Change(frozenset({"red"}), ("lib/claims.py",)))
    assert {"red:test_mutation_retrains", "all[red-seed1]", "all[panda-seed0]"} <= both
    assert not {"panda:test_mutation_frozen_penalty", "all[panda-seed1]"} & both


def test_a_slow_test_of_no_paper_never_runs_in_the_fast_loop():
    everything = Change(frozenset(SLUGS), ("pyproject.toml",))
    assert not wanted(ITEMS[-2], everything, SLUGS)


def test_deselect_ids_never_cut_a_kept_test():
    drop = deselections(ITEMS, Change(frozenset({"red"})), SLUGS)
    assert "tests/test_panda.py::test_mutation_frozen_penalty" in drop
    assert not any(i.startswith("tests/test_red.py") for i in drop)
    clash = [Item("tests/test_x.py::test_run", slow=True),
             Item("tests/test_x.py::test_run_fast", slow=False)]
    with pytest.raises(ValueError, match="would also deselect"):
        deselections(clash, Change(), SLUGS)


# ---------------------------------------------------------------------- the import graph
@pytest.fixture
def tiny_repo(tmp_path):
    """A package laid out as the suite's: lib/ is icml26, kernels/ icml26.kernels."""
    files = {
        "lib/__init__.py": "from icml26 import numerics\n",
        "lib/numerics.py": "",
        "lib/claims.py": "import math\n",
        "lib/status_table.py": "from icml26 import claims\n",
        "lib/tinylm.py": "",
        "lib/red/__init__.py": "from .model import train\n",
        "lib/red/model.py": ("from icml26.claims import ClaimSpec\n"
                             "def train():\n    from icml26 import tinylm\n"),
        "lib/panda/__init__.py": "from . import game\n",
        "lib/panda/game.py": "from ..kernels import pgf\n",
        "kernels/__init__.py": "", "kernels/pgf.py": "",
        "tests/test_red.py": "from icml26 import red\n",
        "tests/test_panda.py": "import icml26.panda\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def test_module_names_map_to_the_package_folders(tiny_repo):
    assert module_file("icml26", tiny_repo) == "lib/__init__.py"
    assert module_file("icml26.red", tiny_repo) == "lib/red/__init__.py"
    assert module_file("icml26.red.model", tiny_repo) == "lib/red/model.py"
    assert module_file("icml26.kernels.pgf", tiny_repo) == "kernels/pgf.py"
    assert module_file("icml26.ClaimSpec", tiny_repo) is None
    assert module_file("numpy", tiny_repo) is None


def test_imports_inside_functions_and_relative_ones_count(tiny_repo):
    assert {"icml26.claims", "icml26.tinylm", "icml26"} <= imported_modules(
        "lib/red/model.py", tiny_repo)
    assert "icml26.red.model" in imported_modules("lib/red/__init__.py", tiny_repo)
    assert "icml26.kernels.pgf" in imported_modules("lib/panda/game.py", tiny_repo)


def test_a_shared_module_reaches_only_the_papers_that_import_it(tiny_repo):
    slugs = {"red", "panda"}
    deps = paper_dependencies(slugs, tiny_repo)
    assert "lib/tinylm.py" in deps["red"] and "lib/tinylm.py" not in deps["panda"]
    assert "kernels/pgf.py" in deps["panda"] and "kernels/pgf.py" not in deps["red"]
    assert "lib/status_table.py" not in import_closure(["tests/test_red.py"], tiny_repo)
    assert classify(["lib/tinylm.py"], slugs, deps).reach == {"red"}
    assert classify(["lib/numerics.py"], slugs, deps).reach == {"red", "panda"}
    assert classify(["lib/status_table.py"], slugs, deps).reach == frozenset()
    assert classify(["pyproject.toml", "lib/tinylm.py"], slugs, deps).reach is None


def test_a_shared_change_that_reaches_no_paper_runs_no_slow_test():
    assert _kept(Change(shared=("lib/status_table.py",), reach=frozenset())) == set()
    assert _kept(Change(shared=("lib/tinylm.py",), reach=frozenset({"red"}))) == {
        "red:test_expected_claims_hold[0]", "all[red-seed0]"}
