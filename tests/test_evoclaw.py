"""Tests for icml26.evoclaw: commit logs, reconstruction, the generated package and its
really-run tests, isolated vs continuous grading, claims and their mutations, the explorer."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import evoclaw
from icml26.evoclaw import (
    Agent,
    EvoConfig,
    HistoryConfig,
    ReconConfig,
    SuiteOracle,
    draw_trajectories,
    grade,
    make_history,
    make_package,
    module_source,
    random_dag,
    reconstruct,
    run_in_process,
    suite_source,
)


def rng(seed=0):
    return np.random.default_rng(seed)


def small_package(n=6, density=0.5, beta=1.0, seed=0):
    r = rng(seed)
    return make_package(random_dag(n, density, 3, r), n, r, beta=beta)


def sources(spec, state, oracle):
    out = {f"m{k:02d}": module_source(spec, k, state[k]) for k in range(spec.n)}
    out.update({f"test_m{k:02d}": oracle.tests[k] for k in range(spec.n)})
    return out


# --------------------------------------------------------------------------- commit logs
def test_history_is_reproducible_per_seed_and_labels_every_commit():
    cfg = HistoryConfig(n_milestones=6, noise=0.3)
    a, b, c = make_history(cfg, rng(1)), make_history(cfg, rng(1)), make_history(cfg, rng(2))
    assert a.commits == b.commits and a.commits != c.commits
    assert set(a.labels.tolist()) == set(range(6))
    assert all(j < i for j, i in a.edges)
    times = [c.time for c in a.commits]
    assert times == sorted(times)


def test_noise_adds_fixups_reverts_and_refactors_and_none_at_zero():
    clean = make_history(HistoryConfig(noise=0.0), rng())
    noisy = make_history(HistoryConfig(noise=0.4), rng())
    assert {c.kind for c in clean.commits} == {"core"}
    assert {c.kind for c in noisy.commits} == {"core", "fixup", "revert", "refactor"}
    core = sum(c.kind == "core" for c in noisy.commits)
    assert len(noisy.commits) - core == round(0.4 * core)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 20), density=st.floats(0, 1),
       max_parents=st.integers(0, 4))
def test_random_dag_is_acyclic_with_bounded_parents(seed, n, density, max_parents):
    edges = random_dag(n, density, max_parents, rng(seed))
    assert all(0 <= j < i < n for j, i in edges)
    for i in range(n):
        assert sum(1 for _, k in edges if k == i) <= max_parents


# --------------------------------------------------------------------------- reconstruction
def test_clean_logs_are_recovered_almost_exactly():
    for seed in range(3):
        res = reconstruct(make_history(HistoryConfig(noise=0.0), rng(500 + seed)))
        assert res["ari"] >= 0.95 and res["edge_f1"] >= 0.8
        assert res["n_found"] == res["n_true"]


def test_reconstruction_degrades_with_noise():
    def mean_ari(noise):
        return np.mean([reconstruct(make_history(HistoryConfig(noise=noise), rng(600 + s)))
                        ["ari"] for s in range(3)])

    assert mean_ari(0.0) > mean_ari(0.5) + 0.1


def test_messages_lose_fixup_and_revert_markers():
    from icml26.evoclaw.reconstruct import clean_message as clean

    assert clean('Revert "add cache store"') == "add cache store"
    assert clean("fixup! fixup! add auth") == "add auth"


def test_edge_f1_and_small_cluster_merging():
    assert evoclaw.edge_f1({(0, 1), (1, 2)}, {(0, 1), (0, 2)}) == pytest.approx(
        {"precision": 0.5, "recall": 0.5, "f1": 0.5})
    assert evoclaw.edge_f1(set(), set())["f1"] == 1.0
    from icml26.evoclaw.reconstruct import merge_small as merge

    s = np.array([[1, .9, .1], [.9, 1, .2], [.1, .2, 1]])
    assert merge(np.array([0, 0, 1]), s, 2).tolist() == [0, 0, 0]


def test_bad_configs_raise():
    with pytest.raises(ValueError, match="noise"):
        HistoryConfig(noise=1.5).validate()
    with pytest.raises(ValueError, match="topic vocabulary"):
        HistoryConfig(n_milestones=20).validate()
    with pytest.raises(ValueError, match="weights"):
        ReconConfig(w_files=0, w_message=0, w_time=0).validate()
    with pytest.raises(ValueError, match="p must be"):
        Agent(p=1.2).validate()
    with pytest.raises(ValueError, match="beta"):
        make_package(set(), 3, rng(), beta=2.0)
    with pytest.raises(ValueError, match="scale"):
        evoclaw.claims(0, scale="huge")
    oracle = SuiteOracle(small_package(3))
    own = np.zeros((1, 3), dtype=int)
    with pytest.raises(ValueError, match="mode"):
        grade(oracle, own, own - 1, own, "sometimes")


# --------------------------------------------------------------------------- the package
def test_every_bug_is_caught_by_the_test_inputs():
    assert all(evoclaw.bugs_caught(4).values())


def test_reference_passes_and_each_bug_fails_its_milestone_tests():
    spec = small_package()
    oracle = SuiteOracle(spec)
    ref = run_in_process(sources(spec, [0] * spec.n, oracle),
                         [f"test_m{k:02d}" for k in range(spec.n)])
    assert all(all(v.values()) and len(v) == 4 for v in ref.values())
    for k in range(spec.n):
        for bug in (1, 2, 3):
            state = [0] * spec.n
            state[k] = bug
            assert not all(oracle.outcomes(k, state)), (k, bug)


def test_an_upstream_bug_reaches_integration_tests_only():
    """Errors propagate through calls: with beta = 1 a bug in an ancestor fails the
    descendant's tests; with beta = 0 (unit tests of core only) it does not."""
    for beta, fails in ((1.0, True), (0.0, False)):
        spec = small_package(beta=beta)
        oracle = SuiteOracle(spec)
        k = next(k for k in range(spec.n) if spec.ancestors(k))
        state = [0] * spec.n
        state[spec.ancestors(k)[0]] = 1
        assert (not all(oracle.outcomes(k, state))) == fails


