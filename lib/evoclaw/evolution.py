"""Isolated vs continuous evaluation of a simulated agent on the generated package.

The "agent" implements the milestones in order (the DAG's order).  For milestone ``k`` it
writes the correct body with probability ``p`` (its competence), else one of the template's
three bugs (uniformly); with probability ``r`` its change also breaks an earlier module (a
regression: a bug written into a random ancestor of ``k``, or a random earlier milestone when
``k`` has none).  The draws of a trajectory are made once and graded both ways:

* isolated: milestone ``k`` starts from the reference code of milestones ``< k``;
* continuous: milestone ``k`` starts from the agent's own state after milestone ``k - 1``, so
  an upstream bug fails every integration test downstream (errors propagate).

EvoClaw's rule: a milestone is resolved when its fail-to-pass tests (its own) all pass and no
pass-to-pass test regresses (a test of an earlier milestone that passed before the change and
fails after it).  ``reset_dependencies=True`` grades continuous runs with every milestone's
dependencies reset to the reference (the mutation the issue names: continuous then equals
isolated).

Every test outcome comes from really running the package's tests (:mod:`.package`); each
distinct code state a milestone's tests can see (the variants of the milestone and of its
ancestors) is run once and memoised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.evoclaw.package import (
    N_VARIANTS,
    PackageSpec,
    module_source,
    reference_values,
    run_in_process,
    suite_source,
)


class SuiteOracle:
    """Runs milestone tests on code states, once per distinct state (memoised)."""

    def __init__(self, spec: PackageSpec):
        self.spec = spec
        self.expected = reference_values(spec)
        self.tests = [suite_source(spec, k, self.expected[k]) for k in range(spec.n)]
        self.ancestors = [spec.ancestors(k) for k in range(spec.n)]
        self.memo: dict[tuple, tuple[bool, ...]] = {}
        self.runs = 0  # test-module executions (distinct states)
        self.seen: set[tuple] = set()  # states asked for since the last ``seen.clear()``

    def outcomes(self, k: int, state: tuple[int, ...]) -> tuple[bool, ...]:
        """Pass/fail of milestone ``k``'s tests when module ``j`` has variant ``state[j]``."""
        deps = (*self.ancestors[k], k)
        key = (k, tuple(state[j] for j in deps))
        self.seen.add(key)
        if key not in self.memo:
            sources = {f"m{j:02d}": module_source(self.spec, j, state[j]) for j in deps}
            sources[f"test_m{k:02d}"] = self.tests[k]
            result = run_in_process(sources, [f"test_m{k:02d}"])[f"test_m{k:02d}"]
            self.memo[key] = tuple(result.values())
            self.runs += 1
        return self.memo[key]


@dataclass(frozen=True)
class Agent:
    """The simulated agent: competence ``p`` and regression rate ``r``."""

    p: float = 0.85  # the competence for continuous_drop
    r: float = 0.0  # regression rate (0 in the claims: isolated then measures p)

    def validate(self) -> None:
        for name in ("p", "r"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")


def draw_trajectories(spec: PackageSpec, agent: Agent, n: int, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``own [n, M]`` variants written for each milestone, ``broken [n, M]`` the module a
    regression hits (-1: none) and ``broken_variant [n, M]`` the bug written there."""
    m = spec.n
    u = rng.random((n, m))
    bug = rng.integers(1, N_VARIANTS, (n, m))
    own = np.where(u < agent.p, 0, bug)
    hit = rng.random((n, m)) < agent.r
    pick = rng.random((n, m))
    broken = np.full((n, m), -1)
    for k in range(1, m):
        pool = spec.ancestors(k) or tuple(range(k))
        broken[:, k] = np.where(hit[:, k], np.array(pool)[(pick[:, k] * len(pool)).astype(int)],
                                -1)
    return own, broken, rng.integers(1, N_VARIANTS, (n, m))


def grade(oracle: SuiteOracle, own, broken, broken_variant, mode: str,
          reset_dependencies: bool = False) -> dict:
    """Grade trajectories in ``mode`` ("isolated" | "continuous").

    Returns ``resolved [n, M]`` (bool), ``recall [n, M]`` (after milestone ``k``: the share of
    every milestone's tests that pass), ``precision [n, M]`` (the share of the implemented
    milestones' tests that pass) and ``score`` (the mean of ``resolved``).
    """
    if mode not in ("isolated", "continuous"):
        raise ValueError(f"mode must be 'isolated' or 'continuous', got {mode!r}")
    spec = oracle.spec
    n, m = own.shape
    t = spec.n_tests
    reference = [0] * m
    # the tests a change of module b can reach: b's own and those of its descendants
    reach = [[j for j in range(m) if j == b or b in oracle.ancestors[j]] for b in range(m)]
    resolved = np.zeros((n, m), dtype=bool)
    recall = np.zeros((n, m))
    precision = np.zeros((n, m))
    for i in range(n):
        state = list(reference)  # continuous: the agent's own state (modules > k unused)
        passed = {}  # continuous: pass counts of the implemented milestones' tests
        for k in range(m):
            before = list(state) if mode == "continuous" else list(reference)
            after = list(before)
            after[k] = int(own[i, k])
            b = int(broken[i, k])
            if b >= 0:
                after[b] = int(broken_variant[i, k])
            # earlier tests a regression can reach (module k itself is new: no j < k uses it)
            touched = [j for j in reach[b] if j < k] if b >= 0 else []
            graded_before, graded_after = before, after
            if mode == "continuous" and reset_dependencies:  # the mutation: graded as if
                graded_before, graded_after = list(before), list(after)  # deps were reference
                for j in oracle.ancestors[k]:
                    graded_before[j] = graded_after[j] = 0
            f2p = oracle.outcomes(k, graded_after)
            regressed = any(not a and p_ for j in touched
                            for a, p_ in zip(oracle.outcomes(j, graded_after),
                                             oracle.outcomes(j, graded_before)))
            resolved[i, k] = all(f2p) and not regressed
            if mode == "isolated":
                passed = {j: sum(oracle.outcomes(j, reference)) for j in range(k)}
            for j in (*touched, k):
                passed[j] = sum(oracle.outcomes(j, after))
            total = sum(passed[j] for j in range(k + 1))
            recall[i, k] = total / (m * t)
            precision[i, k] = total / ((k + 1) * t)
            if mode == "continuous":
                state = after
    return {"resolved": resolved, "recall": recall, "precision": precision,
            "score": float(resolved.mean())}
