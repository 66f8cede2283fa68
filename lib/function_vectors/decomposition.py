"""The paper's decomposition on a trained toy (:mod:`icml26.function_vectors`), no configs,
no cache: FVs and sub-FVs, the exact attention-block identity, the additive fits, attention
masses per demonstration (in context and isolated), the paired permutation test, and the QK/V
hybrids with their FV quality. Shapes as in :mod:`icml26.function_vectors.interventions`.
"""

from __future__ import annotations

import math

import torch

from icml26.function_vectors.interventions import (
    DECOMPOSITIONS,
    Prefix,
    accuracy_of,
    final_state,
    p_correct,
    run,
    subset,
)
from icml26.function_vectors.model import FVTransformer, HeadPatch
from icml26.function_vectors.prompts import (
    KIND_INFORMATIVE,
    KIND_UNINFORMATIVE,
    MAX_SHOTS,
    Prompts,
    make_prompts,
    tasks_for,
)


def fv_of(model: FVTransformer, prompts: Prompts, heads, isolate_blocks: bool = False
          ) -> torch.Tensor:
    """``FV(P) = sum_{h in heads} W_O^h z_h(P)`` at the final token, ``[B, D]``."""
    _, z = final_state(model, prompts, isolate_blocks)
    out = 0
    with torch.no_grad():
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
    return (1 + int((null >= obs).sum())) / (1 + permutations)  # exact, not float32


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


def hybrid_quality(model: FVTransformer, prompts: Prompts, heads, hybrids: dict,
                   context=(), context_value: torch.Tensor | None = None) -> dict:
    """FV quality of each hybrid: accuracy and mean p(correct) when it replaces the FV heads'
    outputs in zero-shot prompts of the same task and query.

    ``context`` heads (with ``context_value [L, H, dh]``, the task-agnostic mean) are patched
    in every mode: the zero-shot context control; ``"context"`` then scores it alone."""
    zero = prompts.with_slots(torch.zeros(MAX_SHOTS, dtype=torch.bool))
    mask = torch.zeros(len(prompts), *hybrids["both"].shape[1:3], dtype=torch.bool)
    for layer, head in heads:
        mask[:, layer, head] = True
    ctx_mask = torch.zeros_like(mask)
    for layer, head in context:
        ctx_mask[:, layer, head] = (layer, head) not in heads
    out = {}
    pre = Prefix.of(model, zero)
    out["zero-shot"] = (accuracy_of(pre.logits, zero.target),
                        float(p_correct(pre.logits, zero.target).mean()))
    modes = dict(hybrids)
    if ctx_mask.any():
        modes = {"context": torch.zeros_like(hybrids["both"]), **hybrids}
    for mode, z in modes.items():
        z = torch.where(ctx_mask[..., None], context_value, z) if ctx_mask.any() else z
        patch = HeadPatch(ctx_mask if mode == "context" else mask | ctx_mask, z)
        logits = pre.patched(model, head_patch=patch)
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