def test_generated_source_is_plain_python_with_calls_to_the_dependencies():
    spec = small_package()
    k = next(k for k in range(spec.n) if spec.parents[k])
    src = module_source(spec, k)
    compile(src, "m.py", "exec")
    for j, c in spec.parents[k]:
        assert f"from .m{j:02d} import f{j:02d}" in src and f"{c} * f{j:02d}(xs)" in src
    assert suite_source(spec, k, SuiteOracle(spec).expected[k]).count("def test_") == 4


def test_in_process_runner_never_touches_the_process_wide_import_state():
    """The generated package lives in a private namespace: while its code runs, and after,
    ``sys.modules`` and ``sys.meta_path`` are those of the caller (a server snapshots them on
    other threads); relative imports of its modules work, a missing one fails its tests."""
    import sys

    src = {"m00": "import sys\nSEEN = sorted(set(sys.modules) ^ BEFORE) + "
                  "[len(sys.meta_path)]\n\ndef f00(xs):\n    return len(xs)\n",
           "m01": "from .m00 import f00\n",
           "test_m01": "from .m01 import f00\nfrom . import m00\n\n"
                       "def test_seen():\n    assert m00.SEEN == [LEN]\n\n"
                       "def test_wrong():\n    assert f00([1, 2]) == 3\n",
           "test_m02": "from .m09 import f09\n\ndef test_missing():\n    pass\n"}
    before, meta = set(sys.modules), list(sys.meta_path)
    src["m00"] = src["m00"].replace("BEFORE", repr(before))
    src["test_m01"] = src["test_m01"].replace("LEN", str(len(meta)))
    out = run_in_process(src, ["test_m01", "test_m02"])
    assert out == {"test_m01": {"test_seen": True, "test_wrong": False},
                   "test_m02": {"test_missing": False}}
    assert set(sys.modules) == before and sys.meta_path == meta


@pytest.mark.slow
def test_in_process_runner_agrees_with_pytest_in_a_subprocess():
    spec = small_package()
    oracle = SuiteOracle(spec)
    state = [0, 2, 0, 1, 0, 3]
    src = sources(spec, state, oracle)
    ours = run_in_process(src, [f"test_m{k:02d}" for k in range(spec.n)])
    theirs = evoclaw.run_with_pytest(src, timeout=120)
    assert ours == theirs
    assert any(not all(v.values()) for v in ours.values())


# --------------------------------------------------------------------------- grading
def graded(p, r=0.0, beta=1.0, n=40, reset=False, seed=0):
    spec = small_package(n=8, beta=beta, seed=seed)
    oracle = SuiteOracle(spec)
    draws = draw_trajectories(spec, Agent(p, r), n, rng(seed + 1))
    return (grade(oracle, *draws, "isolated"), grade(oracle, *draws, "continuous", reset),
            draws)


