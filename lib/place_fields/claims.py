"""The claims of ``place_fields``: scale presets, the claim rows and how each is measured.

Binding (expected on seeds 0-4 at quick scale): the F1 width gradient, the F2 trade-off and
the Gaussian and power HIPE kernels of F3.  Reported: ``hipe_other_decays_fit`` (the exp
kernel misses its closed form at small sigma on the spec's window), ``hipe_exp_monotone``
(our finding, expected to fail) and the derived toy LM of F4 (``hipe_data_efficiency``).

Second design of F4 (issue 47, ``CLAIMS_VERSION`` 2).  The first design trained every data
size from scratch for the same 300 steps x batch 16 = 4,800 sequences, so the sizes 4,096 and
16,384 saw 1.2 and 0.3 epochs: the top of the data axis measured optimisation, not data, and a
lag-copy task in a 32-token context is one RoPE learns as easily (+-0.005 nats, 8/32 seeds;
``benchmarks/place_fields/place_fields_diagnosis.py``).  The second design follows the
authors' protocol at toy scale: pretrain on one synthetic source (lag windows 1, 4, 16),
adapt on k = 2, 8, 32, 128 sequences of a shifted source (windows 4, 16, 64) in a 128-token
context, HIPE in the upper layer only, every adaptation early-stopped on validation with the
same rule for RoPE and both HIPEs (:mod:`icml26.place_fields.adapt`).  Threshold, op, role,
unit and expected flag are unchanged; the statement says what is now measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import config_for as preset
from icml26.common import resolve_device
from icml26.place_fields import lm
from icml26.place_fields.decay import DECAYS, HALF_WIDTH_GAUSSIAN, PAPER
from icml26.place_fields.grid import GridConfig, figure_field_gradient_data
from icml26.place_fields.hipe import (
    HipeConfig,
    figure_fit_windows_data,
    figure_hipe_kernels_data,
    max_upward_step,
)
from icml26.place_fields.regression import RegressionConfig, figure_tradeoff_data
from icml26.place_fields.task import LMConfig, paper_config

#: Whether hipe_data_efficiency is expected at quick scale.  First design: measured (worst
#: slack, nats) seed 0 +0.005, 1 +0.005, 2 -0.005, 3 -0.005, 4 -0.005, so reported, not
#: expected.  The second design keeps it unexpected: fixed before any of its seeds ran (issue
#: 47: thresholds and flags stay; a headline that fails under the fair design is reported).
#: Measured after: seeds 0-15 mean -0.038 (BCa 95% -0.046 to -0.032), 0/16; fresh seeds
#: 100-104 mean -0.049, 0/5 (HIPE-multi's deficit is inherited from pretraining).
EXPECT_EFFICIENCY = False

#: 2: F4's second design (issue 47): pretrain, adapt on k samples of a shifted source
CLAIMS_VERSION = 2

#: name: ClaimSpec; a statement that names a config value is
#: completed from the config when the claim is measured. Roles: the abstract's results are
#: the continuous gradient of place-field widths from decaying grid projections, the
#: precision / sample-efficiency trade-off and HIPE's data efficiency (headlines); what they
#: rest on is mechanism (the width range, sigma* following the target's scale, the Gaussian
#: HIPE kernel and the kernels' monotone shape); the exp / power kernels' closed forms (the
#: spec's extension) and hipe_exp_monotone are findings, not statements of the paper; plain
#: RoPE's oscillating kernel is the closed-form contrast that shows the monotonicity claim
#: can fail (check).
CLAIM_SPECS = {
    "fwhm_monotone": ClaimSpec(
        statement="\"Multiscale hippocampal place fields arise from the frequency-dependent "
                  "decay of grid cell projections\": place-field width grows monotonically "
                  "with the decay width sigma",
        op=">=", threshold=0.95, expected=True, role="headline", unit="each",
        source="multiscale hippocampal place fields arise from the frequency-dependent decay "
               "of grid cell projections"),
    "fwhm_continuous": ClaimSpec(
        statement="The \"continuous gradient\" arises \"from discrete grid cell inputs\": field "
                  "width varies continuously although only {n_modules} grid spacings exist",
        op=">=", threshold=20, expected=True, role="headline", unit="each",
        source="this continuous gradient from discrete grid cell inputs"),
    "fwhm_range": ClaimSpec(
        statement="The widest field (max sigma) is at least twice the narrowest "
                  "(sigma = {sigma0:g})",
        op=">=", threshold=2.0, expected=True, role="mechanism", unit="each",
        source="how multiscale hippocampal place fields arise from the frequency-dependent "
               "decay of grid cell projections"),
    "sigma_star_tracks_ell": ClaimSpec(
        statement="The optimal field width sigma* grows with the target's length-scale ell",
        op=">=", threshold=0.9, expected=True, role="mechanism", unit="each",
        source="managing a fundamental trade-off between spatial precision and sample "
               "efficiency"),
    "mse_u_shaped": ClaimSpec(
        statement="\"A fundamental trade-off between spatial precision and sample "
                  "efficiency\": test MSE is U-shaped in sigma, both ends >= 1.2x the minimum",
        op=">=", threshold=1.2, expected=True, role="headline", unit="each",
        source="a fundamental trade-off between spatial precision and sample efficiency"),
    "hipe_gaussian_width": ClaimSpec(
        statement="Gaussian HIPE gives a place field of half-width 1.18 sigma",
        op="<=", threshold=0.1, expected=True, role="mechanism", unit="each",
        source="we incorporate a hippocampus-inspired positional embedding (HIPE) into the "
               "Transformer architecture to induce multi-scale representation"),
    "hipe_gaussian_fit": ClaimSpec(
        statement="The Gaussian HIPE kernel is a Gaussian of width sigma",
        op=">=", threshold=0.99, expected=True, role="mechanism", unit="each",
        source="we incorporate a hippocampus-inspired positional embedding (HIPE) into the "
               "Transformer architecture to induce multi-scale representation"),
    "hipe_other_decays_fit": ClaimSpec(
        statement="exp / power HIPE kernels match exp(-|Delta|/sigma) and "
                  "sigma²/(sigma²+Delta²)",
        op=">=", threshold=0.95, expected=False, role="finding", unit="each", source=""),
    "hipe_monotone": ClaimSpec(
        statement="Gaussian and power HIPE kernels decrease monotonically on "
                  "[0, {window:g} sigma]",
        op="<", threshold=1e-3, expected=True, role="mechanism", unit="each",
        source="we incorporate a hippocampus-inspired positional embedding (HIPE) into the "
               "Transformer architecture to induce multi-scale representation"),
    "hipe_exp_monotone": ClaimSpec(
        statement="The exp-decay HIPE kernel decreases monotonically on [0, {window:g} sigma]",
        op="<", threshold=1e-3, expected=False, role="finding", unit="each", source=""),
    "rope_not_monotone": ClaimSpec(
        statement="Plain RoPE's kernel oscillates (is not monotone) on [0, {max_dist}]",
        op=">", threshold=1e-3, expected=True, role="check", unit="each", source=""),
    "hipe_data_efficiency": ClaimSpec(
        statement="\"This mechanism effectively improves data efficiency\": pretrained on one "
                  "source and adapted on k sequences of a shifted one, multi-sigma HIPE (upper "
                  "layer) reaches a lower early-stopped test loss than RoPE at the two "
                  "smallest k (by > 1 SE) and is no worse than 0.02 nats at the largest",
        op=">", threshold=0.0, expected=EXPECT_EFFICIENCY, role="headline", unit="mean",
        source="this mechanism effectively improves data efficiency"),
}

PARTS = ("f1", "f2", "f3", "f4")
F1_CLAIMS = ("fwhm_monotone", "fwhm_continuous", "fwhm_range")
F2_CLAIMS = ("sigma_star_tracks_ell", "mse_u_shaped")


@dataclass(frozen=True)
class PlaceFieldsConfig:
    """Everything ``claims`` runs: one sub-config per figure."""

    grid: GridConfig = field(default_factory=GridConfig)
    regression: RegressionConfig = field(default_factory=RegressionConfig)
    hipe: HipeConfig = field(default_factory=HipeConfig)
    lm: LMConfig | None = None  # the toy LM of F4; None = LMConfig()


#: ``quick``: CI and notebooks.  ``paper``: closer to the paper (more trials, 3 seeds and the
#: spec's 2-layer d=64 toy LM; for a GPU or a patient user).
SCALES = {
    "quick": PlaceFieldsConfig(lm=LMConfig()),
    "paper": PlaceFieldsConfig(regression=RegressionConfig(trials=128), lm=paper_config()),
}


def config_for(scale: str) -> PlaceFieldsConfig:
    """The preset named ``scale`` (``"quick"`` or ``"paper"``)."""
    return preset(SCALES, scale)


def spearman(a, b) -> float:
    """Spearman's rho of two sequences (NaN when undefined)."""
    from scipy.stats import spearmanr

    rho = spearmanr(np.asarray(a, dtype=float), np.asarray(b, dtype=float))[0]
    return float(rho) if np.isfinite(rho) else float("nan")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device``: the F2
    ridge solves and the F4 toy LM (trained per device type, cached) run there; F1 and F3
    are closed-form float64 kernel sums, computed on the CPU whatever the device."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, device=dev)


