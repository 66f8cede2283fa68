"""Analyses of ``icml26.function_vectors`` that act on a trained model (no configs, no cache).

Todd et al.'s causal indirect effect (batched over heads on a cached prefix), the final-token
interventions, function vectors and sub-FVs, the exact attention-block decomposition, the
additive fits, attention masses per demonstration, the paired permutation test, and the QK/V
hybrids. Shapes: ``B`` prompts, ``T`` tokens, ``L`` layers, ``H`` heads, ``dh`` head size,
``D`` model width, ``S = 6`` demonstration slots. See :mod:`icml26.function_vectors`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from icml26.function_vectors_model import (
    KIND_INFORMATIVE,
    KIND_UNINFORMATIVE,
    MAX_SHOTS,
    N_VALUES,
    FVTransformer,
    HeadPatch,
    Prompts,
    Record,
    attention_mask,
    compact,
    make_prompts,
    other_tasks,
    tasks_for,
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
    head (the reference; ``benchmarks/function_vectors_cie.csv`` records the ratios).
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


def rank_heads(aie: torch.Tensor) -> list[tuple[int, int]]:
    """Heads by SIGNED AIE, largest first (layer-0 heads have negative AIE: patching them
    erases x_q, so ranking by |AIE| would be wrong)."""
    order = torch.argsort(aie.flatten(), descending=True, stable=True)
    return [(int(i) // aie.shape[1], int(i) % aie.shape[1]) for i in order]


def fv_vector(model: FVTransformer, means: torch.Tensor, heads) -> torch.Tensor:
    """Todd et al.'s FV per task: ``sum_h W_O^h mean_h``, ``[K, D]``."""
    out = 0
    for layer, head in heads:
        out = out + means[:, layer, head] @ model.blocks[layer].w_o()[head]
    return out


def intervene(model: FVTransformer, prompts: Prompts, means: torch.Tensor, heads,
              kind: str = "replace", source_task: torch.Tensor | None = None, scale: float = 1.0,
              layer: int | None = None, generator: torch.Generator | None = None,
              prefix: Prefix | None = None) -> torch.Tensor:
    """Logits ``[B, V]`` after an intervention at the final token.

    ``replace``: the ``heads``' outputs := ``scale * mean[source_task]`` (default: the prompt's
    own task); ``other_task`` is ``replace`` with a random other task's mean; ``random``:
    each head's output := a random vector with the norm of its task mean; ``add``: Todd's FV
    ``scale * sum_h W_O^h mean_h`` added to the residual after ``layer`` (default: the FV heads'
    last layer); ``add_random``: a random vector of the FV's norm added there instead.
    Only the final token is recomputed, on ``prefix`` (an unpatched run of ``prompts``).
    """
    b = len(prompts)
    n_layers, n_heads, dh = means.shape[1:]
    if kind not in ("replace", "other_task", "random", "add", "add_random"):
        raise ValueError(f"intervention must be one of {INTERVENTIONS + ('add_random',)}, "
                         f"got {kind!r}")
    for layer_, head_ in heads:
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


def fv_of(model: FVTransformer, prompts: Prompts, heads, isolate_blocks: bool = False
          ) -> torch.Tensor:
    """``FV(P) = sum_{h in heads} W_O^h z_h(P)`` at the final token, ``[B, D]``."""
    _, z = final_state(model, prompts, isolate_blocks)
    out = 0
    for layer, head in heads:
        out = out + z[:, layer, head] @ model.blocks[layer].w_o()[head]
    return out


def sub_fvs(model: FVTransformer, prompts: Prompts, heads) -> torch.Tensor:
    """Non-contextualised sub-FVs ``[B, S, D]``: the FV of each 1-shot prompt ``[e_i; x_q]``
    (slot i alone at its own position; zeros for absent slots)."""
    b, s = prompts.kinds.shape
    out = torch.zeros(b, s, model.cfg.d_model)
    for i in range(s):
        keep = torch.zeros(s, dtype=torch.bool)
        keep[i] = True
        rows = prompts.present[:, i]
        if rows.any():
            sub = prompts.with_slots(keep)
            out[rows, i] = fv_of(model, subset(sub, rows),
                                 heads)
    return out


def block_decomposition(model: FVTransformer, prompts: Prompts, layer: int, head: int
                        ) -> torch.Tensor:
    """``[B, S + 1, D]``: ``sum_{t in B_i} a_t v_t W_O^h`` per demonstration slot, and the
    query positions' term last; their sum is the head's output ``W_O^h z_h`` exactly."""
    with torch.no_grad():
        _, rec = model(prompts.tokens, record=True)
        a = rec.attn[layer][:, head, -1]  # [B, T]
        v = rec.v[layer][:, :, head]  # [B, T, dh]
        contrib = (a[..., None] * v) @ model.blocks[layer].w_o()[head]  # [B, T, D]
        return by_slot(contrib, torch.arange(contrib.shape[1]).expand(a.shape), query=True)


