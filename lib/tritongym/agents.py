"""The stand-in "model" and the agent workflows of mini-TritonGym (no LLM runs here).

The model (reconstructed, not the paper's): asked for operator ``op`` it returns the oracle
kernel with probability ``1 - p_bug`` and otherwise the oracle with ONE bug class drawn
uniformly from those that apply to ``op`` (``bugs.applicable``).  A candidate is therefore an
``(op, bug | None)`` pair whose ``verify`` result was measured once by really compiling and
running its source (``experiments.verify_table``).

Repair (fixed before any result of this version was seen; CLAIMS_VERSION 2): shown
``verify``'s feedback for a failing candidate, the model suspects the bug classes the first
failing shape is designed to probe (``Shape.probes``: the odd-tail shape probes masks and
bounds, the stress shape range, precision, eps and strides; a failure on the regular shape
localises nothing) and picks one suspect uniformly.  Then, with independent draws:

1. if the pick is one of the candidate's bugs, it is removed with probability ``p_fix``;
2. with probability ``p_break`` the edit INTRODUCES a bug: a class drawn uniformly from the
   applicable classes the candidate does not have (a repair rewrites code and can break it;
   ``p_break = 0`` is the earlier remove-only model, draw for draw).

With ``feedback="pass-fail"`` verify says only pass or fail, so every applicable class is a
suspect.  A candidate is therefore a set of bug classes (``()``: the oracle).  Only single-bug
sources are compiled and verified (``experiments.verify_table``); a candidate with several
bugs is scored by composition: it passes only if each of its bugs alone passes, its max error
is the largest of theirs and its first failing shape the earliest of theirs (an assumption:
two bugs are taken never to cancel).

Workflows (budget = verify calls = model calls):
* ``one-shot``: one sample, submitted as is;
* ``iterative`` (T turns): sample, then up to T - 1 repairs while verify fails;
* ``best-of-N``: up to N independent samples, the first that passes verify is submitted
  (blind resampling: verify's feedback is used only as pass/fail; at N = T it spends the same
  number of model calls as iterative refinement);
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

Candidate = tuple  # sorted bug classes; () is the oracle


def bugs_of(cand: str | tuple | None) -> tuple[str, ...]:
    """A candidate as its sorted tuple of bug classes (None or ``()``: the oracle; a string:
    one bug)."""
    if cand is None:
        return ()
    if isinstance(cand, str):
        return (cand,)
    return tuple(sorted(cand))


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
    p_break: float = 0.0  # chance a repair introduces a bug (0: the remove-only model)

    def __post_init__(self):
        for name in ("p_bug", "p_fix", "p_break"):
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

    def _results(self, op: str, cand) -> list[VerifyResult]:
        return [self.table[(op, b)] for b in bugs_of(cand) or (None,)]

    def passes(self, op: str, cand) -> bool:
        return all(r.passed(self.tol, self.kinds) for r in self._results(op, cand))

    def error(self, op: str, cand) -> float:
        return max(r.max_err(self.kinds) for r in self._results(op, cand))

    def first_failure_shape(self, op: str, cand) -> str | None:
        """The name of the earliest test shape (in ``SHAPES[op]`` order) on which one of the
        candidate's bugs fails verify; None when it passes."""
        failing = {f.shape for r in self._results(op, cand)
                   if (f := r.first_failure(self.tol, self.kinds)) is not None}
        return next((s.name for s in SHAPES[op] if s.name in failing),
                    next(iter(failing), None))

    def suspects(self, op: str, cand) -> tuple[str, ...]:
        """The bug classes the model suspects after verify's feedback on a failure."""
        classes = self.applicable[op]
        if self.feedback == "pass-fail":
            return classes
        first = self.first_failure_shape(op, cand)
        probes = next((s.probes for s in SHAPES[op] if s.name == first), ())
        narrowed = tuple(c for c in classes if c in probes)
        return narrowed or classes

    def repair(self, op: str, cand, rng: np.random.Generator) -> str | tuple | None:
        """One repair turn on a failing candidate (see the module docstring): the result is
        the oracle (None), one bug class (a string) or several (a sorted tuple)."""
        have = set(bugs_of(cand))
        suspects = self.suspects(op, cand)
        pick = suspects[int(rng.integers(len(suspects)))]
        if pick in have and rng.random() < self.p_fix:
            have.discard(pick)
        if self.p_break > 0 and rng.random() < self.p_break:
            free = [c for c in self.applicable[op] if c not in have]
            if free:
                have.add(free[int(rng.integers(len(free)))])
        out = tuple(sorted(have))
        return None if not out else out[0] if len(out) == 1 else out


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
    remove-only repair (``p_break = 0``) that succeeds with ``q = p_fix / suspects`` per
    turn::

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
