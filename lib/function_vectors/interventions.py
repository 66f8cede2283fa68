"""Todd et al.'s pipeline on a trained toy (:mod:`icml26.function_vectors`), no configs, no
cache: forward passes on (compacted) prompts, the cached prefix that every final-token
intervention re-uses, the causal indirect effect (batched over heads), the head ranking, the
FV and the interventions. Shapes: ``B`` prompts, ``T`` tokens, ``L`` layers, ``H`` heads,
``dh`` head size, ``D`` model width, ``S = 6`` demonstration slots.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from icml26.function_vectors.model import FVTransformer, HeadPatch, Record
from icml26.function_vectors.prompts import (
    N_VALUES,
    Prompts,
    attention_mask,
    compact,
    other_tasks,
)

INTERVENTIONS = ("replace", "add", "other_task", "random")
CORRUPTIONS = ("zero_shot", "shuffled")
DECOMPOSITIONS = ("neither", "qk", "v", "both")
FIELDS = ("tokens", "kinds", "task", "query", "target", "xs", "ys")  # of Prompts


def run(model: FVTransformer, prompts: Prompts, isolate_blocks: bool = False,
        record: bool = False, **kw):
    """Forward pass on ``prompts`` (final-token logits ``[B, V]``), on the compacted prompt
    (absent slots dropped, positions kept) when every prompt holds the same number of
    demonstrations. ``isolate_blocks`` processes each demonstration block alone."""
    try:
        tokens, positions = compact(prompts)
    except ValueError:
        tokens, positions = prompts.tokens, None
    allowed = attention_mask(tokens, isolate_blocks, positions)
    with torch.no_grad():
        out = model(tokens, allowed=allowed, record=record, **kw,
                    positions=positions if model.cfg.positions == "slots" else None)
    if record:
        logits, rec = out
        rec.positions = (positions if positions is not None else
                         torch.arange(tokens.shape[1]).expand_as(tokens))
        rec.allowed_last = allowed[:, -1]
        return logits, rec
    return out


def final_state(model: FVTransformer, prompts: Prompts, isolate_blocks: bool = False):
    """Logits ``[B, V]`` and head outputs at the final token ``z [B, L, H, dh]``."""
    logits, rec = run(model, prompts, isolate_blocks, record=True)
    return logits, torch.stack([z[:, -1] for z in rec.z], 1)


@dataclass
class Prefix:
    """An unpatched run of some prompts, re-used by every final-token intervention on them
    (see :meth:`FVTransformer.forward_last`)."""

    record: Record
    logits: torch.Tensor

    @classmethod
    def of(cls, model: FVTransformer, prompts: Prompts) -> Prefix:
        logits, rec = run(model, prompts, record=True)
        return cls(rec, logits)

    def patched(self, model: FVTransformer, rows=None, head_patch=None, resid_add=None
                ) -> torch.Tensor:
        with torch.no_grad():
            return model.forward_last(self.record, self.record.allowed_last, rows, head_patch,
                                      resid_add)


def subset(prompts: Prompts, rows: torch.Tensor) -> Prompts:
    """The prompts selected by ``rows`` (a bool mask or indices)."""
    return Prompts(*(getattr(prompts, f)[rows] for f in FIELDS))


def p_correct(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.softmax(logits, -1).gather(1, target[:, None])[:, 0]


def causal_indirect_effect(model: FVTransformer, means: torch.Tensor, prompts: Prompts,
                           mode: str = "prefix") -> torch.Tensor:
    """Signed AIE per head ``[L, H]``: mean over prompts of ``p(correct)`` with head (l, h)'s
    final-token output replaced by its task mean, minus ``p(correct)`` unpatched.

    ``mode="prefix"`` (default): the batch is tiled ``L*H`` times, one head patched per tile,
    and only the final token is recomputed on the cached prefix - one batched pass.
    ``"batched"``: the same tiling through full forwards; ``"looped"``: one full forward per
    head (the reference; ``benchmarks/function_vectors/function_vectors_cie.csv`` records the
    ratios).
    """
    n_layers, n_heads = means.shape[1], means.shape[2]
    b = len(prompts)
    reps = n_layers * n_heads
    prefix = Prefix.of(model, prompts)
    base = p_correct(prefix.logits, prompts.target)
    if mode in ("prefix", "batched"):
        rows = torch.arange(b).repeat(reps)
        mask = torch.zeros(reps * b, n_layers, n_heads, dtype=torch.bool)
        which = torch.arange(reps).repeat_interleave(b)
        mask[torch.arange(reps * b), which // n_heads, which % n_heads] = True
        patch = HeadPatch(mask, means[prompts.task[rows] - 1])
        if mode == "prefix":
            logits = prefix.patched(model, rows, patch)
        else:
            logits = run(model, prompts.tile(reps), head_patch=patch)
        pc = p_correct(logits, prompts.target[rows])
        return (pc.view(reps, b) - base[None]).mean(1).view(n_layers, n_heads)
    if mode != "looped":
        raise ValueError(f"mode must be 'prefix', 'batched' or 'looped', got {mode!r}")
    aie = torch.zeros(n_layers, n_heads)
    for layer in range(n_layers):
        for head in range(n_heads):
            mask = torch.zeros(b, n_layers, n_heads, dtype=torch.bool)
            mask[:, layer, head] = True
            pc = p_correct(run(model, prompts, head_patch=HeadPatch(mask, means[
                prompts.task - 1])), prompts.target)
            aie[layer, head] = (pc - base).mean()
    return aie


def rank_heads(aie: torch.Tensor, by: str = "signed") -> list[tuple[int, int]]:
    """Heads by SIGNED AIE, largest first (layer-0 heads have negative AIE: patching them
    erases x_q, so ranking by |AIE| - ``by="abs"``, the pitfall - would be wrong)."""
    if by not in ("signed", "abs"):
        raise ValueError(f"by must be 'signed' or 'abs', got {by!r}")
    order = torch.argsort(aie.abs().flatten() if by == "abs" else aie.flatten(),
                          descending=True, stable=True)
    return [(int(i) // aie.shape[1], int(i) % aie.shape[1]) for i in order]


def joint_indirect_effect(model: FVTransformer, means: torch.Tensor, prompts: Prompts, heads,
                          prefix: Prefix | None = None) -> float:
    """The AIE of ``heads`` patched TOGETHER, as a function vector acts: mean over prompts of
    ``p(correct)`` with every head in ``heads`` := its task mean, minus ``p(correct)``
    unpatched. Redundant heads move little one at a time (:func:`causal_indirect_effect`)
    but carry the task jointly."""
    prefix = Prefix.of(model, prompts) if prefix is None else prefix
    base = p_correct(prefix.logits, prompts.target)
    logits = intervene(model, prompts, means, heads, prefix=prefix)
    return float((p_correct(logits, prompts.target) - base).mean())


def context_heads(means: torch.Tensor, heads) -> list[tuple[int, int]]:
    """The layer-0 heads outside ``heads``: the ones that write "demonstrations present" at
    the final token (the zero-shot context control patches them)."""
    return [(0, h) for h in range(means.shape[2]) if (0, h) not in heads]


def context_values(means: torch.Tensor) -> torch.Tensor:
    """The task-agnostic n-shot mean ``[L, H, dh]``: the mean of the per-task means (tasks are
    balanced, so the mean over every clean prompt), carrying no task."""
    return means.mean(0)


def fv_vector(model: FVTransformer, means: torch.Tensor, heads) -> torch.Tensor:
    """Todd et al.'s FV per task: ``sum_h W_O^h mean_h``, ``[K, D]``."""
    out = 0
    for layer, head in heads:
        out = out + means[:, layer, head] @ model.blocks[layer].w_o()[head]
    return out