def r_squared(y: torch.Tensor, pred: torch.Tensor) -> float:
    return float(1 - ((y - pred) ** 2).sum() / ((y - y.mean(0)) ** 2).sum().clamp_min(1e-12))


def fit_additive(fv: torch.Tensor, subs: torch.Tensor, weights: str = "shared", fit=None
                 ) -> dict:
    """Fit ``FV ~ sum_i alpha_i sub_i + c``. ``fv [N, D]``, ``subs [N, n, D]``.

    ``shared``: one ``alpha`` per position and an intercept vector, least squares on the
    ``fit`` rows (default: the first half), R^2 on the rest. ``uniform``: ``alpha = 1/n`` and
    the fitted intercept. ``per_prompt``: a separate ``alpha`` for every prompt (no intercept:
    n free coefficients in D dimensions, the non-discriminative fit).
    """
    n_rows, n, d = subs.shape
    fit = torch.arange(n_rows) < n_rows // 2 if fit is None else fit
    test = ~fit
    f64, s64 = fv.double(), subs.double()
    if weights == "shared":
        fc = f64[fit] - f64[fit].mean(0)
        sc = s64[fit] - s64[fit].mean(0)
        x = sc.permute(0, 2, 1).reshape(-1, n)  # [N*D, n]
        alpha = torch.linalg.lstsq(x, fc.reshape(-1, 1)).solution[:, 0]
        c = f64[fit].mean(0) - torch.einsum("i,id->d", alpha, s64[fit].mean(0))
        pred = torch.einsum("i,pid->pd", alpha, s64[test]) + c
    elif weights == "uniform":
        alpha = torch.full((n,), 1.0 / n, dtype=torch.float64)
        c = (f64[fit] - s64[fit].mean(1)).mean(0)
        pred = s64[test].mean(1) + c
    elif weights == "per_prompt":
        a = s64[test].transpose(1, 2)  # [N, D, n]
        alpha = torch.linalg.lstsq(a, f64[test][..., None]).solution[..., 0]  # [N, n]
        pred = torch.einsum("pi,pid->pd", alpha, s64[test])
        alpha = alpha.mean(0)
    else:
        raise ValueError(f"weights must be 'shared', 'uniform' or 'per_prompt', got {weights!r}")
    return {"r2": r_squared(f64[test], pred), "alpha": alpha.float()}


