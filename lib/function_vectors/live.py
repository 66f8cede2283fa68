"""What the dashboard of :mod:`icml26.function_vectors` draws, from forward passes of a trained
model on a few prompts of one task (no cache; each call is a fraction of a second).
"""

from __future__ import annotations

import torch

from icml26.function_vectors.decomposition import (
    by_slot,
    hybrid_head_outputs,
    isolated_masses,
)
from icml26.function_vectors.experiments import seeded
from icml26.function_vectors.interventions import (
    CORRUPTIONS,
    DECOMPOSITIONS,
    INTERVENTIONS,
    Prefix,
    accuracy_of,
    intervene,
    p_correct,
    run,
    shift_distribution,
    subset,
)
from icml26.function_vectors.model import FVTransformer, HeadPatch
from icml26.function_vectors.prompts import MAX_SHOTS, N_TASKS, make_prompts, shuffle_labels


def _live_prompts(task, n_shots, p_uninformative, ranking, fv_heads, seed, count):
    if not 1 <= int(task) <= N_TASKS:
        raise ValueError(f"task (shift k) must be in 1..{N_TASKS}, got {task}")
    if not 0 <= int(n_shots) <= MAX_SHOTS:
        raise ValueError(f"n_shots must be in 0..{MAX_SHOTS} (the trained context), got "
                         f"{n_shots}")
    if not 1 <= int(fv_heads) <= len(ranking):
        raise ValueError(f"fv_heads must be in 1..{len(ranking)}, got {fv_heads}")
    g = seeded(seed, 101)
    clean = make_prompts(torch.full((count,), int(task)), int(n_shots), g, p_uninformative)
    return clean, list(ranking[: int(fv_heads)])


def live_prompt_data(model: FVTransformer, ranking, task: int = 3, n_shots: int = 4,
                     p_uninformative: float = 0.5, fv_heads: int = 3, seed: int = 0,
                     count: int = 64) -> dict:
    """Dashboard data that depends on the prompt and the FV heads only: clean accuracy, the
    QK/V hybrids of the clean prompts injected into zero-shot prompts (quality and shift
    distribution of each), and the FV heads' attention at the query of the first prompt, in
    context and isolated."""
    clean, heads = _live_prompts(task, n_shots, p_uninformative, ranking, fv_heads, seed,
                                 count)
    zero = clean.with_slots(torch.zeros(MAX_SHOTS, dtype=torch.bool))
    logits_clean = run(model, clean)
    hybrids = hybrid_head_outputs(model, clean, heads)
    pre = Prefix.of(model, zero)
    mask = torch.zeros(count, *hybrids["both"].shape[1:3], dtype=torch.bool)
    for layer, head in heads:
        mask[:, layer, head] = True
    quality, shifts = {"zero-shot": (accuracy_of(pre.logits, zero.target),
                                     float(p_correct(pre.logits, zero.target).mean()))}, {}
    for mode in DECOMPOSITIONS:
        logits = pre.patched(model, head_patch=HeadPatch(mask, hybrids[mode]))
        quality[mode] = (accuracy_of(logits, zero.target),
                         float(p_correct(logits, zero.target).mean()))
        shifts[mode] = shift_distribution(logits, zero.query)
    first = subset(clean, torch.arange(1))
    with torch.no_grad():
        _, full = model(first.tokens, record=True)
    attn_rows = torch.stack([full.attn[layer][0, head, -1] for layer, head in heads])
    top_l, top_h = heads[0]
    return {
        "heads": heads,
        "clean_accuracy": accuracy_of(logits_clean, clean.target),
        "clean_p_correct": float(p_correct(logits_clean, clean.target).mean()),
        "hybrid_accuracy": {m: q[0] for m, q in quality.items()},
        "hybrid_p_correct": {m: q[1] for m, q in quality.items()},
        "hybrid_shift": shifts,
        "attention_query": attn_rows.mean(0),  # [T]
        "attention_matrix": full.attn[top_l][0, top_h],  # [T, T]
        "mass_ctx": by_slot(attn_rows.mean(0, keepdim=True),
                            torch.arange(attn_rows.shape[1])[None], query=True)[0],
        "mass_iso": isolated_masses(model, first, heads)[0],
        "kinds": first.kinds[0],
        "tokens": first.tokens[0],
    }


def live_intervention_data(model: FVTransformer, means: torch.Tensor, ranking, task: int = 3,
                           n_shots: int = 4, p_uninformative: float = 0.5, fv_heads: int = 3,
                           intervention: str = "replace", scale: float = 1.0,
                           corruption: str = "zero_shot", seed: int = 0, count: int = 64
                           ) -> dict:
    """Dashboard data of the intervention: the corrupted prompts (zero-shot or shuffled
    labels) with and without it - accuracy, p(correct) and the shift distribution."""
    if intervention not in ("none",) + INTERVENTIONS:
        raise ValueError(f"intervention must be one of {('none',) + INTERVENTIONS}, got "
                         f"{intervention!r}")
    if corruption not in CORRUPTIONS:
        raise ValueError(f"corruption must be one of {CORRUPTIONS}, got {corruption!r}")
    clean, heads = _live_prompts(task, n_shots, p_uninformative, ranking, fv_heads, seed,
                                 count)
    g = seeded(seed, 103)
    corrupted = (clean.with_slots(torch.zeros(MAX_SHOTS, dtype=torch.bool))
                 if corruption == "zero_shot" else shuffle_labels(clean, g))
    pre = Prefix.of(model, corrupted)
    patched = pre.logits if intervention == "none" else intervene(
        model, corrupted, means, heads, intervention, scale=scale, generator=g, prefix=pre)
    return {"accuracy": {"corrupted": accuracy_of(pre.logits, corrupted.target),
                         "intervened": accuracy_of(patched, corrupted.target)},
            "p_correct": {"corrupted": float(p_correct(pre.logits, corrupted.target).mean()),
                          "intervened": float(p_correct(patched, corrupted.target).mean())},
            "shift_corrupted": shift_distribution(pre.logits, corrupted.query),
            "shift_intervened": shift_distribution(patched, corrupted.query)}


def live_data(model: FVTransformer, means: torch.Tensor, ranking, task: int = 3,
              n_shots: int = 4, p_uninformative: float = 0.5, fv_heads: int = 3,
              intervention: str = "replace", scale: float = 1.0,
              corruption: str = "zero_shot", decomposition: str = "both", seed: int = 0,
              count: int = 64) -> dict:
    """Everything the dashboard draws (both parts above, merged), from forward passes of a
    trained model: ``count`` prompts of ``task`` with ``n_shots`` demonstrations, each a
    ``Z`` demo with probability ``p_uninformative``."""
    if decomposition not in DECOMPOSITIONS:
        raise ValueError(f"decomposition must be one of {DECOMPOSITIONS}, got "
                         f"{decomposition!r}")
    a = live_prompt_data(model, ranking, task, n_shots, p_uninformative, fv_heads, seed,
                         count)
    b = live_intervention_data(model, means, ranking, task, n_shots, p_uninformative,
                               fv_heads, intervention, scale, corruption, seed, count)
    return {**a, **b, "accuracy": {"clean": a["clean_accuracy"], **b["accuracy"]},
            "p_correct": {"clean": a["clean_p_correct"], **b["p_correct"]},
            "shift_hybrid": a["hybrid_shift"][decomposition]}