def intervene(model: FVTransformer, prompts: Prompts, means: torch.Tensor, heads,
              kind: str = "replace", source_task: torch.Tensor | None = None, scale: float = 1.0,
              layer: int | None = None, generator: torch.Generator | None = None,
              prefix: Prefix | None = None, context=()) -> torch.Tensor:
    """Logits ``[B, V]`` after an intervention at the final token.

    ``replace``: the ``heads``' outputs := ``scale * mean[source_task]`` (default: the prompt's
    own task); ``other_task`` is ``replace`` with a random other task's mean; ``random``:
    each head's output := a random vector with the norm of its task mean; ``add``: Todd's FV
    ``scale * sum_h W_O^h mean_h`` added to the residual after ``layer`` (default: the FV heads'
    last layer); ``add_random``: a random vector of the FV's norm added there instead.
    ``context`` (replacement kinds only): heads whose outputs := the task-agnostic mean
    (:func:`context_values`), the disclosed "demonstrations present" control of zero-shot
    prompts. Only the final token is recomputed, on ``prefix`` (an unpatched run of
    ``prompts``).
    """
    b = len(prompts)
    n_layers, n_heads, dh = means.shape[1:]
    if kind not in ("replace", "other_task", "random", "add", "add_random"):
        raise ValueError(f"intervention must be one of {INTERVENTIONS + ('add_random',)}, "
                         f"got {kind!r}")
    for layer_, head_ in (*heads, *context):
        if not (0 <= layer_ < n_layers and 0 <= head_ < n_heads):
            raise ValueError(f"head ({layer_}, {head_}) out of range: layers 0..{n_layers - 1}, "
                             f"heads 0..{n_heads - 1}")
    src = prompts.task if source_task is None else source_task
    prefix = Prefix.of(model, prompts) if prefix is None else prefix
    if kind == "other_task":
        src = other_tasks(prompts.task, generator or torch.Generator().manual_seed(0))
    with torch.no_grad():
        if kind in ("replace", "other_task", "random"):
            mask = torch.zeros(b, n_layers, n_heads, dtype=torch.bool)
            for layer_, head_ in heads:
                mask[:, layer_, head_] = True
            values = scale * means[src - 1]
            if kind == "random":
                g = generator or torch.Generator().manual_seed(0)
                r = torch.randn(values.shape, generator=g)
                values = r / r.norm(dim=-1, keepdim=True) * values.norm(dim=-1, keepdim=True)
            for layer_, head_ in context:
                if (layer_, head_) not in heads:
                    mask[:, layer_, head_] = True
                    values[:, layer_, head_] = context_values(means)[layer_, head_]
            return prefix.patched(model, head_patch=HeadPatch(mask, values))
        fv = scale * fv_vector(model, means, heads)[src - 1]  # [B, D]
        if kind == "add_random":
            g = generator or torch.Generator().manual_seed(0)
            r = torch.randn(fv.shape, generator=g)
            fv = r / r.norm(dim=-1, keepdim=True) * fv.norm(dim=-1, keepdim=True)
        at = max(h[0] for h in heads) if layer is None else layer
        if not 0 <= at < n_layers:
            raise ValueError(f"layer must be in 0..{n_layers - 1}, got {at}")
        add = torch.zeros(b, n_layers, model.cfg.d_model)
        add[:, at] = fv
        return prefix.patched(model, resid_add=add)


def accuracy_of(logits: torch.Tensor, target: torch.Tensor) -> float:
    return float((logits.argmax(-1) == target).float().mean())


def shift_distribution(logits: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """Mean probability that the answer is ``(x_q + j) mod 16`` for ``j = 0..15`` (``[16]``):
    the shift the model applies; the true task is a peak at ``j = k``."""
    probs = torch.softmax(logits, -1)[:, :N_VALUES]
    idx = (query[:, None] + torch.arange(N_VALUES)[None]) % N_VALUES
    return probs.gather(1, idx).mean(0)
