"""Figure data of :mod:`icml26.function_vectors` (data, never plots), cached per (config, seed,
arguments): F1 the head AIE and the interventions, F2 additivity, F3 reweighting, F4 QK vs V.
"""

from __future__ import annotations

import math

import torch

from icml26.function_vectors.decomposition import (
    fit_additive,
    fv_head_masses,
    fv_of,
    hybrid_head_outputs,
    hybrid_quality,
    isolated_masses,
    matched_ratio,
    paired_permutation_test,
    qkv_panel_prompts,
    sub_fvs,
)
from icml26.function_vectors.experiments import (
    FVConfig,
    cached_figure,
    checked_model,
    evaluation_items,
    fv_cached,
    seeded,
)
from icml26.function_vectors.interventions import (
    CORRUPTIONS,
    Prefix,
    accuracy_of,
    context_heads,
    context_values,
    intervene,
    run,
)
from icml26.function_vectors.prompts import (
    KIND_INFORMATIVE,
    KIND_UNINFORMATIVE,
    MAX_SHOTS,
    apply_task,
    make_prompts,
    other_tasks,
    tasks_for,
)


def _figure_cie_data(cfg: FVConfig, seed: int = 0) -> dict:
    """F1 (left): ``{"aie": [L, H], "ranking", "top": FV heads, "joint": joint AIE of the
    top-1..k heads patched together, "top_sum": summed single-head AIE, "share",
    "single_head_ratio"}``."""
    model = checked_model(cfg, seed)
    fv = fv_cached(cfg, seed, model)
    aie = fv["aie"]
    top = fv["ranking"][: cfg.top_k]
    pos = aie.clamp(min=0)
    top_sum = float(sum(aie[h] for h in top))
    others = torch.tensor([abs(float(aie[h])) for h in fv["ranking"][1:]])
    return {"aie": aie, "ranking": fv["ranking"], "top": top, "top_sum": top_sum,
            "joint": fv["joint"],
            "share": float(sum(pos[h] for h in top) / pos.sum().clamp_min(1e-12)),
            "single_head_ratio": float(aie[fv["ranking"][0]]
                                       / torch.quantile(others, 0.9).clamp_min(1e-12))}


def _context_patch(cfg: FVConfig, means, heads) -> dict:
    """Arguments of :func:`intervene` for the zero-shot context control on top of ``heads``:
    the other layer-0 heads get the task-agnostic n-shot mean ("demonstrations present",
    no task). ``cfg.context_control = "task"`` is the pitfall: their task means (it leaks)."""
    ctx = context_heads(means, heads)
    if cfg.context_control == "task":
        return {"heads": [*heads, *ctx]}
    return {"heads": list(heads), "context": ctx}


def _figure_interventions_data(cfg: FVConfig, seed: int = 0) -> dict:
    """F1 (right): accuracy on zero-shot and shuffled 6-shot prompts under each intervention.

    Rows ``{"corruption", "intervention", "accuracy", "gain"}`` (gain over the corrupted
    baseline); the additive variants are evaluated after every layer and the best (largest)
    gain is reported. Zero-shot prompts also get the context control alone and every
    replacement on top of it (``"... + context"``).
    """
    model = checked_model(cfg, seed)
    fv = fv_cached(cfg, seed, model)
    means, ranking = fv["means"], fv["ranking"]
    items = evaluation_items(model, cfg, seed)
    top = ranking[: cfg.top_k]
    rows, by = [], {}
    for corr in CORRUPTIONS:
        p = items[corr]
        g = seeded(seed, 23)
        pre = Prefix.of(model, p)

        def acc(heads, kind="replace", p=p, g=g, pre=pre, **kw):
            return accuracy_of(intervene(model, p, means, heads, kind, generator=g,
                                         prefix=pre, **kw), p.target)

        base = accuracy_of(pre.logits, p.target)
        results = {"baseline": base}
        for k in range(1, cfg.top_k + 1):
            results[f"replace top-{k}"] = acc(ranking[:k])
        results["other-task mean"] = acc(top, "other_task")
        results["random (replace)"] = acc(top, "random")
        for name, kind in (("Todd additive FV", "add"), ("random (add)", "add_random")):
            per_layer = [acc(top, kind, layer=layer_) for layer_ in range(cfg.model.n_layers)]
            results[name] = max(per_layer)
            by[(corr, name + " per layer")] = per_layer
        if corr == "zero_shot":
            results["context control"] = acc(**_context_patch(cfg, means, []))
            for k in range(1, cfg.top_k + 1):
                results[f"replace top-{k} + context"] = acc(
                    **_context_patch(cfg, means, ranking[:k]))
            for name, kind in (("other-task mean", "other_task"), ("random (replace)",
                                                                   "random")):
                results[name + " + context"] = acc(kind=kind, **_context_patch(cfg, means, top))
        for name, a in results.items():
            rows.append({"corruption": corr, "intervention": name, "accuracy": a,
                         "gain": a - base})
            by[(corr, name)] = a - base
    return {"rows": rows, "gain": by, "top": top, "kept": items["kept"],
            "clean": accuracy_of(run(model, items["clean"]), items["clean"].target),
            "context_heads": context_heads(means, top)}