def test_perfect_and_hopeless_agents():
    for p, score in ((1.0, 1.0), (0.0, 0.0)):
        iso, con, _ = graded(p)
        assert iso["score"] == con["score"] == score
    iso, con, _ = graded(1.0)
    assert con["recall"][0][-1] == pytest.approx(1.0)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 1000), p=st.floats(0.2, 0.95))
def test_continuous_resolves_a_subset_of_isolated_without_regressions(seed, p):
    """With r = 0 a milestone resolved on the agent's own state is resolved in isolation too
    (isolated: own code right; continuous: own code and every ancestor right)."""
    iso, con, (own, _, _) = graded(p, seed=seed, n=15)
    assert not (con["resolved"] & ~iso["resolved"]).any()
    np.testing.assert_array_equal(iso["resolved"], own == 0)


def test_reset_dependencies_or_unit_tests_make_continuous_equal_isolated():
    iso, con, _ = graded(0.7, reset=True)
    np.testing.assert_array_equal(iso["resolved"], con["resolved"])
    iso, con, _ = graded(0.7, beta=0.0)
    np.testing.assert_array_equal(iso["resolved"], con["resolved"])
    iso, con, _ = graded(0.7)
    assert con["score"] < iso["score"]


def test_regressions_lower_the_isolated_score():
    iso, _, (own, broken, _) = graded(1.0, r=1.0)
    assert (broken[:, 1:] >= 0).all()
    assert iso["score"] < 0.5


def test_evaluation_is_deterministic_per_seed():
    cfg = EvoConfig(n_repos=2, pkg_milestones=6)
    a = evoclaw.evaluate(cfg, 3, 0.8, 0.0, 1.0, 10)
    assert a == evoclaw.evaluate(cfg, 3, 0.8, 0.0, 1.0, 10)
    assert a != evoclaw.evaluate(cfg, 4, 0.8, 0.0, 1.0, 10)


# --------------------------------------------------------------------------- claims
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_expected_claims_hold(seed):
    out = {c.name: c for c in evoclaw.claims(seed)}
    assert set(out) == set(evoclaw.CLAIM_SPECS)
    assert all(out[n].expected for n in ("dag_recovered", "edges_recovered",
                                         "continuous_drop"))
    bad = [c for c in out.values() if c.expected and not c.holds]
    assert not bad, [(c.name, c.measured, c.note) for c in bad]


@pytest.mark.slow
@pytest.mark.mutation("evoclaw", "continuous_drop")
def test_mutation_grading_on_reference_dependencies_fails_continuous_drop(tmp_path,
                                                                         monkeypatch):
    """Mutation (the issue's): grade continuous runs with dependencies reset to the
    reference -> continuous equals isolated and continuous_drop FAILS."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    cfg = replace(evoclaw.config_for("quick"), reset_dependencies=True)
    out = {c.name: c for c in evoclaw.claims_for(cfg, 0)}
    drop = out["continuous_drop"]
    assert drop.expected and not drop.holds
    assert abs(drop.measured) < 0.02 and "mutation" in drop.note


@pytest.mark.mutation("evoclaw", "isolated_is_competence")
def test_mutation_tests_that_miss_bugs_fail_isolated_is_competence(tmp_path, monkeypatch):
    """Mutation: a harness whose tests use one one-element input ([6], unchanged by many of
    the bugs) passes buggy code, so the isolated score exceeds p and the sanity claim fails."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    package = importlib.import_module("icml26.evoclaw.package")
    experiments = importlib.import_module("icml26.evoclaw.experiments")
    experiments.repo_oracle.cache_clear()  # oracles built with the real inputs
    monkeypatch.setattr(package, "INPUTS", ([6],))
    assert not all(evoclaw.bugs_caught(4).values())
    cfg = EvoConfig(n_repos=2, pkg_milestones=6, n_trajectories=40,
                    history=HistoryConfig(n_milestones=4), noise_grid=(0.2,))
    out = {c.name: c for c in evoclaw.claims_for(cfg, 0)}
    experiments.repo_oracle.cache_clear()  # drop the mutated oracles
    assert not out["isolated_is_competence"].holds
    assert out["isolated_is_competence"].measured > 0.05


