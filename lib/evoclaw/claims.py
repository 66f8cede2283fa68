"""The claims of ``evoclaw``: the claim rows and how each is measured from the experiments.

Tier C: a harness, not the paper's result. No LLM agent runs and no real repository is used,
so the abstract's numbers (> 80% of milestones resolved in isolation, at most 38% in
continuous runs, 12 frontier models x 4 frameworks) are NOT measured here. What is
reproduced is the machinery: DeepCommit-like milestone reconstruction from noisy (synthetic)
commit logs, and grading that carries an agent's own code state from milestone to milestone.

Headlines (the abstract's DeepCommit, "reconstructs verifiable Milestone DAGs from noisy
commit logs", on synthetic logs): ``dag_recovered`` (the milestones), ``edges_recovered``
(their dependencies). Checks (harness self-tests): ``continuous_drop`` (the grading
propagates upstream errors; the drop's size is built into the simulated agent, so it is NOT
evidence about LLM agents) and ``isolated_is_competence`` (the tests catch every bug).
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.evoclaw.experiments import (
    PAPER,
    EvoConfig,
    config_for,
    figure_evolution_data,
    figure_reconstruction_data,
)

#: the abstract's sentence the headlines quote (``source``)
DEEPCOMMIT = ("an agentic pipeline that reconstructs verifiable Milestone DAGs from noisy commit "
              "logs")
#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "dag_recovered": ClaimSpec(
        statement='"reconstructs verifiable Milestone DAGs from noisy commit logs" '
                  "(DeepCommit's task, on synthetic logs with known milestones): adjusted Rand "
                  "index of the commit clustering at noise 0.2, worst repository, >= 0.8",
        op=">=", threshold=0.8, expected=True, role="headline", unit="each", source=DEEPCOMMIT),
    "edges_recovered": ClaimSpec(
        statement='"reconstructs verifiable Milestone DAGs from noisy commit logs": the '
                  "dependency edges, from symbol def/use on synthetic logs: edge F1 at noise "
                  "0.2, worst repository, >= 0.7",
        op=">=", threshold=0.7, expected=True, role="headline", unit="each", source=DEEPCOMMIT),
    "continuous_drop": ClaimSpec(
        statement="Harness check, not the paper's LLM result: continuous grading carries the "
                  "agent's own code state, so an upstream bug fails downstream tests; a "
                  "simulated agent of per-milestone competence p = 0.85 (independent errors, "
                  "built in) scores >= 0.2 lower continuous than isolated",
        op=">=", threshold=0.2, expected=True, role="check", unit="each", source=""),
    "isolated_is_competence": ClaimSpec(
        statement="Harness check: isolated evaluation measures competence, |isolated resolve "
                  "rate - p| <= 0.03 (the tests catch every bug, the reference passes)",
        op="<=", threshold=0.03, expected=True, role="check", unit="each", source=""),
}
RECON_CLAIMS = ("dag_recovered", "edges_recovered")
EVOLUTION_CLAIMS = ("continuous_drop", "isolated_is_competence")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed``. ``device`` is
    validated, but the computation (numpy, scikit-learn and generated Python whose tests are
    really run) is on the CPU whatever the device."""
    resolve_device(device)
    return claims_for(config_for(scale), seed, device)


def claims_for(cfg: EvoConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation test sets ``reset_dependencies``);
    CPU computation whatever ``device`` (validated)."""
    resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(RECON_CLAIMS):
        rows = [r for r in figure_reconstruction_data(cfg, seed)
                if abs(r["noise"] - cfg.claim_noise) < 1e-9]
        if not rows:
            raise ValueError(f"claim_noise {cfg.claim_noise} is not in noise_grid")
        ari = [r["ari"] for r in rows]
        f1 = [r["edge_f1"] for r in rows]
        found = [r["n_found"] for r in rows]
        where = (f"{len(rows)} synthetic repositories of {cfg.history.n_milestones} "
                 f"milestones at noise {cfg.claim_noise:g} ({min(r['n_commits'] for r in rows)}"
                 f"-{max(r['n_commits'] for r in rows)} commits each)")
        table.add("dag_recovered", min(ari),
                  f"worst of {where}; ARI {min(ari):.3f}-{max(ari):.3f}; clusters found "
                  f"{min(found)}-{max(found)} (not told the number); weights calibrated on "
                  "other seeds (1000-1069); synthetic logs, not DeepCommit's data")
        table.add("edges_recovered", min(f1),
                  f"worst of {where}; F1 {min(f1):.3f}-{max(f1):.3f}, precision "
                  f"{min(r['edge_precision'] for r in rows):.2f}-"
                  f"{max(r['edge_precision'] for r in rows):.2f}, recall "
                  f"{min(r['edge_recall'] for r in rows):.2f}-"
                  f"{max(r['edge_recall'] for r in rows):.2f}; def/use from the commits' "
                  "symbol sets (no real diff parsing)")
    with table.guard(EVOLUTION_CLAIMS):
        ev = figure_evolution_data(cfg, seed)
        iso, con = ev["isolated"], ev["continuous"]
        per = [a - b for a, b in zip(iso["per_repo"], con["per_repo"])]
        how = (f"{cfg.n_repos} generated packages x {cfg.pkg_milestones} milestones "
               f"({ev['edges']} dependency edges), {cfg.n_trajectories} simulated agents each "
               f"(p = {cfg.p:g}, r = {cfg.r:g}, beta = {cfg.beta:g}); {ev['runs']} distinct "
               "code states whose tests were really run (in-process, memoised)")
        mutation = "; dependencies reset to the reference (mutation)" \
            if cfg.reset_dependencies else ""
        table.add("continuous_drop", iso["score"] - con["score"],
                  f"isolated {iso['score']:.3f}, continuous {con['score']:.3f} pooled over "
                  f"{how}; per-package drop {min(per):.3f}-{max(per):.3f}. Reproduced: the "
                  "harness (continuous runs start from the agent's own state, upstream errors "
                  "propagate through really-run tests). NOT reproduced: an LLM agent's "
                  "behaviour; the simulated agent errs independently with probability 1 - p, "
                  "so the drop (~ p^(1+|ancestors|) vs p) is built in by construction. Paper: "
                  f"> 80% isolated vs <= 38% continuous for real LLM agents{mutation}")
        n_graded = cfg.n_repos * cfg.n_trajectories * cfg.pkg_milestones
        se = (cfg.p * (1 - cfg.p) / n_graded) ** 0.5
        table.add("isolated_is_competence", abs(iso["score"] - cfg.p),
                  f"isolated {iso['score']:.4f} vs p = {cfg.p:g} over {how}; sampling SE "
                  f"{se:.4f} over {n_graded} graded milestones")
    return table.claims
