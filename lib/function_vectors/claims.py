"""The claims of :mod:`icml26.function_vectors`: the spec rows and one seed's measurements.

Issue 22's restatement. The FV heads are the top-3 by single-head AIE; their outputs are a
function vector only if they carry the task JOINTLY (``cie_top_effect``: the three patched
together, as an FV acts), so the headline claims (additivity, reweighting, QK/V) are measured
on them only when that joint effect holds (otherwise they are reported as not measured, and
fail). Zero-shot transfer is asserted with a disclosed context control: the other layer-0
heads get the task-agnostic n-shot mean ("demonstrations present", no task), which alone
must not raise accuracy; plain Todd-style zero-shot replacement is reported beside it. No
layer-residual FV is used (the TVP training loss trains exactly that operation).

Issue 31's second designs, tried on seeds 0-6 only and rejected (no seed above 6 was run on
any of them): the diagnosis of the 3000-step models
(``benchmarks/function_vectors/function_vectors_diagnosis.py``) found that on seeds 1 and 5 no head
budget gives an FV (joint AIE of the top-k heads <= 0.16 for every k = 1..12), while the residual
stream carried the task (after layer 1 on seed 1; already after layer 0 on seed 5, written by the
layer-0 MLP), and that those two seeds were the late emergers (clean 6-shot accuracy past 0.5 at
step 2000 / 2250 against 1000-1750). Each change below answers one reading of that diagnosis; every
binding claim must hold on a seed:

* 4500 steps (more time after a late emergence;
  ``benchmarks/function_vectors/function_vectors_trial_4500.csv``): 3 of 7 seeds (2, 3, 6). The task
  code moved into the middle-layer heads on all seven, but shuffled-label recovery failed on 1 and
  5, additivity on 0, zero-shot transfer on 4.
* a learning rate held constant until ICL appears (clean 6-shot accuracy >= 0.5), then 1500
  steps of cosine decay (``schedule="emergence"``: the same time after emergence for every
  seed): 2 of 7 (2, 5); the FV heads then appear on 1 and 5 but vanish on 3, 4 and 6.
* the TVP task code read and injected at the middle layer's attention output instead of its
  residual (``tvp_site="attn"``: only heads can write it), centred on the n-shot (0 of 4) or
  the zero-shot prompts (0 of 2): ICL did not emerge on seed 1 in 3000 steps and the heads
  carried no CIE on seeds 0 and 2.
* no MLP in layer 0 (``attn_only_layers=1``) or layers 0-1 (``=2``): seed 1 still failed
  (top-3 joint AIE 0.03 / 0.00).

(``benchmarks/function_vectors/function_vectors_trials.csv``,
``benchmarks/function_vectors/function_vectors_trial.py``.) None beats the 3000-step design's 5 of
7, so that design is the one validated on the fresh seeds 7-16, unchanged (fixed before they ran);
its hold rate over seeds 0-16 decides the status. Result: every binding claim held on 2 of the 10
fresh seeds (7, 13), 7 of 17 over 0-16; no FV in the top-3 heads on 1, 5, 12, 16 (and no ICL on 14);
where an FV formed (12 seeds) the headline additivity and reweighting claims held on 11-12 of 12,
and shuffled-label recovery (seeds 9, 10) or the random control (8, 15) failed. Late emergence did
not predict the failure on the fresh seeds (12 and 16 emerged at 1750 / 1500 steps without an FV, 8
at 2000 with one). So the paper stays blocked
(``benchmarks/function_vectors/function_vectors_seeds.csv``, computed before the numeric pins).

Shortcuts every note names: the model of seeds 0-6 at quick scale is the shipped one
(``lib/data/function_vectors_seed{S}.pt``, fp16, named in the note by its sha256; training is
not bit-reproducible across machines, so the verdicts were checked on seven independently
trained seeds instead of on a retrain), and the TVP auxiliary loss it was trained with (a
toy-only device).
"""

from __future__ import annotations

import math

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.function_vectors.experiments import (
    PAPER,
    FVConfig,
    clean_accuracy_cached,
    config_for,
    load_model,
    weights_source,
)
from icml26.function_vectors.figures import (
    figure_additivity_data,
    figure_cie_data,
    figure_interventions_data,
    figure_qkv_data,
    figure_reweighting_data,
)