def reconstruction_claims(cfg, seed=0):
    """The reconstruction claims alone (the evolution experiment stubbed out: NaN claims)."""
    mod = importlib.import_module("icml26.evoclaw.claims")

    def skipped(*a, **k):
        raise RuntimeError("not this test's experiment")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mod, "figure_evolution_data", skipped)
        return {c.name: c for c in evoclaw.claims_for(cfg, seed)}


@pytest.mark.mutation("evoclaw", "dag_recovered", "edges_recovered")
def test_mutation_clustering_without_co_change_fails_reconstruction(tmp_path, monkeypatch):
    """Mutation: the co-change signal dropped (the commits' files never read; messages and
    time only): milestones blur (ARI ~0.3-0.5) and their edges with them."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    cfg = replace(evoclaw.config_for("quick"), noise_grid=(0.2,))
    out = reconstruction_claims(cfg)
    assert out["dag_recovered"].holds and out["edges_recovered"].holds
    out = reconstruction_claims(replace(cfg, recon=ReconConfig(w_files=0.0)))
    for name in ("dag_recovered", "edges_recovered"):
        assert out[name].expected and not out[name].holds, (name, out[name].measured)


@pytest.mark.mutation("evoclaw", "edges_recovered")
def test_mutation_reversed_def_use_edges_fail_edges_recovered(tmp_path, monkeypatch):
    """Mutation: def/use read backwards (an edge from the user to the definer): the
    clustering is untouched, the DAG's edges all point the wrong way."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    rec = importlib.import_module("icml26.evoclaw.reconstruct")
    forward = rec.recover_edges
    monkeypatch.setattr(rec, "recover_edges",
                        lambda h, labels, m=2: {(b, a) for a, b in forward(h, labels, m)})
    out = reconstruction_claims(replace(evoclaw.config_for("quick"), noise_grid=(0.2,)))
    assert out["dag_recovered"].holds
    assert out["edges_recovered"].expected and not out["edges_recovered"].holds
    assert out["edges_recovered"].measured < 0.2


def test_cuda_without_a_gpu_fails_fast_naming_the_flag(monkeypatch):
    """``device="cuda"`` without a GPU: a ValueError naming --device before any work (the
    computation is numpy on the CPU, but the argument is validated like every paper's)."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    mod = importlib.import_module("icml26.evoclaw.claims")

    def no_work(*a, **k):
        raise AssertionError("work started before the device was checked")

    monkeypatch.setattr(mod, "figure_reconstruction_data", no_work)
    monkeypatch.setattr(mod, "figure_evolution_data", no_work)
    with pytest.raises(ValueError, match="--device"):
        evoclaw.claims(0, device="cuda")
    assert evoclaw.claims_for(EvoConfig(), 0, device="cpu")  # NaN claims, no exception


def test_a_failing_computation_reports_nan_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    cfg = EvoConfig(n_repos=1, pkg_milestones=4, n_trajectories=5,
                    history=HistoryConfig(n_milestones=4), noise_grid=(0.1,))
    out = {c.name: c for c in evoclaw.claims_for(cfg, 0)}
    for name in ("dag_recovered", "edges_recovered"):
        assert math.isnan(out[name].measured) and "noise_grid" in out[name].note
    assert not math.isnan(out["continuous_drop"].measured)


# --------------------------------------------------------------------------- the explorer
@pytest.fixture
def explorer():
    pn = pytest.importorskip("panel")
    import holoviews as hv

    hv.extension("bokeh")
    pn.extension()
    from icml26.dashboards import evoclaw as app

    yield app.Explorer(n_repos=1, trajectories=10, pkg_milestones=5)
    pn.state.reset()


def test_explorer_live_views_and_run(explorer):
    log, model = explorer.log_chart(), explorer.model_chart()
    assert "commits" in log.title and log.x_label != "x"
    assert "continuous" in model.title
    assert explorer.index_chart() is None
    explorer.param.trigger("run")
    assert explorer.run_done == 1 and explorer.error_message() == ""
    assert "ARI" in explorer.recovered_chart().title
    assert "isolated" in explorer.result_note()
    assert len(explorer.curves_chart().series) == 4


def test_explorer_extreme_settings_stay_valid(explorer):
    explorer.log_milestones = 14
    assert explorer.error_message() == ""
    explorer.param.update(pkg_milestones=20, trajectories=400)
    assert explorer.error_message() == ""
    assert explorer.model_chart() is not None