# --------------------------------------------------------------------------- F2: additivity
def _figure_additivity_data(cfg: FVConfig, seed: int = 0, heads=None,
                           p_uninformative: float = 0.0) -> dict:
    """F2: R^2 of the linear model of the FV from sub-FVs, by number of shots.

    Rows ``{"n", "shared", "control", "uniform", "per_prompt", "per_prompt_control",
    "alpha"}`` (``alpha`` by position, first demonstration first). The control replaces each
    demonstration's output by another task's (same inputs), one other task per prompt.
    ``cfg.additivity_weights`` chooses the model scored as "shared" (the pitfall switch).
    """
    model = checked_model(cfg, seed)
    heads = fv_cached(cfg, seed, model)["ranking"][: cfg.top_k] if heads is None else heads
    g = seeded(seed, 29)
    full = make_prompts(tasks_for(cfg.additivity_prompts, g), MAX_SHOTS, g, p_uninformative)
    ctrl = full.with_ys(apply_task(other_tasks(full.task, g), full.xs))
    # a slot's sub-FV does not depend on the other slots, so the n-shot prompts (the last n
    # slots of the same 6-shot prompts) share them
    subs_all, subs_ctrl = sub_fvs(model, full, heads), sub_fvs(model, ctrl, heads)
    rows = []
    for n in cfg.additivity_shots:
        keep = torch.arange(MAX_SHOTS) >= MAX_SHOTS - n
        fv = fv_of(model, full.with_slots(keep), heads)
        subs, subs_c = subs_all[:, keep], subs_ctrl[:, keep]
        main, control = (fit_additive(fv, x, cfg.additivity_weights) for x in (subs, subs_c))
        rows.append({"n": n, "shared": main["r2"], "control": control["r2"],
                     "uniform": fit_additive(fv, subs, "uniform")["r2"],
                     "per_prompt": fit_additive(fv, subs, "per_prompt")["r2"],
                     "per_prompt_control": fit_additive(fv, subs_c, "per_prompt")["r2"],
                     "alpha": main["alpha"].tolist()})
    return {"rows": rows, "heads": heads, "weights": cfg.additivity_weights}


# --------------------------------------------------------------------------- F3: reweighting
def _figure_reweighting_data(cfg: FVConfig, seed: int = 0, heads=None) -> dict:
    """F3: attention mass per demonstration in the FV heads, informative vs ``Z`` demos.

    ``ratio_ctx`` / ``ratio_iso``: matched-slot ratios in context and isolated (1-shot, same
    slot); ``ratio_joint``: isolated *keys* (block-diagonal run) in the same joint softmax,
    which separates contextualisation from softmax competition between blocks. ``p``: paired
    sign-flip test on ``s_p = mean_inf log(m_ctx/m_iso) - mean_unf log(m_ctx/m_iso)`` over
    prompts holding both kinds.
    """
    model = checked_model(cfg, seed)
    heads = fv_cached(cfg, seed, model)["ranking"][: cfg.top_k] if heads is None else heads
    g = seeded(seed, 37)
    p = make_prompts(tasks_for(cfg.reweight_prompts, g), MAX_SHOTS, g,
                     cfg.reweight_p_uninformative)
    ctx = fv_head_masses(model, p, heads)
    iso = isolated_masses(model, p, heads)
    joint = fv_head_masses(model, p, heads, isolate_blocks=True)
    r_ctx, slots_ctx = matched_ratio(ctx, p.kinds)
    r_iso, slots_iso = matched_ratio(iso, p.kinds)
    r_joint, slots_joint = matched_ratio(joint, p.kinds)
    lr = (ctx.clamp_min(1e-9) / iso.clamp_min(1e-9)).log()
    inf, unf = (p.kinds == KIND_INFORMATIVE).float(), (p.kinds == KIND_UNINFORMATIVE).float()
    both = (inf.sum(1) > 0) & (unf.sum(1) > 0)
    stat = ((lr * inf).sum(1) / inf.sum(1).clamp_min(1) - (lr * unf).sum(1)
            / unf.sum(1).clamp_min(1))[both]
    pval = paired_permutation_test(stat.double(), cfg.permutations, seeded(seed, 41))
    rows = []
    for cond, m in (("in context", ctx), ("isolated", iso), ("isolated keys", joint)):
        for kind, name in ((KIND_INFORMATIVE, "informative"), (KIND_UNINFORMATIVE, "Z demo")):
            for j in range(MAX_SHOTS):
                sel = p.kinds[:, j] == kind
                if sel.any():
                    rows.append({"condition": cond, "kind": name, "slot": j,
                                 "mass": float(m[sel, j].mean()), "count": int(sel.sum())})
    return {"rows": rows, "ratio_ctx": r_ctx, "ratio_iso": r_iso, "ratio_joint": r_joint,
            "slots_ctx": slots_ctx, "slots_iso": slots_iso, "slots_joint": slots_joint,
            "p": pval, "n_pairs": int(both.sum()), "heads": heads, "stat_mean": float(
                stat.mean())}


