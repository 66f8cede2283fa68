"""Figure data of :mod:`icml26.tpv` (data, never plots; shared by the notebook, the
dashboard and the tests): F1 the universal scatter (optionally with the measured test-loss
increase of every point), the label-noise ridge sweep, F2
quantization TPV against bits, and the cached 8-bit trace-vs-Monte-Carlo comparison."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from icml26.common import device_key
from icml26.tpv.estimators import (
    flat_params,
    heff_trace,
    quant_step,
    tpv_quant_mc,
    tpv_quant_trace,
)
from icml26.tpv.students import (
    TPVConfig,
    cached,
    heff_network,
    student_record,
    train_student,
)
from icml26.tpv.tracking import TRACKED, loss_record


def figure_scatter_data(cfg: TPVConfig, seed: int = 0, progress=None,
                        perturbations: Sequence[str] = TRACKED, with_loss: bool = False,
                        impl: str = "auto", device: str | torch.device = "cpu"):
    """F1: one row per (student, perturbation) with TPV on train and test inputs, their ratio
    and the student's generalization gap (test MSE - train MSE). ``with_loss`` adds the
    measured test-loss increase under the perturbation and its standard error
    (``loss_increase``, ``loss_increase_se``; :func:`icml26.tpv.tracking.loss_record`)."""
    import pandas as pd

    cfg.validate()
    rows = []
    for teacher in cfg.teachers:
        for depth in cfg.depths:
            for width in cfg.widths:
                for n in cfg.n_trains:
                    rec = student_record(cfg, teacher, width, depth, n, seed, device)
                    loss = (loss_record(cfg, teacher, width, depth, n, seed, impl, device)
                            if with_loss else {})
                    for p in perturbations:
                        row = {"teacher": teacher, "depth": depth, "width": width,
                               "n_train": n, "perturbation": p,
                               "tpv_train": rec[f"{p}_train"], "tpv_test": rec[f"{p}_test"],
                               "ratio": rec[f"{p}_train"] / rec[f"{p}_test"],
                               "gap": rec["gap"], "loss_train": rec["loss_train"],
                               "loss_test": rec["loss_test"]}
                        if with_loss:
                            row |= {"loss_increase": loss[p]["mean"],
                                    "loss_increase_se": loss[p]["se"]}
                        rows.append(row)
                    if progress is not None:
                        progress(1)
    return pd.DataFrame(rows)


def figure_label_lambda_data(cfg: TPVConfig, seed: int = 0):
    """Label-noise TPV train/test ratio against the refit's ridge ``lam`` for the claim
    students (teacher ``cfg.claim_teacher``, depth ``cfg.claim_depth``), one row per
    (width, n_train, lam). Reads the cached records of the claims."""
    import pandas as pd

    cfg.validate()
    rows = []
    for w in cfg.widths:
        for n in cfg.n_trains:
            rec = student_record(cfg, cfg.claim_teacher, w, cfg.claim_depth, n, seed)
            rows += [{"width": w, "n_train": n, "lambda": r["lambda"],
                      "ratio": r["train"] / r["test"]} for r in rec["label_sweep"]]
    return pd.DataFrame(rows)


def quant_bits_rows(model: nn.Module, x: torch.Tensor, bits_sweep: Sequence[int], draws: int,
                    seed: int, impl: str = "auto") -> list[dict]:
    """Quantization TPV on inputs ``x`` for each bit width: trace form and Monte Carlo (the
    same uniforms for every width: common random numbers)."""
    tr = heff_trace(model, x)
    w = flat_params(model)
    rows = []
    for b in bits_sweep:
        mc, se = tpv_quant_mc(model, x, b, draws, seed, impl=impl)
        trace = tpv_quant_trace(tr, quant_step(w, b))
        rows.append({"bits": b, "trace": trace, "mc": mc, "mc_se": se, "ratio": trace / mc})
    return rows


def figure_quant_bits_data(cfg: TPVConfig, seed: int = 0, widths: Sequence[int] | None = None,
                           n_train: int | None = None, impl: str = "auto",
                           device: str | torch.device = "cpu"):
    """F2: quantization TPV on ``cfg.mc_inputs`` training inputs against bits, trace form
    ``delta_b^2/12 Tr H_eff`` against Monte Carlo (``cfg.sweep_draws`` draws). One row per
    (width, bits); ``n_train`` defaults to the largest of ``cfg.n_trains``."""
    import pandas as pd

    cfg.validate()
    n_train = max(cfg.n_trains) if n_train is None else n_train
    rows = []
    for width in widths or cfg.widths:
        model, data, _ = train_student(cfg.claim_teacher, width, cfg.claim_depth, n_train,
                                       seed, cfg.d, cfg.n_test, cfg.steps, cfg.lr,
                                       device=device)
        rows += [{"width": width, **r} for r in
                 quant_bits_rows(model, data["X_train"][:cfg.mc_inputs], cfg.bits_sweep,
                                 cfg.sweep_draws, seed, impl)]
    return pd.DataFrame(rows)


def quant_claim_data(cfg: TPVConfig, seed: int = 0, n_train: int | None = None,
                     impl: str = "auto", device: str | torch.device = "cpu") -> list[dict]:
    """The ``cfg.bits`` trace-vs-Monte-Carlo comparison on the first ``cfg.mc_inputs``
    training inputs, one row per width (cached; ``impl`` does not change the values).
    ``cfg.heff_source="reinit"`` computes the trace on a re-initialised network (pitfall)."""
    cfg.validate()
    n_train = max(cfg.n_trains) if n_train is None else n_train
    key = {k: getattr(cfg, k) for k in ("d", "widths", "claim_teacher", "claim_depth", "n_test",
                                         "steps", "lr", "bits", "mc_draws", "mc_inputs",
                                         "heff_source")} | {"n_train": n_train}

    def compute():
        out = []
        for width in cfg.widths:
            model, data, _ = train_student(cfg.claim_teacher, width, cfg.claim_depth, n_train,
                                           seed, cfg.d, cfg.n_test, cfg.steps, cfg.lr,
                                           device=device)
            x = data["X_train"][:cfg.mc_inputs]
            source = heff_network(model, cfg.heff_source, seed)
            trace = tpv_quant_trace(heff_trace(source, x),
                                    quant_step(flat_params(model), cfg.bits))
            mc, se = tpv_quant_mc(model, x, cfg.bits, cfg.mc_draws, seed + 1, impl=impl)
            out.append({"width": width, "trace": trace, "mc": mc, "mc_se": se,
                        "rel_err": abs(trace / mc - 1.0)})
        return out

    return cached(device_key("quant_claim", device), key, seed, compute)
