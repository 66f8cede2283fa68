"""EvoClaw: agents on continuous software evolution -- the harness, not the leaderboard.

Gangda Deng, Zhaoling Chen, ..., Xiangru Tang, Xingyao Wang.  "EvoClaw: Evaluating AI Agents
on Continuous Software Evolution", ICML 2026, https://arxiv.org/abs/2603.13428 (code:
github EvoClaw-Bench/EvoClaw, DeepCommit-ai/DeepCommit).  Tier C: no LLM agent runs here and
no real repository is used, so the paper's numbers (> 80% of milestones resolved in isolation,
<= 38% in continuous runs, 12 models x 4 frameworks) are NOT reproduced, and nothing here is
evidence about how LLM agents behave.  What is reproduced is the machinery (the harness):
milestone reconstruction, and grading that lets errors propagate, exercised by a simulated
agent whose error rate is set by hand (the status is computed and, tier C, labelled
``harness``: ``icml26 list`` / :mod:`icml26.status`):

(A) DeepCommit-like milestone reconstruction (:mod:`.history`, :mod:`.reconstruct`):
synthetic repositories with known milestones and a known dependency DAG produce noisy commit
logs (interleaving, vague messages, cross-cutting touches, stray uses, fix-ups, reverts,
refactors); commits are clustered on co-change, message TF-IDF and time (the number of
milestones chosen by silhouette) and edges come from symbol def/use.  Scored by the adjusted
Rand index (ARI) and edge F1 against the generating truth.

(B) Isolated vs continuous evaluation (:mod:`.package`, :mod:`.evolution`): a generated
Python package whose milestone ``k`` adds ``f_k``, which calls its dependencies; each
milestone has fail-to-pass tests that are really run.  A simulated agent writes the correct
code with probability ``p`` (else one of three seeded real bugs) and breaks an earlier module
with probability ``r``.  EvoClaw's rule grades a milestone resolved when its own tests pass
with no pass-to-pass regression.  Isolated mode starts every milestone from the reference
code, continuous mode from the agent's own state, so an upstream bug fails downstream tests:

    isolated  ~ p                  continuous(k) ~ p ^ (1 + |ancestors(k)|)   (beta = 1)

so the continuous drop (claim ``continuous_drop``, a ``check``) follows from the agent model
by construction: it tests that the harness propagates errors, not that agents struggle.

Figures (``notebooks/evoclaw.ipynb``): F1 ARI / edge F1 vs noise; F2 resolve rate by
milestone index, isolated vs continuous; F3 test recall / precision as milestones accumulate;
F4 scores vs competence ``p`` and vs the integration-test share ``beta``.

Reconstructed (ours, not the paper's): every generator, the clustering signals and their
weights, the package templates and bugs, the agent model.  Modules, one idea each:
``history``, ``reconstruct``, ``package``, ``evolution``, ``experiments``, ``claims``.
"""

from icml26.evoclaw.claims import CLAIM_SPECS, claims, claims_for
from icml26.evoclaw.evolution import Agent, SuiteOracle, draw_trajectories, grade
from icml26.evoclaw.experiments import (
    CACHE_VERSION,
    PAPER,
    SCALES,
    EvoConfig,
    config_for,
    evaluate,
    evaluate_repo,
    figure_evolution_data,
    figure_reconstruction_data,
    figure_sweep_data,
    pool,
    repo_package,
)
from icml26.evoclaw.history import Commit, History, HistoryConfig, make_history, random_dag
from icml26.evoclaw.package import (
    TEMPLATES,
    PackageSpec,
    bugs_caught,
    make_package,
    module_source,
    reference_values,
    run_in_process,
    run_with_pytest,
    suite_source,
)
from icml26.evoclaw.reconstruct import (
    ReconConfig,
    affinity,
    cluster,
    edge_f1,
    majority_map,
    reconstruct,
    recover_edges,
)

__all__ = [
    "CACHE_VERSION", "CLAIM_SPECS", "PAPER", "SCALES", "TEMPLATES", "Agent", "Commit",
    "EvoConfig", "History", "HistoryConfig", "PackageSpec", "ReconConfig", "SuiteOracle",
    "affinity", "bugs_caught", "claims", "claims_for", "cluster", "config_for",
    "draw_trajectories", "edge_f1", "evaluate", "evaluate_repo", "figure_evolution_data",
    "figure_reconstruction_data", "figure_sweep_data", "grade", "make_history",
    "majority_map", "make_package", "module_source", "pool", "random_dag", "reconstruct",
    "recover_edges", "reference_values", "repo_package", "run_in_process", "run_with_pytest",
    "suite_source",
]