# --------------------------------------------------------------------------- F4: QK vs V
def _figure_qkv_data(cfg: FVConfig, seed: int = 0, heads=None) -> dict:
    """F4: FV quality of the four hybrids in the two panels, each injected into zero-shot
    prompts with the context control (the other layer-0 heads := the task-agnostic mean;
    ``context_control[panel]`` is the accuracy of the control alone).

    Rows ``{"panel", "mode", "accuracy", "p_correct"}``; ``qk_share[panel] = (qk - neither) /
    (both - neither)`` and ``qk_minus_v[panel] = qk - v`` on accuracy.
    """
    model = checked_model(cfg, seed)
    fv = fv_cached(cfg, seed, model)
    means = fv["means"]
    heads = fv["ranking"][: cfg.top_k] if heads is None else heads
    rows, share, qk_minus_v, gap, control = [], {}, {}, {}, {}
    for i, panel in enumerate(("ambiguous", "informative")):
        g = seeded(seed, 43 + i)
        p = qkv_panel_prompts(panel, cfg.hybrid_prompts, g)
        q = hybrid_quality(model, p, heads, hybrid_head_outputs(model, p, heads),
                           context_heads(means, heads), context_values(means))
        control[panel] = q.pop("context")[0]
        for mode, (acc, pc) in q.items():
            rows.append({"panel": panel, "mode": mode, "accuracy": acc, "p_correct": pc})
        gap[panel] = q["both"][0] - q["neither"][0]
        share[panel] = ((q["qk"][0] - q["neither"][0]) / gap[panel]
                        if abs(gap[panel]) > 1e-9 else math.nan)
        qk_minus_v[panel] = q["qk"][0] - q["v"][0]
    return {"rows": rows, "qk_share": share, "qk_minus_v": qk_minus_v, "gap": gap,
            "heads": heads, "context_control": control}


# --------------------------------------------------------------------------- figure data
def figure_cie_data(cfg: FVConfig, seed: int = 0) -> dict:
    """F1 (left): ``{"aie": [L, H], "ranking", "top": FV heads, "top_sum", "share",
    "single_head_ratio"}``."""
    return cached_figure("cie", cfg, seed, lambda: _figure_cie_data(cfg, seed))


def figure_interventions_data(cfg: FVConfig, seed: int = 0) -> dict:
    """F1 (right): accuracy under each intervention (see :func:`_figure_interventions_data`)."""
    return cached_figure("interventions", cfg, seed,
                         lambda: _figure_interventions_data(cfg, seed))


def figure_additivity_data(cfg: FVConfig, seed: int = 0, heads=None,
                           p_uninformative: float = 0.0) -> dict:
    """F2: held-out R^2 of the additive models by shots (see :func:`_figure_additivity_data`)."""
    return cached_figure("additivity", cfg, seed,
                         lambda: _figure_additivity_data(cfg, seed, heads, p_uninformative),
                         heads=heads, p_uninformative=p_uninformative)


def figure_reweighting_data(cfg: FVConfig, seed: int = 0, heads=None) -> dict:
    """F3: attention reweighting (see :func:`_figure_reweighting_data`)."""
    return cached_figure("reweighting", cfg, seed,
                         lambda: _figure_reweighting_data(cfg, seed, heads), heads=heads)


def figure_qkv_data(cfg: FVConfig, seed: int = 0, heads=None) -> dict:
    """F4: QK vs V hybrids (see :func:`_figure_qkv_data`)."""
    return cached_figure("qkv", cfg, seed, lambda: _figure_qkv_data(cfg, seed, heads), heads=heads)
