"""Bug classes as edits of the oracle kernels' SOURCE TEXT (the "model"'s mistakes).

Each bug class is a list of regular-expression edits applied to an oracle kernel's source
(``icml26.kernels.tritongym_ops.kernel_source``).  A class applies to an operator exactly when
one of its edits matches that operator's source (no hand-written applicability table): the
result is the 33 (operator, bug) mutants of :func:`mutant_pairs`.

* ``mask_dropped``: every ``mask=<name>`` (and its ``other=``) removed from ``tl.load`` /
  ``tl.store`` -> out-of-bounds reads and writes on a shape whose size is not a multiple of the
  block;
* ``off_by_one``: every bound ``< n_...`` becomes ``<= n_...`` -> one element too many;
* ``no_max_sub``: softmax without subtracting the row max -> ``exp`` overflows on large logits;
* ``wrong_eps``: ``rsqrt(var + eps)`` uses ``eps * 1000`` (1e-2 instead of 1e-5);
* ``wrong_stride``: the row pointer uses ``n_cols`` instead of the row stride (correct only on
  contiguous inputs; for the matmul, B's k-stride);
* ``fp16_acc``: every ``tl.float32`` becomes ``tl.float16`` (loads, accumulators).

``WRONG_EPS_VARIANTS`` is a family of eps mistakes of growing size (the metric's blind spot:
small ones pass at tolerance 1e-2) used by the ``tolerance_matters`` claim only.
"""

from __future__ import annotations

import re

from icml26.kernels.tritongym_ops import OPS, check_op, kernel_source

#: bug class -> [(pattern, replacement)], applied with ``re.subn`` in order
BUG_EDITS: dict[str, list[tuple[str, str]]] = {
    "mask_dropped": [(r",\s*mask=\w+(?:,\s*other=[-\w.]+)?", "")],
    "off_by_one": [(r"< (n_\w+)", r"<= \1")],
    "no_max_sub": [(r"x - tl\.max\(x, axis=0\)", "x")],
    "wrong_eps": [(r"\(var \+ eps\)", "(var + eps * 1000.0)")],
    "wrong_stride": [(r"\* stride_xm\b", "* n_cols"), (r"\* stride_bk\b", "* n_cols")],
    "fp16_acc": [(r"tl\.float32\b", "tl.float16")],
}
BUGS = tuple(BUG_EDITS)

#: human-readable names for figures
BUG_LABELS = {"mask_dropped": "mask dropped", "off_by_one": "off-by-one bound",
              "no_max_sub": "no max subtraction", "wrong_eps": "wrong eps",
              "wrong_stride": "wrong stride", "fp16_acc": "fp16 accumulation"}

#: the wrong-eps family for ``tolerance_matters``: name -> edits
WRONG_EPS_VARIANTS: dict[str, list[tuple[str, str]]] = {
    "eps x2": [(r"\(var \+ eps\)", "(var + eps * 2.0)")],
    "eps x10": [(r"\(var \+ eps\)", "(var + eps * 10.0)")],
    "eps x100": [(r"\(var \+ eps\)", "(var + eps * 100.0)")],
    "eps x1000": BUG_EDITS["wrong_eps"],
    "eps outside sqrt": [(r"tl\.rsqrt\(var \+ eps\)", "1.0 / (tl.sqrt(var) + eps)")],
}


def apply_edits(src: str, edits: list[tuple[str, str]]) -> tuple[str, int]:
    """``src`` with every edit applied, and the number of replacements made."""
    total = 0
    for pattern, repl in edits:
        src, n = re.subn(pattern, repl, src)
        total += n
    return src, total


def mutate(src: str, bug: str) -> str:
    """``src`` with bug class ``bug`` injected; ``ValueError`` when it does not apply."""
    if bug not in BUG_EDITS:
        raise ValueError(f"bug must be one of {BUGS}, got {bug!r}")
    out, n = apply_edits(src, BUG_EDITS[bug])
    if n == 0:
        raise ValueError(f"bug {bug!r} does not apply to this source (no edit matched)")
    return out


def applicable(op: str) -> tuple[str, ...]:
    """The bug classes whose edits match ``op``'s oracle source, in ``BUGS`` order."""
    check_op(op)
    src = kernel_source(op)
    return tuple(b for b in BUGS if apply_edits(src, BUG_EDITS[b])[1] > 0)


def mutant_pairs(ops: tuple[str, ...] = OPS) -> list[tuple[str, str]]:
    """Every applicable (operator, bug class) pair."""
    return [(op, bug) for op in ops for bug in applicable(op)]


def source_for(op: str, bug: str | None = None) -> str:
    """The oracle source of ``op`` (``bug=None``) or its mutant with ``bug`` injected."""
    src = kernel_source(op)
    return src if bug is None else mutate(src, bug)


def eps_variant_source(op: str, variant: str) -> str:
    """``op``'s source with a wrong-eps variant (``WRONG_EPS_VARIANTS``)."""
    if variant not in WRONG_EPS_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(WRONG_EPS_VARIANTS)}, got {variant!r}")
    out, n = apply_edits(kernel_source(op), WRONG_EPS_VARIANTS[variant])
    if n == 0:
        raise ValueError(f"variant {variant!r} does not apply to {op!r}")
    return out


def eps_ops() -> tuple[str, ...]:
    """The operators with an eps (the wrong-eps family applies to them)."""
    return tuple(op for op in OPS if "wrong_eps" in applicable(op))