def claims_for(cfg: PlaceFieldsConfig, seed: int = 0,
               parts: Sequence[str] = PARTS, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (mutation tests swap FWHM method / drop omega).

    ``parts`` picks figures (``"f1"`` grid -> place, ``"f2"`` regression, ``"f3"`` HIPE
    kernels, ``"f4"`` the toy LM) so a test can recompute only what it checks.
    """
    dev = resolve_device(device)
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"parts must be among {PARTS}, got {sorted(unknown)}")
    table = ClaimTable(PAPER, CLAIM_SPECS)
    if "f1" in parts:
        claims_f1(cfg.grid, table)
    if "f2" in parts:
        claims_f2(cfg.regression, seed, table, dev)
    if "f3" in parts:
        claims_f3(cfg.hipe, table)
    if "f4" in parts:
        table.claims.append(lm_claim(cfg.lm, seed, dev))
    return table.claims


def statement(name: str, **values) -> str:
    """The claim row's statement, completed with config values."""
    return CLAIM_SPECS[name][0].format(**values)


def claims_f1(g: GridConfig, table: ClaimTable) -> None:
    f1 = figure_field_gradient_data(g)
    w = f1["fwhm"]
    table.add("fwhm_monotone", spearman(f1["sigma"], w),
              note=f"Spearman rho(sigma, FWHM) over {len(w)} sigmas in [{g.sigmas[0]}, "
              f"{g.sigmas[-1]}] m, {g.n_modules} modules, {g.decay} decay; spec prototype "
              "0.9999")
    distinct = len({int(round(v / g.dx)) for v in w})
    table.add("fwhm_continuous", distinct,
              statement=statement("fwhm_continuous", n_modules=g.n_modules),
              note=f"distinct FWHM values on the {g.dx * 1000:g} mm grid out of {len(w)} "
              "sigmas (spec prototype 30)")
    table.add("fwhm_range", float(w[-1] / w[0]) if w[0] > 0 else float("nan"),
              statement=statement("fwhm_range", sigma0=g.sigmas[0]),
              note=f"FWHM {w[0]:.3f} m -> {w[-1]:.3f} m (spec prototype 0.20 -> 0.52)")


def claims_f2(r: RegressionConfig, seed: int, table: ClaimTable, device="cpu") -> None:
    f2 = figure_tradeoff_data(r, seed, device)
    mse, star, ns = f2["mse"], f2["sigma_star"], list(f2["n_train"])
    big = [i for i, n in enumerate(ns) if n >= 20]
    tracked = [i for i, n in enumerate(ns) if n in (20, 80)]
    rhos = [spearman(f2["ell"], star[i]) for i in tracked]
    shown = ", ".join(f"{s:.3f}" for s in star[tracked[0]]) if tracked else "-"
    table.add("sigma_star_tracks_ell", min(rhos) if rhos else float("nan"),
              note=f"worst Spearman rho(ell, sigma*) over n in {{20, 80}}; sigma* for ell = "
              f"{list(r.ells)} at n = {ns[tracked[0]] if tracked else '-'}: {shown} "
              "(spec prototype 0.012/0.023/0.082/0.195)")
    ends = [min(mse[0, i, j], mse[-1, i, j]) / mse[:, i, j].min()
            for i in big for j in range(len(f2["ell"]))]
    table.add("mse_u_shaped", min(ends) if ends else float("nan"),
              note=f"worst (end MSE / min MSE) over ell in {list(r.ells)} and n >= 20, sigma "
              f"in [{r.sigmas[0]}, {r.sigmas[-1]}]; {r.trials} trials; n = 5 is not asserted "
              "(spec)")


def claims_f3(h: HipeConfig, table: ClaimTable) -> None:
    f3 = figure_hipe_kernels_data(h)
    ga = f3["gaussian"]
    table.add("hipe_gaussian_width",
              float(np.max(np.abs(ga["half_width"] / f3["sigmas"] - HALF_WIDTH_GAUSSIAN))),
              note=f"max |half-width/sigma - 1.18| over sigma in {list(h.sigmas)}, head_dim "
              f"{h.head_dim}, base {h.base:g}")
    table.add("hipe_gaussian_fit", float(np.min(ga["r2"])),
              note=f"min R² against exp(-Delta²/2sigma²) (no free parameter) on [0, "
              f"{h.window:g} sigma], the spec's F3 window; spec prototype >= 0.998")
    other = [float(np.min(f3[d]["r2"])) for d in ("exp", "power")]
    exp_r2 = f3["exp"]["r2"]
    sweep = figure_fit_windows_data(h)
    worst = np.minimum(sweep["exp"]["worst"], sweep["power"]["worst"])
    table.add("hipe_other_decays_fit", min(other),
              note=f"min R² (exp {other[0]:.3f}, power {other[1]:.3f}) on [0, {h.window:g} "
              "sigma]: the spec's F3 window, the only one it states for a HIPE kernel, fixed "
              "before looking at R². exp R² by sigma: "
              + ", ".join(f"{sg:g}: {r:.3f}" for sg, r in zip(h.sigmas, exp_r2))
              + "; low at small sigma because RoPE's band stops at omega = 1 rad/token and cuts "
              "the slowly decaying exp spectrum 1/(1+sigma²omega²), the same cut as "
              "hipe_exp_monotone. The verdict depends on the window (worst R² on [0, w sigma]: "
              + ", ".join(f"w={w:g} {r:.3f}" for w, r in zip(sweep["window"], worst))
              + "); spec prototype exp >= 0.95 for sigma >= 4, power >= 0.96")
    ups = {d: float(np.max(f3[d]["max_up"])) for d in DECAYS}
    window = statement("hipe_monotone", window=h.window)
    table.add("hipe_monotone", max(ups["gaussian"], ups["power"]), statement=window,
              note=f"largest upward step of K/K(0): gaussian {ups['gaussian']:.1e}, power "
              f"{ups['power']:.1e} over sigma in {list(h.sigmas)}")
    table.add("hipe_exp_monotone", ups["exp"],
              statement=statement("hipe_exp_monotone", window=h.window),
              note="its spectrum 1/(1+sigma²omega²) falls off slowly, so cutting it at RoPE's "
              "omega_max = 1 rad/token leaves Gibbs ripples of ~2% (its cusp at Delta=0 needs "
              "higher frequencies than RoPE has); our finding, not a claim of the paper")
    table.add("rope_not_monotone", max_upward_step(torch.as_tensor(f3["rope"])),
              statement=statement("rope_not_monotone", max_dist=h.max_dist),
              note=f"largest upward step of RoPE's K/K(0); its minimum is "
              f"{f3['rope'].min():.2f} (spec prototype 0.08)")


def efficiency_claim(frame, cfg: LMConfig | None = None, seed: int = 0) -> Claim:
    """``hipe_data_efficiency`` from the F4 table: the worst slack in nats (> 0 holds).

    Slack at each of the two smallest sizes: ``(RoPE - HIPE_multi) - SE`` (paired SE over
    seeds); at the largest: ``0.02 - (HIPE_multi - RoPE)``.
    """
    cfg = LMConfig() if cfg is None else cfg
    sizes = sorted(cfg.sizes)
    multi = frame[frame.variant == "hipe_multi"].set_index("size")
    slack = [(-multi.loc[s, "diff_mean"]) - multi.loc[s, "diff_se"] for s in sizes[:2]]
    slack.append(0.02 - multi.loc[sizes[-1], "diff_mean"])
    name = "k" if cfg.protocol == "adapt" else "n"
    detail = "; ".join(f"{name}={s}: HIPE-multi - RoPE = {multi.loc[s, 'diff_mean']:+.3f} ± "
                       f"{multi.loc[s, 'diff_se']:.3f}" for s in sizes)
    if cfg.protocol == "adapt":
        late = frame.attrs.get("unconverged")
        design = (f"second design (issue 47): {cfg.n_layers}-layer d={cfg.d_model} LM, HIPE "
                  f"in the upper {cfg.hipe_layers}, pretrained {cfg.pretrain_steps} steps on "
                  f"lag windows {list(cfg.windows)}, adapted on k sequences of windows "
                  f"{list(cfg.shift_windows)} (context {cfg.seq_len}), each early-stopped on "
                  f"{cfg.n_val} validation sequences (<= {cfg.steps} steps, checked every "
                  f"{cfg.eval_every}), scored on {cfg.n_test} test sequences"
                  + ("" if late is None else f"; {late} member(s) still improving at the "
                     "last step" if late else "; every member's best checkpoint came before "
                     "its last step"))
    else:
        design = (f"first design: {cfg.n_layers}-layer d={cfg.d_model} LM trained from "
                  f"scratch {cfg.steps} steps per size")
    table = ClaimTable(PAPER, CLAIM_SPECS)
    return table.add("hipe_data_efficiency", float(np.min(slack)),
                     note=f"{design}; seeds {seed}..{seed + cfg.n_seeds - 1}, paired SE; "
                     "worst slack in nats; each seed's training is cached on disk by config "
                     f"and seed (trained here from scratch when absent; no shipped weights). "
                     f"{detail}")


def lm_claim(lm_cfg: LMConfig | None = None, seed: int = 0, device: str = "cpu") -> Claim:
    """The F4 claim (trained on ``device``); NaN with a note if the training failed."""
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(["hipe_data_efficiency"]):
        frame = lm.figure_data_efficiency_data(lm_cfg, seed, device=device)
        return efficiency_claim(frame, lm_cfg, seed)
    return table.claims[0]
