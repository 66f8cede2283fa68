"""The claim rows of ``icml26.spurious_dpo`` (:class:`icml26.claims.ClaimSpec`), one dict per
group (channels, irreducibility, ties, neural); :mod:`icml26.spurious_dpo.claims` measures them.
A ``{name}`` in a statement is completed from the config where the claim is measured."""

from __future__ import annotations

from icml26.claims import ClaimSpec

#: the abstract's sentences the rows quote (``source``)
CHANNELS = ("standard preference-learning objectives induce reliance on spurious features at the "
            "population level through two channels: mean spurious bias and causal-spurious "
            "correlation leakage")
MECHANISMS = "characterizing the mechanisms of spurious learning"
TIES = "this approach selectively reduces spurious learning without degrading causal learning"
TIE_METHOD = ("To address this, we propose *tie training*, a data augmentation strategy using "
              "ties (equal-utility preference pairs) to introduce data-driven regularization")

CHANNEL_SPECS = {
    "mean_bias_theory": ClaimSpec(
        statement="\"Standard preference-learning objectives induce reliance on spurious "
                  "features at the population level through ... mean spurious bias\": the "
                  "population DPO optimum puts theta_s1 = 2m/sigma^2 on a mean-biased spurious "
                  "feature (within 10%, m >= 0.25)",
        op="<=", threshold=0.10, expected=True, role="headline", unit="each", source=CHANNELS),
    "no_spurious_without_cause": ClaimSpec(
        statement="Without mean bias or correlation (m = rho = 0) the population optimum puts "
                  "no weight on s (|theta_s| <= 0.03 at n = {n_population})",
        op="<=", threshold=0.03, expected=True, role="check", unit="each", source=""),
    "leakage_linear": ClaimSpec(
        statement="\"... and causal-spurious correlation leakage\": near the reference, the "
                  "weight leaked onto a correlated spurious feature is proportional to rho "
                  "(R^2 >= 0.98)",
        op=">=", threshold=0.98, expected=True, role="headline", unit="each", source=CHANNELS),
    "leakage_matches_linearised": ClaimSpec(
        statement="Near the reference, leakage matches the linearised prediction (Sigma + "
                  "lambda I)^-1 mu within 15%",
        op="<=", threshold=0.15, expected=True, role="mechanism", unit="each", source=CHANNELS),
    "leakage_vanishes": ClaimSpec(
        statement="At exact convergence with every cause observed the leakage channel vanishes "
                  "(|theta_s2| <= 0.03)",
        op="<=", threshold=0.03, expected=True, role="mechanism", unit="each",
        source=MECHANISMS),
    "hidden_cause_leaks": ClaimSpec(
        statement="With one causal coordinate hidden, s becomes its proxy even at convergence "
                  "(theta_s2 >= 0.1 at rho = 1)",
        op=">=", threshold=0.1, expected=True, role="mechanism", unit="each",
        source=MECHANISMS),
    "leakage_linearised_far": ClaimSpec(  # the spec's extension: the paper linearises near
        # the reference only
        statement="The linearised prediction also describes the spec's {far_steps}-step early "
                  "stopping (within 15%)",
        op="<=", threshold=0.15, expected=False, role="finding", unit="each", source=""),
}

IRREDUCIBLE_SPECS = {
    "irreducible_bias": ClaimSpec(
        statement="\"More data from the same training distribution fails to reduce the model's "
                  "dependence on spurious features\": theta_s1 does not shrink with data: "
                  "|theta_s1(n = {n_max}) - theta_s1(pop)| <= 0.05",
        op="<=", threshold=0.05, expected=True, role="headline", unit="each",
        source="more data from the same training distribution fails to reduce the model's "
               "dependence on spurious features"),
    "irreducible_ood_gap": ClaimSpec(
        statement="\"An irreducible vulnerability to distribution shift\": the ID-OOD accuracy "
                  "gap under a flipped bias does not close with data (gap at {n_max} >= 0.8x "
                  "gap at {n_lo})",
        op=">=", threshold=0.8, expected=True, role="headline", unit="each",
        source="this reliance creates an irreducible vulnerability to distribution shift"),
    "reducible_one_over_n": ClaimSpec(
        statement="The estimation error |theta_n - theta_pop|^2 decays like 1/n (falls >= 5x "
                  "from n = {n_lo} to {n_hi})",
        op=">=", threshold=5.0, expected=True, role="check", unit="each", source=""),
}

TIE_SPECS = {
    "ties_cut_30": ClaimSpec(
        statement="Tie training \"selectively reduces spurious learning\": ties at 30% of the "
                  "data cut |theta_s1| to <= 0.6x DPO's",
        op="<=", threshold=0.6, expected=True, role="headline", unit="mean", source=TIES),
    "ties_cut_50": ClaimSpec(
        statement="Ties at 50% of the data cut |theta_s1| to <= 0.4x DPO's",
        op="<=", threshold=0.4, expected=True, role="mechanism", unit="mean",
        source=TIE_METHOD),
    "ties_keep_causal": ClaimSpec(
        statement="Tie training keeps the causal direction: cos(theta_c, w*) >= 0.99",
        op=">=", threshold=0.99, expected=True, role="mechanism", unit="each", source=TIES),
    "ties_keep_accuracy": ClaimSpec(
        statement="Tie training costs <= 1 point of causal accuracy on neutral pairs (m' = 0)",
        op=">=", threshold=-0.01, expected=True, role="mechanism", unit="mean", source=TIES),
    "ties_help_ood": ClaimSpec(
        statement="Ties at 30% raise accuracy under a flipped bias (m' = -m) by >= 3 points",
        op=">=", threshold=0.03, expected=True, role="mechanism", unit="mean",
        source=TIE_METHOD),
    "ties_selective": ClaimSpec(
        statement="Tie training \"selectively reduces spurious learning without degrading "
                  "causal learning\": ties are selective: at the same |theta_s| as plain L2, "
                  "they avoid at least half of the causal weight L2 gives up, "
                  "(theta_c.w*(ties) - theta_c.w*(L2)) / (theta_c.w*(DPO) - theta_c.w*(L2)) "
                  ">= 0.5",
        op=">=", threshold=0.5, expected=True, role="headline", unit="mean", source=TIES),
    "forced_labels_hurt": ClaimSpec(
        statement="Naively feeding ties to DPO as wins/losses (labelled like every pair of the "
                  "pipeline) forfeits the tie effect: at 30% ties, tie training beats it by >= "
                  "3 points of accuracy under a flipped bias (m' = -m)",
        op=">=", threshold=0.03, expected=True, role="finding", unit="mean", source=""),
    "ties_keep_causal_weight": ClaimSpec(
        statement="Tie training reduces spurious learning \"without degrading causal "
                  "learning\": ties do not shrink the causal weight: theta_c . w* >= 0.98x "
                  "DPO's",
        op=">=", threshold=0.98, expected=True, role="headline", unit="mean", source=TIES),
}

NEURAL_SPECS = {
    "neural_ties_cut": ClaimSpec(
        statement="\"The benefits of tie training persist for neural networks\": ties at 30% "
                  "cut a 2-layer MLP reward's spurious sensitivity E|dr/ds1| by >= 30%",
        op="<=", threshold=0.7, expected=True, role="headline", unit="mean",
        source="the benefits of tie training persist for neural networks"),
}
