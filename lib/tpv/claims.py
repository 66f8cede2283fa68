"""The claims of :mod:`icml26.tpv`: one spec row per claim (statement, op, threshold,
expected), measured on the cached students, the quantization comparison and digits pruning."""

from __future__ import annotations

from icml26.claims import Claim, ClaimTable
from icml26.tpv.figures import quant_claim_data
from icml26.tpv.pruning import DigitsConfig, pruning_claim_data
from icml26.tpv.students import PAPER, TPVConfig, config_for, student_record

CLAIM_SPECS = {  # name: (statement, op, threshold, expected)
    "train_predicts_test": ("TPV on training inputs predicts TPV on test inputs within 10% at "
                            "n_train = 1000 (quantization and SGD noise, every width)",
                            "<=", 0.1, True),
    "quant_trace_matches_mc": ("The trace form sigma_q^2 Tr H_eff matches Monte Carlo "
                               "quantization TPV within 20% at 8 bits (every width)",
                               "<=", 0.2, True),
    "small_n_deviates": ("At n_train = 10 train TPV deviates from test TPV more than at "
                         "n_train = 1000", ">", 0.0, True),
    "label_train_predicts_test": ("Label-noise TPV on training inputs predicts test TPV within "
                                  "10% at n_train = 1000 (every width)", "<=", 0.1, False),
    "jbr_beats_magnitude": ("At 50% neuron sparsity on digits, JBR pruning gives a test loss "
                            "<= magnitude pruning's", "<=", 1.0, False),
    "jbr_beats_random": ("At 50% neuron sparsity on digits, JBR pruning gives a test loss "
                         "<= random pruning's", "<=", 1.0, False),
}


def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed``."""
    return claims_for(config_for(scale), DigitsConfig(), seed)


def claims_for(cfg: TPVConfig, dcfg: DigitsConfig, seed: int = 0,
               impl: str = "auto") -> list[Claim]:
    """The claims for explicit configs (the mutation test sets ``heff_source="reinit"``).
    Each block that fails to compute yields NaN claims with the reason, not an exception."""
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(("train_predicts_test", "small_n_deviates", "label_train_predicts_test")):
        _stability_claims(cfg, seed, table.add)
    with table.guard(("quant_trace_matches_mc",)):
        _quant_claim(cfg, seed, impl, table.add)
    with table.guard(("jbr_beats_magnitude", "jbr_beats_random")):
        _pruning_claims(dcfg, seed, table.add)
    order = list(CLAIM_SPECS)
    return sorted(table.claims, key=lambda c: order.index(c.name))


def _stability_claims(cfg: TPVConfig, seed: int, add) -> None:
    cfg.validate()
    recs = {(w, n): student_record(cfg, cfg.claim_teacher, w, cfg.claim_depth, n, seed)
            for w in cfg.widths for n in cfg.n_trains}

    def ratio(w, n, p):
        return recs[(w, n)][f"{p}_train"] / recs[(w, n)][f"{p}_test"]

    def worst(n, perts):
        return max((abs(ratio(w, n, p) - 1.0), w, p) for w in cfg.widths for p in perts)

    n_big, n_small = max(cfg.n_trains), min(cfg.n_trains)
    dev, w_at, p_at = worst(n_big, ("quant", "sgd"))
    shown = ", ".join(f"w{w} {ratio(w, n_big, 'quant'):.3f}/{ratio(w, n_big, 'sgd'):.3f}"
                      for w in cfg.widths)
    add("train_predicts_test", dev,
        f"max |TPV_train/TPV_test - 1| over widths {list(cfg.widths)} x (quant, sgd); "
        f"{cfg.claim_teacher} teacher, depth {cfg.claim_depth}, d={cfg.d}, {cfg.n_test} test "
        f"inputs; train/test ratio quant/sgd: {shown}; worst: width {w_at}, {p_at}")
    dev_small, w_s, p_s = worst(n_small, ("quant", "sgd"))
    add("small_n_deviates", dev_small - dev,
        f"worst deviation {dev_small:.3f} at n_train={n_small} (width {w_s}, {p_s}) minus "
        f"{dev:.3f} at n_train={n_big}")
    dev_l, w_l, _ = worst(n_big, ("label",))
    add("label_train_predicts_test", dev_l,
        f"linearised refits, ridge lam={cfg.label_lambda} (our stand-in for the paper's "
        f"early-stopped refits); worst at width {w_l}; ratios "
        + ", ".join(f"w{w} {ratio(w, n_big, 'label'):.3f}" for w in cfg.widths)
        + ". Not expected: the refit fits the noise AT the training inputs, so train TPV "
        "carries self-terms test TPV lacks; at lam=0.1 the widest student sits at 1.05-1.10 "
        "and crosses 10% on seed 3 of 0-4 (smaller lam: far worse, see the notebook)")


def _quant_claim(cfg: TPVConfig, seed: int, impl: str, add) -> None:
    cfg.validate()
    q = quant_claim_data(cfg, seed, max(cfg.n_trains), impl=impl)
    worst_q = max(q, key=lambda r: r["rel_err"])
    source = ("the perturbed network" if cfg.heff_source == "same"
              else "a RE-INITIALISED network (the pitfall)")
    add("quant_trace_matches_mc", worst_q["rel_err"],
        f"max |trace/MC - 1| over widths {list(cfg.widths)} on {cfg.mc_inputs} training "
        f"inputs, {cfg.mc_draws} noise draws (MC rel. SE <= "
        f"{max(r['mc_se'] / r['mc'] for r in q):.3f}); worst at width {worst_q['width']}: "
        f"trace {worst_q['trace']:.3e} vs MC {worst_q['mc']:.3e}; H_eff from {source}")


def _pruning_claims(dcfg: DigitsConfig, seed: int, add) -> None:
    at = pruning_claim_data(dcfg, seed)
    loss = {k: v["test_loss"] for k, v in at.items()}
    note = (f"test CE with {100 * dcfg.claim_sparsity:.0f}% of each hidden layer removed "
            f"(iterative 5% steps, no fine-tuning): JBR ({dcfg.metric} metric) "
            f"{loss['jbr']:.3f}, magnitude {loss['magnitude']:.3f}, random "
            f"{loss['random']:.3f}, unpruned {loss['none']:.3f}; measured = JBR / other. Not "
            "expected: removing half the neurons without fine-tuning is far outside the "
            "first-order regime and JBR scores neurons one by one (cross-terms between removed "
            "neurons dominate the joint TPV); on seeds 0-4 JBR beats magnitude on 0, 1, 4 and "
            "random on all but 3")
    add("jbr_beats_magnitude", loss["jbr"] / loss["magnitude"], note)
    add("jbr_beats_random", loss["jbr"] / loss["random"], note)