def by_slot(values: torch.Tensor, positions: torch.Tensor, query: bool = False
             ) -> torch.Tensor:
    """Sum ``values [B, T, ...]`` over the positions of each demonstration slot:
    ``[B, S, ...]`` (``[B, S + 1, ...]`` with the query positions last when ``query``)."""
    slot = torch.where(positions >= 3 * MAX_SHOTS, MAX_SHOTS, positions // 3)  # [B, T]
    out = values.new_zeros(values.shape[0], MAX_SHOTS + 1, *values.shape[2:])
    idx = slot.reshape(*slot.shape, *([1] * (values.ndim - 2))).expand_as(values)
    out.scatter_add_(1, idx, values)
    return out if query else out[:, :MAX_SHOTS]


def fv_head_masses(model: FVTransformer, prompts: Prompts, heads, isolate_blocks: bool = False
                   ) -> torch.Tensor:
    """Mean over the FV heads of the attention mass per slot at the query, ``[B, S]``."""
    _, rec = run(model, prompts, isolate_blocks, record=True)
    return torch.stack([by_slot(rec.attn[layer][:, head, -1], rec.positions)
                        for layer, head in heads]).mean(0)


def isolated_masses(model: FVTransformer, prompts: Prompts, heads) -> torch.Tensor:
    """Mass on slot i when slot i is the only demonstration (1-shot, same slot), ``[B, S]``
    (zero for absent slots)."""
    b, s = prompts.kinds.shape
    out = torch.zeros(b, s)
    for i in range(s):  # one compacted 1-shot batch per slot
        keep = torch.zeros(s, dtype=torch.bool)
        keep[i] = True
        rows = prompts.present[:, i]
        if rows.any():
            sub = prompts.with_slots(keep)
            sub = subset(sub, rows)
            out[rows, i] = fv_head_masses(model, sub, heads)[:, i]
    return out



def matched_ratio(mass: torch.Tensor, kinds: torch.Tensor) -> tuple[float, list]:
    """Informative / uninformative mean mass at each slot, and their geometric mean over the
    slots where both kinds occur (comparisons within positions: recency is not a confound)."""
    per_slot = []
    for j in range(kinds.shape[1]):
        inf, unf = kinds[:, j] == KIND_INFORMATIVE, kinds[:, j] == KIND_UNINFORMATIVE
        if inf.any() and unf.any():
            per_slot.append(float(mass[inf, j].mean() / mass[unf, j].mean().clamp_min(1e-12)))
        else:
            per_slot.append(math.nan)
    valid = [r for r in per_slot if not math.isnan(r)]
    return (math.exp(sum(math.log(max(r, 1e-12)) for r in valid) / len(valid))
            if valid else math.nan), per_slot


def paired_permutation_test(stat: torch.Tensor, permutations: int,
                            generator: torch.Generator) -> float:
    """One-sided sign-flip test of ``mean(stat) > 0`` for paired differences ``stat [N]``:
    ``p = (1 + #{flips with mean >= observed}) / (1 + permutations)``."""
    obs = stat.mean()
    signs = torch.randint(0, 2, (permutations, stat.numel()), generator=generator) * 2 - 1
    null = (signs.to(stat.dtype) * stat[None]).mean(1)
    return float((1 + (null >= obs).sum()) / (1 + permutations))


def hybrid_head_outputs(model: FVTransformer, prompts: Prompts, heads) -> dict:
    """Final-token outputs ``{mode: [B, L, H, dh]}`` of the FV heads for the four hybrids.

    Two runs: contextualised (the prompt) and isolated (block-diagonal mask: each
    demonstration block processed alone; positions unchanged). At each FV head the query
    vector is the contextualised one, and the query positions' keys/values are contextual in
    all four modes; only the demonstration positions' keys (QK) and values (V) switch:
    ``both = softmax(q k_ctx) v_ctx`` (the real output), ``neither = softmax(q k_iso) v_iso``,
    ``qk = softmax(q k_ctx) v_iso``, ``v = softmax(q k_iso) v_ctx``.
    """
    _, ctx = run(model, prompts, record=True)
    _, iso = run(model, prompts, isolate_blocks=True, record=True)
    allowed = ctx.allowed_last  # [B, T]
    demo = (ctx.positions < 3 * MAX_SHOTS)[:, :, None]
    z0 = torch.stack([z[:, -1] for z in ctx.z], 1)
    out = {m: z0.clone() for m in DECOMPOSITIONS}
    dh = model.cfg.d_head
    for layer, head in heads:
        q = ctx.q[layer][:, -1, head]  # [B, dh]
        kc, vc = ctx.k[layer][:, :, head], ctx.v[layer][:, :, head]
        ki = torch.where(demo, iso.k[layer][:, :, head], kc)
        vi = torch.where(demo, iso.v[layer][:, :, head], vc)

        a_c, a_i = (torch.softmax((torch.einsum("bd,btd->bt", q, k) / math.sqrt(dh))
                                  .masked_fill(~allowed, -math.inf), -1) for k in (kc, ki))
        for mode, a, v in (("both", a_c, vc), ("neither", a_i, vi), ("qk", a_c, vi),
                           ("v", a_i, vc)):
            out[mode][:, layer, head] = torch.einsum("bt,btd->bd", a, v)
    return out


def hybrid_quality(model: FVTransformer, prompts: Prompts, heads, hybrids: dict) -> dict:
    """FV quality of each hybrid: accuracy and mean p(correct) when it replaces the FV heads'
    outputs in zero-shot prompts of the same task and query."""
    zero = prompts.with_slots(torch.zeros(MAX_SHOTS, dtype=torch.bool))
    mask = torch.zeros(len(prompts), *hybrids["both"].shape[1:3], dtype=torch.bool)
    for layer, head in heads:
        mask[:, layer, head] = True
    out = {}
    pre = Prefix.of(model, zero)
    out["zero-shot"] = (accuracy_of(pre.logits, zero.target),
                        float(p_correct(pre.logits, zero.target).mean()))
    for mode, z in hybrids.items():
        logits = pre.patched(model, head_patch=HeadPatch(mask, z))
        out[mode] = (accuracy_of(logits, zero.target), float(p_correct(logits, zero.target).mean()))
    return out


def qkv_panel_prompts(panel: str, count: int, generator: torch.Generator) -> Prompts:
    """``ambiguous``: five ``Z`` demos, then one informative demo (last slot);
    ``informative``: six informative demos."""
    if panel == "ambiguous":
        kinds = torch.tensor([KIND_UNINFORMATIVE] * (MAX_SHOTS - 1) + [KIND_INFORMATIVE])
    elif panel == "informative":
        kinds = torch.full((MAX_SHOTS,), KIND_INFORMATIVE)
    else:
        raise ValueError(f"panel must be 'ambiguous' or 'informative', got {panel!r}")
    return make_prompts(tasks_for(count, generator), MAX_SHOTS, generator, kinds=kinds)


def shift_distribution(logits: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """Mean probability that the answer is ``(x_q + j) mod 16`` for ``j = 0..15`` (``[16]``):
    the shift the model applies; the true task is a peak at ``j = k``."""
    probs = torch.softmax(logits, -1)[:, :N_VALUES]
    idx = (query[:, None] + torch.arange(N_VALUES)[None]) % N_VALUES
    return probs.gather(1, idx).mean(0)


