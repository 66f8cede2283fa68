"""Where the hop lookups live (issue 34, step 1): linear probes of ``x_0 .. x_h`` from every
layer at each stage's writing position, over training.

The writing position of stage ``k`` is where the model emits that stage's result: for CoT the
``GIVES`` token of stage ``k`` (its next token is ``b = x_k``), for Heima and pause tokens the
thinking token ``T_k`` (its last-layer state is what the interpreter reads). Layer 0 is the
input (token + position embedding), layer ``l`` the residual stream after block ``l``. A probe
is a multinomial logistic regression (L-BFGS, fixed iterations) fitted on ``n_train`` held-out
prompts and scored on ``n_test`` others; chance is ``1 / symbols``. If hop 1 is depth-limited,
``x_1`` appears at no layer of ``T_1``; if the signal is what is missing, CoT's writing position
holds ``x_1`` while Heima's ``T_1`` (same depth, same prompt) does not.
"""

from __future__ import annotations

import torch
from torch import nn

from icml26.common import generator
from icml26.heima.experiments import HeimaConfig
from icml26.heima.model import Heima
from icml26.heima.task import build, cot_writing_positions
from icml26.heima.train import answer_accuracy, train
from icml26.tinylm import hop_batch

DIAG_KINDS = ("cot", "heima", "pause")


def writing_positions(model: Heima, seq) -> list[int]:
    """Position of each stage's writing token in ``seq`` (CoT: ``GIVES``; else ``T_k``)."""
    if model.cfg.thinks:
        return list(seq.think_pos)
    return cot_writing_positions(seq.start, seq.texts.shape[1])


@torch.no_grad()
def layer_states(model: Heima, tokens: torch.Tensor) -> list[torch.Tensor]:
    """``[input, block 1, .., block L]`` residual streams ``[B, T, d]`` of the encoder."""
    enc = model.encoder
    x0 = enc.tok(tokens) + enc.pos(torch.arange(tokens.shape[1]))
    return [x0, *enc(tokens)[1]]


def probe_accuracy(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor,
                   y_test: torch.Tensor, classes: int, iters: int = 60) -> float:
    """Held-out accuracy of a multinomial logistic probe (features standardised on the
    training split, L2 1e-3, L-BFGS for ``iters`` iterations from zero)."""
    mu, sd = x_train.mean(0), x_train.std(0).clamp_min(1e-6)
    xt, xs = (x_train - mu) / sd, (x_test - mu) / sd
    lin = nn.Linear(xt.shape[1], classes)
    nn.init.zeros_(lin.weight)
    nn.init.zeros_(lin.bias)
    opt = torch.optim.LBFGS(lin.parameters(), lr=1.0, max_iter=iters,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(lin(xt), y_train) + 1e-3 * lin.weight.square().sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    with torch.no_grad():
        return float((lin(xs).argmax(1) == y_test).float().mean())


def probe_model(model: Heima, seed: int, n_train: int = 1000, n_test: int = 500) -> list[dict]:
    """Probe rows of one model: every stage ``k``, every layer, every target ``x_j``."""
    cfg = model.cfg
    model.eval()
    gen = generator(500_000 + seed)
    rows = []
    batch = hop_batch(n_train + n_test, cfg.hops, cfg.symbols, gen)
    seq = build(model.vocab, batch, cfg.fmt)
    chain = torch.cat([batch.prompt[:, -1:], batch.chain], 1)  # x_0 .. x_h
    states = layer_states(model, seq.tokens)
    for k, pos in enumerate(writing_positions(model, seq)):
        for layer, h in enumerate(states):
            feats = h[:, pos]
            for j in range(chain.shape[1]):
                y = chain[:, j]
                acc = probe_accuracy(feats[:n_train], y[:n_train], feats[n_train:],
                                     y[n_train:], cfg.symbols)
                rows.append({"stage": k + 1, "layer": layer, "target": f"x{j}",
                             "probe_accuracy": acc})
    return rows


def probe_curves(cfg: HeimaConfig, seed: int = 0, kinds: tuple[str, ...] = DIAG_KINDS,
                 hops: tuple[int, ...] = (1, 2), checkpoints: tuple[int, ...] = (150, 300, 600),
                 n_train: int = 1000, n_test: int = 500, eval_n: int = 200,
                 progress=None) -> list[dict]:
    """The diagnosis: for each model (``kinds`` x ``hops``, trained as ``cfg`` says; the
    record in ``benchmarks/heima/heima_diagnosis.csv`` is of ``FIRST_DESIGN``) the probe rows at
    each checkpoint, with the model's answer accuracy there (greedy, ``eval_n``
    held-out prompts). Not cached (each model is trained once, checkpoints kept in memory)."""
    cfg.validate()
    rows = []
    for h in hops:
        cot = None
        for kind in sorted(kinds, key=lambda k: k != "cot"):  # CoT first: the teacher
            tcfg = cfg.train_config(kind, h)
            if tcfg.from_cot and cot is None:
                cot = train(cfg.train_config("cot", h), seed)
            steps = tuple(s for s in checkpoints if s <= tcfg.steps)
            out = train(tcfg, seed, checkpoints=steps, teacher=cot if tcfg.from_cot else None)
            if kind == "cot":
                cot = {"state": out["state"], "cfg": out["cfg"]}
            for step in steps:
                model = Heima(tcfg)
                model.load_state_dict(out["checkpoints"][step])
                acc = answer_accuracy(model, seed, eval_n)
                for r in probe_model(model, seed, n_train, n_test):
                    rows.append({"kind": kind, "hops": h, "seed": seed, "step": step,
                                 "answer_accuracy": acc, **r})
            if progress is not None:
                progress(kind, h)
    return rows


def diagnosis_record():
    """``benchmarks/heima/heima_diagnosis.csv`` (``probe_curves`` on seed 0, written by
    ``benchmarks/heima/heima_diagnosis.py``) as a DataFrame; empty when absent."""
    from pathlib import Path

    import pandas as pd

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "heima" / "heima_diagnosis.csv"
    return pd.read_csv(path) if path.exists() else pd.DataFrame()
