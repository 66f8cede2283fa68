"""The claims of :mod:`icml26.tpv`: one spec row per claim (a
:class:`~icml26.claims.ClaimSpec`), measured on the cached students, the quantization
comparison and digits pruning.

Roles: the abstract's results are the train-to-test stability of TPV (quantization/SGD and
label noise), "TPV correlates well with test loss" and JBR "matching state-of-the-art
baselines" (headlines); the trace form ``Tr(H_eff C)`` against Monte Carlo is what every TPV
here rests on (mechanism); the small-``n_train`` deviation is the scatter's control (the
stability claim is not true by construction: with few training inputs TPV_train does move
away from TPV_test), a check.

CLAIMS_VERSION 2 (issue 46 item 8, fixed before any seed ran on it): JBR scores neurons by
the TPV of removal on the logits (it was the softmax-Fisher metric, nearly 0 on training
inputs at train CE ~0.02); every criterion gets the same short fine-tune after pruning;
"matching state-of-the-art baselines" is non-inferiority against magnitude pruning with a
margin of 10% of magnitude's test loss (``jbr_matches_magnitude``, was
``jbr_beats_magnitude``); label-noise TPV by the paper's early-stopped refits
(:mod:`icml26.tpv.refits`), not a ridge refit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.tpv.figures import figure_scatter_data, quant_claim_data
from icml26.tpv.pruning import DigitsConfig, pruning_claim_data
from icml26.tpv.students import PAPER, TPVConfig, config_for
from icml26.tpv.tracking import rank_correlation

if TYPE_CHECKING:
    import pandas as pd

#: the abstract's sentences the rows quote (``source``)
CONVERGES = "training-set TPV converges to its test-set counterpart in the overparameterized limit"
JBR = ("JBR, a label-free pruning criterion derived from TPV geometry matching state-of-the-art "
       "baselines")
CLAIMS_VERSION = 2
#: the non-inferiority margin of jbr_matches_magnitude, fixed in writing before any seed
JBR_MARGIN = 0.10


def claim_specs(cfg: TPVConfig, dcfg: DigitsConfig) -> dict[str, ClaimSpec]:
    """The spec rows (:class:`~icml26.claims.ClaimSpec`), statements written from the configs
    (the training-set sizes, bit width and sparsity they were measured at)."""
    n_big, n_small = max(cfg.n_trains), min(cfg.n_trains)
    sparsity = f"{100 * dcfg.claim_sparsity:.0f}%"
    return {
        "train_predicts_test": ClaimSpec(
            statement="\"Training-set TPV converges to its test-set counterpart\" and \"this "
                      "stability holds far more broadly, including at very low widths\": TPV on "
                      "training inputs predicts TPV on test inputs within 10% at n_train = "
                      f"{n_big} (quantization and SGD noise, every teacher, depth and width of "
                      "the scatter)",
            op="<=", threshold=0.1, expected=False, role="headline", unit="each",
            source="this stability holds far more broadly, including at very low widths"),
        "quant_trace_matches_mc": ClaimSpec(
            statement="The trace form sigma_q^2 Tr H_eff matches Monte Carlo quantization TPV "
                      f"within 20% at {cfg.bits} bits (every width)",
            op="<=", threshold=0.2, expected=True, role="mechanism", unit="each",
            source=r"TPV's trace form $\mathrm{Tr}(H_{\mathrm{eff}}C)$ separates the geometry "
                   r"of the trained model $H_{\mathrm{eff}}$ from the perturbation covariance "
                   r"$C$"),
        "small_n_deviates": ClaimSpec(
            statement=f"At n_train = {n_small} train TPV deviates from test TPV more than at "
                      f"n_train = {n_big} (worst over the scatter)",
            op=">", threshold=0.0, expected=True, role="check", unit="each", source=""),
        "label_train_predicts_test": ClaimSpec(
            statement="\"Training-set TPV converges to its test-set counterpart\" for label "
                      "noise: label-noise TPV on training inputs predicts test TPV within 10% "
                      f"at n_train = {n_big} (every teacher, depth and width of the scatter)",
            op="<=", threshold=0.1, expected=False, role="headline", unit="each",
            source=CONVERGES),
        "tpv_tracks_test_loss": ClaimSpec(
            statement="\"TPV correlates well with test loss\": across the scatter, training-set "
                      "TPV ranks the measured test-loss increase under the perturbation "
                      "(Spearman >= 0.7 for quantization, SGD and label noise)",
            op=">=", threshold=0.7, expected=False, role="headline", unit="each",
            source="TPV correlates well with test loss"),
        "jbr_matches_magnitude": ClaimSpec(
            statement="JBR, a label-free pruning criterion \"matching state-of-the-art "
                      f"baselines\": at {sparsity} neuron sparsity on digits, after the same "
                      f"short fine-tune ({dcfg.finetune_steps} steps) for both, JBR's test loss "
                      f"is non-inferior to magnitude pruning's (within a {100 * JBR_MARGIN:.0f}% "
                      "margin fixed before any seed)",
            op="<=", threshold=1.0 + JBR_MARGIN, expected=False, role="headline", unit="mean",
            source=JBR),
        "jbr_beats_random": ClaimSpec(
            statement="JBR, a label-free pruning criterion \"derived from TPV geometry\": at "
                      f"{sparsity} neuron sparsity on digits, after the same short fine-tune "
                      f"({dcfg.finetune_steps} steps) for both, JBR's test loss is <= random "
                      "pruning's",
            op="<=", threshold=1.0, expected=False, role="headline", unit="mean", source=JBR),
    }


#: The quick-scale rows (module-level, static once imported: the same names and expected
#: flags at every scale; only the statements' n_train / bits / sparsity follow the config).
CLAIM_SPECS = claim_specs(config_for("quick"), DigitsConfig())
SCATTER_CLAIMS = ("train_predicts_test", "small_n_deviates", "label_train_predicts_test",
                  "tpv_tracks_test_loss")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (students
    and the digits classifier trained there, from CPU-drawn data and initial weights; trained
    models cached per device type)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), DigitsConfig(), seed, device=dev)


def claims_for(cfg: TPVConfig, dcfg: DigitsConfig, seed: int = 0, impl: str = "auto",
               mutate_scatter: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
               device: str = "cpu") -> list[Claim]:
    """The claims for explicit configs. Each block that fails to compute yields NaN claims
    with the reason, not an exception. The mutation tests inject their mistakes here:
    ``cfg.heff_source="reinit"``, or ``mutate_scatter`` applied to the measured scatter
    (:func:`icml26.tpv.figure_scatter_data` with the loss increases) before its claims."""
    dev = resolve_device(device)
    specs = claim_specs(cfg, dcfg)
    table = ClaimTable(PAPER, specs)
    with table.guard(SCATTER_CLAIMS):
        cfg.validate()
        points = figure_scatter_data(cfg, seed, with_loss=True, impl=impl, device=dev)
        if mutate_scatter is not None:
            points = mutate_scatter(points)
        _scatter_claims(cfg, points, table.add)
    with table.guard(("quant_trace_matches_mc",)):
        _quant_claim(cfg, seed, impl, table.add, dev)
    with table.guard(("jbr_matches_magnitude", "jbr_beats_random")):
        _pruning_claims(dcfg, seed, table.add, dev)
    order = list(specs)
    return sorted(table.claims, key=lambda c: order.index(c.name))


def _worst(points: pd.DataFrame, n_train: int, perturbations) -> pd.Series:
    """The scatter point with the largest ``|TPV_train / TPV_test - 1|`` (column ``dev``)."""
    sub = points[(points.n_train == n_train) & points.perturbation.isin(perturbations)]
    return sub.assign(dev=(sub.ratio - 1.0).abs()).sort_values("dev").iloc[-1]


def _where(row: pd.Series) -> str:
    return (f"{row.teacher} teacher, depth {row.depth}, width {row.width}, {row.perturbation} "
            f"(ratio {row.ratio:.3f})")


def _scatter_claims(cfg: TPVConfig, points: pd.DataFrame, add) -> None:
    n_big, n_small = max(cfg.n_trains), min(cfg.n_trains)
    scope = (f"{len(cfg.teachers)} teachers x depths {list(cfg.depths)} x widths "
             f"{list(cfg.widths)}, d={cfg.d}, {cfg.n_test} test inputs")
    shortcut = ("trace forms from exact per-sample Jacobians of the trained students (cached "
                "by their settings, trained from the seed); SGD noise via the Gauss-Newton "
                "Hessian 2 H_eff(train)")
    lens = ("quant", "sgd")
    top = _worst(points, n_big, lens)
    big = points[(points.n_train == n_big) & points.perturbation.isin(lens)]
    per_cell = (big.assign(dev=(big.ratio - 1).abs()).groupby(["teacher", "depth"]).dev.max())
    cells = ", ".join(f"{t}/d{d} {v:.3f}" for (t, d), v in per_cell.items())
    add("train_predicts_test", top.dev,
        f"max |TPV_train/TPV_test - 1| over {scope} x (quant, sgd) at n_train={n_big}; worst: "
        f"{_where(top)}; worst per teacher/depth: {cells}; {shortcut}. Not expected: over the "
        "whole scatter it fails on seed 0 of 0-4 (relu teacher, depth 3, width 256, SGD noise: "
        "ratio 1.108) and holds on 1-4 (0.047-0.072); the old one-teacher, depth-3 case set "
        "hid that")
    small = _worst(points, n_small, lens)
    add("small_n_deviates", small.dev - top.dev,
        f"worst deviation {small.dev:.3f} at n_train={n_small} ({_where(small)}) minus "
        f"{top.dev:.3f} at n_train={n_big}, over {scope}; {shortcut}")
    lab = _worst(points, n_big, ("label",))
    add("label_train_predicts_test", lab.dev,
        f"max over {scope} at n_train={n_big}; worst: {_where(lab)}; {_refit(cfg)}. Not "
        "expected (decided before results): the refit fits the noise AT the training inputs, "
        "so train TPV carries self-terms test TPV lacks (version 1, ridge lam=0.1 standing "
        "in for the refits: held on 5 of 16 seeds)")
    rho = {p: rank_correlation(g.tpv_train, g.loss_increase)
           for p, g in points.groupby("perturbation", sort=False)}
    rho_test = {p: rank_correlation(g.tpv_test, g.loss_increase)
                for p, g in points.groupby("perturbation", sort=False)}
    worst_p = min(rho, key=lambda p: rho[p])
    add("tpv_tracks_test_loss", rho[worst_p],
        f"min over perturbations of Spearman(TPV_train, measured test-MSE increase) over the "
        f"{int((points.perturbation == worst_p).sum())} students of the scatter ({scope}, "
        f"n_train {list(cfg.n_trains)}): "
        + ", ".join(f"{p} {v:.3f}" for p, v in rho.items())
        + "; with TPV_test: " + ", ".join(f"{p} {v:.3f}" for p, v in rho_test.items())
        + f". Threshold 0.7 set from the abstract's 'correlates well' before measuring. Loss "
        f"increase: {cfg.loss_pairs} antithetic pairs w* +- du per point on the first "
        f"{cfg.loss_inputs} test inputs, du "
        "drawn from each trace form's C (uniform dither; Gaussian with the Gauss-Newton SGD "
        "covariance, not SGD iterates; label: " + _refit(cfg) + "). Not "
        "expected: quantization falls to 0.647 on seed 3 (0.73-0.86 on seeds 0-2, 4). On "
        "seeds 0 and 3, TPV ranks the quantization increases at 0.92-0.97 at n_train=1000 but "
        "at about 0.3 at n_train=10, where the increase departs from TPV_test by more than 3 SE "
        "at 14 of the 36 quantization points (the residual-weighted second-order term TPV "
        "ignores, not Monte Carlo noise: median SE 7-8% of the increase)")


def _refit(cfg: TPVConfig) -> str:
    if cfg.label_refit == "ridge":
        return f"linearised ridge refits, lam={cfg.label_lambda:g}"
    return (f"linearised early-stopped refits as the paper's (from w* on f* + eps, "
            f"{cfg.label_epochs} full-batch epochs of SGD, momentum {cfg.label_momentum:g}, lr "
            f"{cfg.label_lr:g}, cosine, proximity {cfg.label_lambda:g} ||w - w*||^2), exact "
            "mode by mode in the NTK eigenbasis")


def _quant_claim(cfg: TPVConfig, seed: int, impl: str, add, device="cpu") -> None:
    cfg.validate()
    q = quant_claim_data(cfg, seed, max(cfg.n_trains), impl=impl, device=device)
    worst_q = max(q, key=lambda r: r["rel_err"])
    source = ("the perturbed network" if cfg.heff_source == "same"
              else "a RE-INITIALISED network (the pitfall)")
    add("quant_trace_matches_mc", worst_q["rel_err"],
        f"max |trace/MC - 1| over widths {list(cfg.widths)} on {cfg.mc_inputs} training "
        f"inputs, {cfg.mc_draws} noise draws (MC rel. SE <= "
        f"{max(r['mc_se'] / r['mc'] for r in q):.3f}); worst at width {worst_q['width']}: "
        f"trace {worst_q['trace']:.3e} vs MC {worst_q['mc']:.3e}; H_eff from {source} "
        "(exact per-sample Jacobians; students trained from the seed and cached)")


def _pruning_claims(dcfg: DigitsConfig, seed: int, add, device="cpu") -> None:
    for name, (value, note) in pruning_claim_values(dcfg, seed, device).items():
        add(name, value, note)


def pruning_claim_values(dcfg: DigitsConfig, seed: int, device="cpu"
                         ) -> dict[str, tuple[float, str]]:
    """``{claim: (measured, note)}`` of the two pruning claims (the mutation tests read it
    over many seeds without the rest of the claims)."""
    at = pruning_claim_data(dcfg, seed, device)
    ft = {k: v.get("test_loss_ft", v["test_loss"]) for k, v in at.items()}
    raw = {k: v["test_loss"] for k, v in at.items()}
    acc = {k: v.get("test_acc_ft", v["test_acc"]) for k, v in at.items()}
    scores = "" if dcfg.jbr_scores == "tpv" else \
        f" JBR's scores REPLACED ({dcfg.jbr_scores}: the mutation);"
    note = (f"test CE with {100 * dcfg.claim_sparsity:.0f}% of each hidden layer removed "
            f"(iterative 5% steps), then the same fine-tune for every criterion "
            f"({dcfg.finetune_steps} full-batch AdamW steps, lr {dcfg.finetune_lr:g}, cosine, "
            f"removed neurons held at zero): JBR ({dcfg.metric} metric) {ft['jbr']:.4f}, "
            f"magnitude {ft['magnitude']:.4f}, random {ft['random']:.4f} (accuracy "
            f"{acc['jbr']:.3f} / {acc['magnitude']:.3f} / {acc['random']:.3f}); before the "
            f"fine-tune {raw['jbr']:.3f} / {raw['magnitude']:.3f} / {raw['random']:.3f}; "
            f"unpruned {raw['none']:.4f}.{scores} Classifier trained from the seed and cached; "
            "JBR from exact per-sample layer factors, label-free; measured = JBR / other. "
            f"Non-inferiority margin {100 * JBR_MARGIN:.0f}% of magnitude's loss and the "
            "fine-tune fixed before any seed (issue 46)")
    return {"jbr_matches_magnitude": (ft["jbr"] / ft["magnitude"], note),
            "jbr_beats_random": (ft["jbr"] / ft["random"], note)}