#: the abstract's definition of a function vector: what the FV heads' causal effect and its
#: transfer rest on
FV_DEFINITION = ("a model’s function vector (FV)--a causal activation direction that drives "
                 "task behavior on the ICL query")

SPECS = {  # name: the row; CLAIM_SPECS adds the headlines' quotes to the statement
    "icl_emerged": ClaimSpec(
        statement="The trained toy model does in-context learning (clean 6-shot accuracy)",
        op=">=", threshold=0.85, expected=True, role="check", unit="each", source=""),
    "cie_top_effect": ClaimSpec(
        statement="Patching the top-3 heads together with their task means restores the "
                  "answer on shuffled prompts (joint AIE, as a function vector acts)",
        op=">=", threshold=0.3, expected=True, role="mechanism", unit="each",
        source=FV_DEFINITION),
    "cie_top_effect_single_head": ClaimSpec(
        statement="... one head at a time (summed single-head AIE of the top 3; the heads are "
                  "redundant)",
        op=">=", threshold=0.3, expected=False, role="finding", unit="each", source=""),
    "cie_concentrated": ClaimSpec(
        statement="The top-3 of 12 heads carry most of the positive single-head AIE (share)",
        op=">=", threshold=0.8, expected=True, role="mechanism", unit="each",
        source=FV_DEFINITION),
    "replacement_zero_shot": ClaimSpec(
        statement="Replacing the FV heads' outputs with the task mean raises zero-shot "
                  "accuracy, with the context control (gain over the control alone)",
        op=">=", threshold=0.4, expected=True, role="mechanism", unit="each",
        source=FV_DEFINITION),
    "zero_shot_context_control": ClaimSpec(
        statement="The context control alone (other layer-0 heads := task-agnostic n-shot "
                  "mean) does not raise zero-shot accuracy (gain)",
        op="<=", threshold=0.05, expected=True, role="check", unit="each", source=""),
    "replacement_zero_shot_plain": ClaimSpec(
        statement="Todd-style: replacing the FV heads alone raises zero-shot accuracy (gain, no "
                  "context)",
        op=">=", threshold=0.4, expected=False, role="finding", unit="each", source=""),
    "replacement_shuffled": ClaimSpec(
        statement="Replacing the FV heads' outputs with the task mean raises shuffled-label "
                  "6-shot accuracy (gain)",
        op=">=", threshold=0.5, expected=True, role="mechanism", unit="each",
        source=FV_DEFINITION),
    "other_task_no_gain": ClaimSpec(
        statement="Another task's mean does not raise accuracy on the true task (largest gain)",
        op="<=", threshold=0.05, expected=True, role="check", unit="each", source=""),
    "random_no_gain": ClaimSpec(
        statement="A random vector of equal norm does not raise accuracy (largest gain)",
        op="<=", threshold=0.03, expected=True, role="check", unit="each", source=""),
    "additivity_shared": ClaimSpec(
        statement="The FV is a position-shared linear combination of sub-FVs (worst held-out "
                  "R^2 over n >= 3, all-informative and training-mix prompts)",
        op=">=", threshold=0.7, expected=True, role="headline", unit="each",
        source="an $n$-shot FV is well-approximated by a linear combination of example-level "
               "sub-FVs"),
    "additivity_margin": ClaimSpec(
        statement="... and the fit is specific: R^2 minus the other-task control (worst over "
                  "n >= 3)",
        op=">=", threshold=0.4, expected=True, role="check", unit="each", source=""),
    "reweighting_in_context": ClaimSpec(
        statement="In context the FV heads attend more to informative demonstrations "
                  "(informative / Z mass, matched slots)",
        op=">=", threshold=1.5, expected=True, role="headline", unit="each",
        source="attention shifts toward examples that are more informative and less "
               "ambiguous under the context"),
    "reweighting_vs_isolated": ClaimSpec(
        statement="The reweighting comes from context: in-context ratio / isolated (1-shot) "
                  "ratio",
        op=">=", threshold=1.5, expected=True, role="headline", unit="each",
        source="models contextualize individual examples' representations based on prior "
               "examples to adaptively reweight which demonstrations dominate the FV"),
    "reweighting_p": ClaimSpec(
        statement="Paired permutation test of in-context vs isolated reweighting",
        op="<", threshold=0.01, expected=True, role="check", unit="each", source=""),
    "reweighting_keys": ClaimSpec(
        statement="Isolated keys in the same softmax do not already produce it: in-context "
                  "ratio / isolated-keys ratio",
        op=">=", threshold=1.5, expected=False, role="check", unit="each", source=""),
    "qk_share_ambiguous": ClaimSpec(
        statement="With ambiguous demonstrations the contextualisation gain goes through QK: "
                  "(QK - neither) / (both - neither), zero-shot with the context control",
        op=">=", threshold=0.5, expected=False, role="headline", unit="each",
        source="contextualization’s most consistent contributions to FV quality arise from "
               "Query–Key alignment--particularly in ambiguous settings"),
    "qk_beats_v": ClaimSpec(
        statement="... and QK-only beats V-only (accuracy difference, ambiguous panel)",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source="while Value-mediated effects are more heterogeneous"),
    "todd_additive_gain": ClaimSpec(
        statement="Todd et al.'s additive FV raises zero-shot accuracy (best layer)",
        op=">=", threshold=0.4, expected=False, role="finding", unit="each", source=""),
    "fv_single_head": ClaimSpec(
        statement="One head carries the FV: top AIE / 90th percentile |AIE| of the other heads "
                  "(spec prototype D)",
        op=">=", threshold=5.0, expected=False, role="finding", unit="each", source=""),
}

