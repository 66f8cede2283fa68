"""The stand-in "model" and the agent workflows of mini-TritonGym (no LLM runs here).

The model (reconstructed, not the paper's): asked for operator ``op`` it returns the oracle
kernel with probability ``1 - p_bug`` and otherwise the oracle with ONE bug class drawn
uniformly from those that apply to ``op`` (``bugs.applicable``).  A candidate is therefore an
``(op, bug | None)`` pair whose ``verify`` result was measured once by really compiling and
running its source (``experiments.verify_table``).

Repair skill ``p_fix``: shown ``verify``'s feedback for a failing candidate, the model suspects
the bug classes the first failing shape is designed to probe (``Shape.probes``: the odd-tail
shape probes masks and bounds, the stress shape range, precision, eps and strides; a failure on
the regular shape localises nothing), picks one suspect uniformly and, if it is the real bug,
removes it with probability ``p_fix``; otherwise the candidate is unchanged.  With
``feedback="pass-fail"`` verify says only pass or fail, so every applicable class is a suspect.

Workflows (budget = verify calls = model calls):
* ``one-shot``: one sample, submitted as is;
* ``iterative`` (T turns): sample, then up to T - 1 repairs while verify fails;
* ``best-of-N``: up to N independent samples, the first that passes verify is submitted;
* ``evolutionary`` (P x G): P samples per generation; while none passes, the next generation
  is P - 1 repairs of the candidate with the smallest max error plus one fresh sample.

Pass@1 = share of episodes whose submitted candidate passes verify.  Episodes cycle through the
operators; the first sample of episode ``e`` comes from a generator seeded with
``(seed, e)`` and is shared by all workflows (a paired comparison).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icml26.tritongym.harness import KINDS, SHAPES, TOL, VerifyResult

WORKFLOWS = ("one-shot", "iterative", "best-of-N", "evolutionary")
FEEDBACK = ("full", "pass-fail")


@dataclass(frozen=True)
class Model:
    """The seeded bug generator with a repair skill (see the module docstring)."""

    applicable: dict[str, tuple[str, ...]]  # op -> bug classes that apply
    table: dict[tuple[str, str | None], VerifyResult]  # (op, bug) -> verify result
    p_bug: float = 0.5
    p_fix: float = 0.5
    feedback: str = "full"
    tol: float = TOL
    kinds: tuple[str, ...] = KINDS

    def __post_init__(self):
        for name in ("p_bug", "p_fix"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        if self.feedback not in FEEDBACK:
            raise ValueError(f"feedback must be one of {FEEDBACK}, got {self.feedback!r}")
        if not self.tol > 0:
            raise ValueError(f"tol must be > 0, got {self.tol!r}")

    def sample(self, op: str, rng: np.random.Generator) -> str | None:
        """A generation for ``op``: None (the oracle) or one bug class."""
        if rng.random() < self.p_bug:
            classes = self.applicable[op]
            return classes[int(rng.integers(len(classes)))]
        return None

    def passes(self, op: str, bug: str | None) -> bool:
        return self.table[(op, bug)].passed(self.tol, self.kinds)

    def error(self, op: str, bug: str | None) -> float:
        return self.table[(op, bug)].max_err(self.kinds)

    def suspects(self, op: str, bug: str | None) -> tuple[str, ...]:
        """The bug classes the model suspects after verify's feedback on a failure."""
        classes = self.applicable[op]
        if self.feedback == "pass-fail":
            return classes
        first = self.table[(op, bug)].first_failure(self.tol, self.kinds)
        probes = next((s.probes for s in SHAPES[op] if first and s.name == first.shape), ())
        narrowed = tuple(c for c in classes if c in probes)
        return narrowed or classes

    def repair(self, op: str, bug: str | None, rng: np.random.Generator) -> str | None:
        """One repair turn on a failing candidate."""
        suspects = self.suspects(op, bug)
        pick = suspects[int(rng.integers(len(suspects)))]
        if pick == bug and rng.random() < self.p_fix:
            return None
        return bug


def episode(model: Model, workflow: str, op: str, budget: int, first: str | None,
            rng: np.random.Generator, population: int = 2) -> bool:
    """One episode: does the submitted candidate pass?  ``first`` is the shared first sample;
    ``budget`` is T (iterative), N (best-of-N) or P x G verify calls (evolutionary)."""
    if workflow == "one-shot":
        return model.passes(op, first)
    if workflow == "iterative":
        cand = first
        for _ in range(budget - 1):
            if model.passes(op, cand):
                break
            cand = model.repair(op, cand, rng)
        return model.passes(op, cand)
    if workflow == "best-of-N":
        cand = first
        for _ in range(budget - 1):
            if model.passes(op, cand):
                break
            cand = model.sample(op, rng)
        return model.passes(op, cand)
    if workflow == "evolutionary":
        pop = [first] + [model.sample(op, rng) for _ in range(population - 1)]
        for _ in range(max(1, budget // population) - 1):
            if any(model.passes(op, c) for c in pop):
                return True
            errs = [model.error(op, c) for c in pop]
            parent = pop[int(np.argmin(errs))]
            pop = [model.repair(op, parent, rng) for _ in range(population - 1)]
            pop.append(model.sample(op, rng))
        return any(model.passes(op, c) for c in pop)
    raise ValueError(f"workflow must be one of {WORKFLOWS}, got {workflow!r}")


def pass_at_1(model: Model, workflow: str, ops: tuple[str, ...], episodes: int, seed: int,
              budget: int = 4, population: int = 2) -> dict:
    """Pass@1 of ``workflow`` over ``episodes`` episodes (operators in turn), with the
    per-operator rates and the binomial standard error."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    wins = {op: [] for op in ops}
    for e in range(episodes):
        op = ops[e % len(ops)]
        first = model.sample(op, np.random.default_rng([seed, e, 0]))
        rng = np.random.default_rng([seed, e, 1])
        wins[op].append(episode(model, workflow, op, budget, first, rng, population))
    total = [w for ws in wins.values() for w in ws]
    p = float(np.mean(total))
    return {"workflow": workflow, "budget": budget, "pass@1": p,
            "se": math.sqrt(max(p * (1 - p), 1e-12) / len(total)),
            "per_op": {op: float(np.mean(ws)) if ws else math.nan for op, ws in wins.items()}}


def closed_form_pass(workflow: str, p_bug: float, p_fix: float, budget: int,
                     suspects: int = 2, population: int = 2) -> float:
    """Pass@1 of ``workflow`` in closed form for an IDEAL verifier (every bug caught) and a
    repair that succeeds with ``q = p_fix / suspects`` per turn::

        one-shot      1 - p
        best-of-N     1 - p^N
        iterative     1 - p (1 - q)^(T - 1)
        evolutionary  1 - p^P [p (1 - q)^(P - 1)]^(G - 1),   G = budget // P

    The Monte Carlo (``pass_at_1``) replaces the ideal verifier and the fixed ``suspects`` by
    the measured verify results and the shapes' probes."""
    if workflow not in WORKFLOWS:
        raise ValueError(f"workflow must be one of {WORKFLOWS}, got {workflow!r}")
    if suspects < 1 or budget < 1:
        raise ValueError(f"suspects and budget must be >= 1, got {suspects}, {budget}")
    p, q = p_bug, p_fix / suspects
    if workflow == "one-shot":
        return 1 - p
    if workflow == "best-of-N":
        return 1 - p ** budget
    if workflow == "iterative":
        return 1 - p * (1 - q) ** (budget - 1)
    gens = max(1, budget // population)
    return 1 - p ** population * (p * (1 - q) ** (population - 1)) ** (gens - 1)
