"""The claims of :mod:`icml26.function_vectors`: the spec rows and one seed's measurements."""

from __future__ import annotations

from icml26.claims import Claim, ClaimTable
from icml26.function_vectors.experiments import (
    PAPER,
    FVConfig,
    clean_accuracy_cached,
    config_for,
    load_model,
)
from icml26.function_vectors.figures import (
    figure_additivity_data,
    figure_cie_data,
    figure_interventions_data,
    figure_qkv_data,
    figure_reweighting_data,
)
from icml26.function_vectors.interventions import CORRUPTIONS

SPECS = {  # name: (statement, op, threshold, expected)
    "icl_emerged": (
        "The trained toy model does in-context learning (clean 6-shot accuracy)",
        ">=", 0.85, True),
    "cie_top_effect": (
        "Patching the top-3 heads with their task mean restores the answer on shuffled "
        "prompts (summed AIE)",
        ">=", 0.3, True),
    "cie_concentrated": (
        "The top-3 of 12 heads carry most of the positive AIE (share)",
        ">=", 0.8, True),
    "replacement_zero_shot": (
        "Replacing the FV heads' outputs with the task mean raises zero-shot accuracy (gain)",
        ">=", 0.4, True),
    "replacement_shuffled": (
        "... and shuffled-label 6-shot accuracy (gain)",
        ">=", 0.5, True),
    "other_task_no_gain": (
        "Another task's mean does not raise accuracy on the true task (largest gain)",
        "<=", 0.05, True),
    "random_no_gain": (
        "A random vector of equal norm does not raise accuracy (largest gain)",
        "<=", 0.03, True),
    "additivity_shared": (
        "The FV is a position-shared linear combination of sub-FVs (worst held-out R^2 over n"
        " >= 3, all-informative and training-mix prompts)",
        ">=", 0.7, True),
    "additivity_margin": (
        "... and the fit is specific: R^2 minus the other-task control (worst over n >= 3)",
        ">=", 0.4, True),
    "reweighting_in_context": (
        "In context the FV heads attend more to informative demonstrations (informative / Z "
        "mass, matched slots)",
        ">=", 1.5, True),
    "reweighting_vs_isolated": (
        "The reweighting comes from context: in-context ratio / isolated (1-shot) ratio",
        ">=", 1.5, True),
    "reweighting_p": (
        "Paired permutation test of in-context vs isolated reweighting",
        "<", 0.01, True),
    "reweighting_keys": (
        "Isolated keys in the same softmax do not already produce it: in-context ratio / "
        "isolated-keys ratio",
        ">=", 1.5, False),
    "qk_share_ambiguous": (
        "With ambiguous demonstrations the contextualisation gain goes through QK: (QK - "
        "neither) / (both - neither)",
        ">=", 0.5, False),
    "qk_beats_v": (
        "... and QK-only beats V-only (accuracy difference, ambiguous panel)",
        ">", 0.0, False),
    "todd_additive_gain": (
        "Todd et al.'s additive FV raises zero-shot accuracy (best layer)",
        ">=", 0.4, False),
    "fv_single_head": (
        "One head carries the FV: top AIE / 90th percentile |AIE| of the other heads (spec "
        "prototype D)",
        ">=", 5.0, False),
}


EXPECTED = {name: row[3] for name, row in SPECS.items()}


def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim at ``scale`` for ``seed`` (trains or loads the model for that seed)."""
    return claims_for(config_for(scale), seed)


def claims_for(cfg: FVConfig, seed: int = 0, expected: dict | None = None) -> list[Claim]:
    """Claims for an explicit config (the mutation tests switch off TVP / share weights)."""
    expected = {**EXPECTED, **(expected or {})}
    table = ClaimTable(PAPER, {n: (*row[:3], expected[n]) for n, row in SPECS.items()})
    rest = [n for n in SPECS if n != "icl_emerged"]
    try:
        model = load_model(cfg, seed)
        acc = clean_accuracy_cached(cfg, seed, model)
    except Exception as exc:  # noqa: BLE001 - reported as failed claims, not hidden
        table.fail(SPECS, f"{type(exc).__name__}: {exc}")
        return table.claims
    table.add("icl_emerged", acc, f"{cfg.eval_prompts} clean 6-shot prompts; "
              f"{cfg.train.steps} training steps, TVP={'on' if cfg.train.tvp else 'off'}")
    if acc < cfg.icl_threshold:  # every other claim would be meaningless
        table.fail(rest, "in-context learning did not emerge "
                   f"(clean 6-shot accuracy {acc:.3f})")
        return table.claims
    with table.guard(rest):
        values = measure(cfg, seed)
        for name in rest:
            table.add(name, *values[name])
    return table.claims


def measure(cfg: FVConfig, seed: int) -> dict[str, tuple[float, str]]:
    v: dict[str, tuple[float, str]] = {}
    cie = figure_cie_data(cfg, seed)
    top = ", ".join(f"({a},{b})" for a, b in cie["top"])
    aie = cie["aie"]
    v["cie_top_effect"] = (cie["top_sum"], f"FV heads {top}; AIE "
                           + ", ".join(f"{float(aie[h]):.3f}" for h in cie["top"])
                           + f"; {cfg.cie_prompts} shuffled prompts per task")
    v["cie_concentrated"] = (cie["share"], "share of the summed positive AIE of all "
                             f"{aie.numel()} heads")
    v["fv_single_head"] = (cie["single_head_ratio"], "spec prototype D: 0.58 vs <= 0.05; the "
                           "torch re-check (and this toy) spreads the FV over 2-3 heads")
    iv = figure_interventions_data(cfg, seed)
    gain = iv["gain"]
    k = cfg.top_k
    v["replacement_zero_shot"] = (gain[("zero_shot", f"replace top-{k}")],
                                  "top-1/2/3: " + ", ".join(
                                      f"{gain[('zero_shot', f'replace top-{i}')]:+.2f}"
                                      for i in range(1, k + 1))
                                  + f"; filtered to items clean ICL solves ({iv['kept']:.3f})")
    v["replacement_shuffled"] = (gain[("shuffled", f"replace top-{k}")], "top-1/2/3: " +
                                 ", ".join(f"{gain[('shuffled', f'replace top-{i}')]:+.2f}"
                                           for i in range(1, k + 1)))
    v["other_task_no_gain"] = (max(gain[(c, "other-task mean")] for c in CORRUPTIONS),
                               "worst of zero-shot / shuffled; it installs the other task")
    rnd = [gain[(c, m)] for c in CORRUPTIONS for m in ("random (replace)", "random (add)")]
    v["random_no_gain"] = (max(rnd), "worst of {zero-shot, shuffled} x {replacement, "
                           "additive at the best layer}; may lower accuracy (one-sided)")
    todd = gain[("zero_shot", "Todd additive FV")]
    v["todd_additive_gain"] = (todd, "W_O-mapped mean added after the best layer; the spec "
                               "found it does not transfer in any toy (replacement does)")
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
                               f"informative panel share {qkv['qk_share']['informative']:.2f}")
    v["qk_beats_v"] = (qkv["qk_minus_v"]["ambiguous"], "informative panel: "
                       f"{qkv['qk_minus_v']['informative']:+.3f}; reported, never prototyped")
    return v