# measured on the FV heads: meaningful only where their joint effect holds (the gate)
GATED = ("additivity_shared", "additivity_margin", "reweighting_in_context",
         "reweighting_vs_isolated", "reweighting_p", "reweighting_keys", "qk_share_ambiguous",
         "qk_beats_v")


EXPECTED = {name: row.expected for name, row in SPECS.items()}

#: each claim's role (:data:`icml26.claims.ROLES`), from the rows
ROLES = {name: row.role for name, row in SPECS.items()}
#: the abstract's words each headline statement quotes
QUOTES = {
    "additivity_shared": "an n-shot FV is well-approximated by a linear combination of "
                         "example-level sub-FVs",
    "reweighting_in_context": "attention shifts toward examples that are more informative and "
                              "less ambiguous under the context",
    "reweighting_vs_isolated": "models contextualize individual examples' representations "
                               "based on prior examples to adaptively reweight which "
                               "demonstrations dominate the FV",
    "qk_share_ambiguous": "contextualization's most consistent contributions to FV quality "
                          "arise from Query–Key alignment--particularly in ambiguous settings",
    "qk_beats_v": "while Value-mediated effects are more heterogeneous",
}

#: name: the row at quick scale, static (the statements of the headlines quote the
#: abstract); ``claims_for`` builds its table from these rows
CLAIM_SPECS = {
    name: (row._replace(statement=f'{row.statement} ("{QUOTES[name]}")') if name in QUOTES
           else row)
    for name, row in SPECS.items()}


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim at ``scale`` for ``seed`` (the shipped model of that seed, else trained).

    ``device`` is validated (a clear error naming ``--device`` when CUDA is asked for without
    a GPU), but the analyses (prompts, patched forwards, fits) still run on the CPU whatever
    the device: their tensors are not yet moved (issue #30, left to do)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def shortcuts(cfg: FVConfig, seed: int) -> str:
    """The shortcuts a claim of this seed rests on, for its note."""
    src = weights_source(cfg, seed)
    model = (f"{src} (not retrained here; training is not bit-reproducible across machines)"
             if src != "trained" else "trained in this run (cached per seed)")
    return (f"model: {model}; TVP auxiliary loss {'on' if cfg.train.tvp else 'off'} in "
            f"training; {cfg.train.steps} training steps")


def claims_for(cfg: FVConfig, seed: int = 0, device: str = "cpu",
               expected: dict | None = None) -> list[Claim]:
    """Claims for an explicit config (the mutation tests switch off TVP, leak the context
    control, share weights per prompt ...); ``device`` as in :func:`claims` (validated, CPU
    compute)."""
    resolve_device(device)
    expected = {**EXPECTED, **(expected or {})}
    table = ClaimTable(PAPER, {n: row._replace(expected=expected[n])
                               for n, row in CLAIM_SPECS.items()})
    rest = [n for n in SPECS if n != "icl_emerged"]
    try:
        model = load_model(cfg, seed)
        acc = clean_accuracy_cached(cfg, seed, model)
        extra = shortcuts(cfg, seed)
    except Exception as exc:  # noqa: BLE001 - reported as failed claims, not hidden
        table.fail(SPECS, f"{type(exc).__name__}: {exc}")
        return table.claims
    table.add("icl_emerged", acc, f"{cfg.eval_prompts} clean 6-shot prompts; "
              f"{cfg.train.steps} training steps; {extra}")
    if acc < cfg.icl_threshold:  # every other claim would be meaningless
        table.fail(rest, "in-context learning did not emerge "
                   f"(clean 6-shot accuracy {acc:.3f}); {extra}")
        return table.claims
    with table.guard(rest):
        values = measure(cfg, seed)
        for name in rest:
            value, note = values[name]
            table.add(name, value, f"{note}; {extra}")
    return table.claims


def measure(cfg: FVConfig, seed: int) -> dict[str, tuple[float, str]]:
    """``{claim: (measured, note)}`` for every claim but ``icl_emerged``."""
    v = _cie_claims(cfg, seed)
    v.update(_intervention_claims(cfg, seed))
    joint, threshold = v["cie_top_effect"][0], SPECS["cie_top_effect"].threshold
    if joint >= threshold:
        v.update(_headline_claims(cfg, seed))
    else:
        why = (f"not measured: the FV heads' joint AIE {joint:.3f} < {threshold}, so their "
               "outputs are no function vector here (gated on cie_top_effect)")
        v.update({name: (math.nan, why) for name in GATED})
    return v


def _cie_claims(cfg: FVConfig, seed: int) -> dict[str, tuple[float, str]]:
    cie = figure_cie_data(cfg, seed)
    top = ", ".join(f"({a},{b})" for a, b in cie["top"])
    aie = cie["aie"]
    single = ", ".join(f"{float(aie[h]):.3f}" for h in cie["top"])
    k = cfg.top_k
    return {
        "cie_top_effect": (cie["joint"][k - 1], f"FV heads {top} (top-{k} by {cfg.ranking} "
                           f"single-head AIE); joint AIE of top-1..{k}: "
                           + ", ".join(f"{j:.3f}" for j in cie["joint"])
                           + f"; {cfg.cie_prompts} shuffled prompts per task"),
        "cie_top_effect_single_head": (cie["top_sum"], f"single-head AIE {single}; reported: "
                                       "redundant heads move little one at a time"),
        "cie_concentrated": (cie["share"], "share of the summed positive single-head AIE of "
                             f"all {aie.numel()} heads"),
        "fv_single_head": (cie["single_head_ratio"], "spec prototype D: 0.58 vs <= 0.05; the "
                           "torch re-check (and this toy) spreads the FV over 2-3 heads"),
    }


def _intervention_claims(cfg: FVConfig, seed: int) -> dict[str, tuple[float, str]]:
    iv = figure_interventions_data(cfg, seed)
    gain, k = iv["gain"], cfg.top_k
    zs, sh = (lambda m: gain[("zero_shot", m)]), (lambda m: gain[("shuffled", m)])
    ctrl = zs("context control")
    ctx = ", ".join(f"({a},{b})" for a, b in iv["context_heads"])
    over_ctrl = {m: zs(m + " + context") - ctrl for m in
                 [f"replace top-{i}" for i in range(1, k + 1)] + ["other-task mean",
                                                                  "random (replace)"]}
    return {
        "replacement_zero_shot": (over_ctrl[f"replace top-{k}"], "gain over the context "
                                  f"control (heads {ctx} := task-agnostic n-shot mean; "
                                  f"{cfg.context_control}), top-1..{k}: " + ", ".join(
                                      f"{over_ctrl[f'replace top-{i}']:+.2f}"
                                      for i in range(1, k + 1))
                                  + f"; items clean ICL solves ({iv['kept']:.3f})"),
        "zero_shot_context_control": (ctrl, f"heads {ctx}; control = {cfg.context_control} "
                                      "(the disclosed shortcut of replacement_zero_shot)"),
        "replacement_zero_shot_plain": (zs(f"replace top-{k}"), "top-1..k: " + ", ".join(
            f"{zs(f'replace top-{i}'):+.2f}" for i in range(1, k + 1))
            + "; reported: without the layer-0 'demonstrations present' signal the toy's "
            "last layer often does not read the task"),
        "replacement_shuffled": (sh(f"replace top-{k}"), f"top-1..{k}: " + ", ".join(
            f"{sh(f'replace top-{i}'):+.2f}" for i in range(1, k + 1))
            + "; controls: other_task_no_gain, random_no_gain"),
        "other_task_no_gain": (max(sh("other-task mean"), zs("other-task mean"),
                                   over_ctrl["other-task mean"]),
                               "worst of shuffled / zero-shot / zero-shot with the context "
                               "control (over the control); it installs the other task"),
        "random_no_gain": (max(sh("random (replace)"), sh("random (add)"),
                               zs("random (replace)"), zs("random (add)"),
                               over_ctrl["random (replace)"]),
                           "worst of {zero-shot, shuffled} x {replacement, additive at the best "
                           "layer} and replacement with the context control; one-sided"),
        "todd_additive_gain": (zs("Todd additive FV"), "W_O-mapped mean added after the best "
                               "layer; the spec found it does not transfer in any toy"),
    }


def _headline_claims(cfg: FVConfig, seed: int) -> dict[str, tuple[float, str]]:
    v: dict[str, tuple[float, str]] = {}
    adds = {"clean": figure_additivity_data(cfg, seed),
            "mix": figure_additivity_data(cfg, seed,
                                          p_uninformative=cfg.train.p_uninformative)}
    big = [(kind, r) for kind, a in adds.items() for r in a["rows"] if r["n"] >= 3]
    v["additivity_shared"] = (min(r["shared"] for _, r in big), "held-out R^2 (control, "
                              "uniform) by n, all-informative | training-mix prompts: " + "; ".join(
        f"{r['n']}: {r['shared']:.2f} ({r['control']:.2f}, {r['uniform']:.2f}) | "
        f"{m['shared']:.2f} ({m['control']:.2f}, {m['uniform']:.2f})"
        for r, m in zip(adds["clean"]["rows"], adds["mix"]["rows"]))
        + f"; weights={cfg.additivity_weights}")
    v["additivity_margin"] = (min(r["shared"] - r["control"] for _, r in big),
                              "worst over n >= 3 and both prompt kinds; per-prompt alpha: "
                              + ", ".join(f"{r['per_prompt']:.2f} vs ctrl "
                                          f"{r['per_prompt_control']:.2f}" for _, r in big)
                              + " (not discriminative)")
    rw = figure_reweighting_data(cfg, seed)
    v["reweighting_in_context"] = (rw["ratio_ctx"], f"geometric mean over slots; "
                                   f"{cfg.reweight_prompts} prompts, p(Z) = "
                                   f"{cfg.reweight_p_uninformative}")
    v["reweighting_vs_isolated"] = (rw["ratio_ctx"] / rw["ratio_iso"],
                                    f"isolated (1-shot, same slot) ratio {rw['ratio_iso']:.2f}")
    v["reweighting_p"] = (rw["p"], f"sign-flip test over {rw['n_pairs']} prompts, "
                          f"{cfg.permutations} permutations "
                          f"(floor {1 / (1 + cfg.permutations):.0e})")
    v["reweighting_keys"] = (rw["ratio_ctx"] / rw["ratio_joint"], "isolated keys, joint "
                             f"softmax: ratio {rw['ratio_joint']:.2f}; reported (caveat)")
    qkv = figure_qkv_data(cfg, seed)
    v["qk_share_ambiguous"] = (qkv["qk_share"]["ambiguous"],
                               f"both - neither = {qkv['gap']['ambiguous']:+.3f} accuracy; "
                               "informative panel share "
                               f"{qkv['qk_share']['informative']:.2f}; context control alone "
                               f"{qkv['context_control']['ambiguous']:.2f} (zero-shot accuracy)")
    v["qk_beats_v"] = (qkv["qk_minus_v"]["ambiguous"], "informative panel: "
                       f"{qkv['qk_minus_v']['informative']:+.3f}; reported, never prototyped")
    return v
