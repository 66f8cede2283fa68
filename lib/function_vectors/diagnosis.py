"""Where does the task live? Issue 31's diagnosis (:mod:`icml26.function_vectors`).

For one seed's model (the one ``claims(seed)`` uses):

* ``joint``: the joint AIE of the top-k heads (by signed single-head AIE) patched together
  with their task means, on the shuffled-label 6-shot prompts of ``cie_top_effect``, for
  k = 1..L*H (every head);
* ``site_aie``: the same replacement at the other sites of the final token - each layer's MLP
  output ``mlp{l}`` and the residual after each layer ``resid{l}`` := its task mean (a causal
  read-out of where the task is carried, on the same prompts);
* ``probe``: held-out accuracy of a linear (multinomial logistic) probe of the task (8 classes,
  chance 0.125) at the final token of clean 6-shot prompts, from each head's output ``z_h``
  (``L{l}H{h}``), each MLP output and each residual (half the prompts fit, half score).

``benchmarks/function_vectors/function_vectors_diagnosis.py`` records it per seed and design
(``benchmarks/function_vectors/function_vectors_diagnosis.csv``); :func:`read_diagnosis` reads that
record for the notebook's figure.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import torch

from icml26.function_vectors.experiments import (
    FVConfig,
    fv_analysis,
    load_model,
    seeded,
)
from icml26.function_vectors.interventions import Prefix, p_correct, run
from icml26.function_vectors.prompts import MAX_SHOTS, N_TASKS, make_prompts, tasks_for

PROBE_PROMPTS = 1600  # clean 6-shot prompts, half to fit, half to score
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "function_vectors"
RECORD = BENCH / "function_vectors_diagnosis.csv"
#: the design of the claims (3000 steps) and the second designs tried on the diagnosis seeds
DESIGN_RECORDS = {
    "3000 steps (the design)": BENCH / "function_vectors_seeds.csv",
    "4500 steps": BENCH / "function_vectors_trial_4500.csv",
    "trials": BENCH / "function_vectors_trials.csv",
}
TRIAL_NAMES = {  # ``function_vectors_trials.csv``'s design column -> what changed
    "ao0-resid-icl-emergence": "lr constant until ICL, then 1500 decay steps",
    "ao0-attn-icl-fixed": "TVP at the attention output (n-shot centred)",
    "ao0-attn-zero_shot-fixed": "TVP at the attention output (zero-shot centred)",
    "ao1-resid-icl-fixed": "no MLP in layer 0",
    "ao2-resid-icl-fixed": "no MLP in layers 0-1",
}


def final_token_sites(model, prompts) -> dict[str, torch.Tensor]:
    """``{site: [B, d]}`` at the final token: heads ``L{l}H{h}`` (``z_h``, ``d = dh``),
    ``mlp{l}`` (the MLP's output) and ``resid{l}`` (the residual after layer l)."""
    _, rec = run(model, prompts, record=True)
    out = {}
    for layer in range(model.cfg.n_layers):
        for head in range(model.cfg.n_heads):
            out[f"L{layer}H{head}"] = rec.z[layer][:, -1, head]
        out[f"mlp{layer}"] = rec.resid[layer][:, -1] - rec.resid_mid[layer][:, -1]
        out[f"resid{layer}"] = rec.resid[layer][:, -1]
    return out


def site_aie(model, cfg: FVConfig, seed: int, prompts) -> dict[str, float]:
    """AIE of replacing one MLP output / residual at the final token of ``prompts`` with its
    task mean (over ``mean_prompts`` clean 6-shot prompts per task, drawn as the heads'
    means are)."""
    g = seeded(seed, 13)
    task = tasks_for(cfg.mean_prompts * N_TASKS)
    clean = final_token_sites(model, make_prompts(task, MAX_SHOTS, g))
    pre = Prefix.of(model, prompts)
    base = p_correct(pre.logits, prompts.target)
    cur = final_token_sites(model, prompts)
    n_layers, d = model.cfg.n_layers, model.cfg.d_model
    out = {}
    for layer in range(n_layers):
        for kind in ("mlp", "resid"):
            site = f"{kind}{layer}"
            means = torch.stack([clean[site][task == k].mean(0) for k in range(1, N_TASKS + 1)])
            add = torch.zeros(len(prompts), n_layers, d)
            add[:, layer] = means[prompts.task - 1] - cur[site]
            logits = pre.patched(model, resid_add=add)
            out[site] = float((p_correct(logits, prompts.target) - base).mean())
    return out


def probes(model, seed: int, n_prompts: int = PROBE_PROMPTS) -> dict[str, float]:
    """Held-out accuracy of a logistic probe of the task from every final-token site."""
    from sklearn.linear_model import LogisticRegression

    g = seeded(seed, 41)
    p = make_prompts(tasks_for(n_prompts, g), MAX_SHOTS, g)
    y = p.task.numpy()
    half = n_prompts // 2
    out = {}
    for site, x in final_token_sites(model, p).items():
        x = x.numpy()
        clf = LogisticRegression(max_iter=2000).fit(x[:half], y[:half])
        out[site] = float(clf.score(x[half:], y[half:]))
    return out


def diagnose(cfg: FVConfig, seed: int, model=None) -> list[dict]:
    """Rows ``{seed, kind, site, value, head, single_aie}`` (kinds ``joint_aie`` with sites
    ``top1..top12``, ``site_aie``, ``probe``) for ``model`` (default: the model of ``seed``
    under ``cfg``)."""
    model = load_model(cfg, seed, progress=False) if model is None else model
    n_heads = cfg.model.n_layers * cfg.model.n_heads
    a = fv_analysis(model, replace(cfg, top_k=n_heads), seed)  # the claim's prompts
    g = seeded(seed, 17)
    prompts = make_prompts(tasks_for(cfg.cie_prompts * N_TASKS), MAX_SHOTS, g, shuffle=True)
    rows = [{"seed": seed, "kind": "joint_aie", "site": f"top{k}", "value": round(j, 4),
             "head": f"L{h[0]}H{h[1]}", "single_aie": round(float(a["aie"][h]), 4)}
            for k, (j, h) in enumerate(zip(a["joint"], a["ranking"]), 1)]
    for kind, vals in (("site_aie", site_aie(model, cfg, seed, prompts)),
                       ("probe", probes(model, seed))):
        rows += [{"seed": seed, "kind": kind, "site": s, "value": round(v, 4), "head": "",
                  "single_aie": ""} for s, v in vals.items()]
    return rows


def read_diagnosis(path: Path = RECORD) -> list[dict]:
    """The recorded diagnosis rows (values as floats; seeds and training steps as ints)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["seed"], r["value"], r["steps"] = int(r["seed"]), float(r["value"]), int(r["steps"])
    return rows


def read_designs(records: dict[str, Path] = DESIGN_RECORDS) -> list[dict]:
    """Per (design, seed): ``{design, seed, holds, failing}``: whether every binding claim
    held on that seed's model, and the binding claims that failed (from the per-seed
    records of the design and of the rejected second designs)."""
    per: dict[tuple[str, int], list[str]] = {}
    for name, path in records.items():
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                design = TRIAL_NAMES.get(r["design"], r["design"]) if "design" in r else name
                failing = per.setdefault((design, int(r["seed"])), [])
                if r["expected"] == "True" and r["holds"] != "True":
                    failing.append(r["claim"])
    return [{"design": d, "seed": s, "holds": not f, "failing": f}
            for (d, s), f in per.items()]
