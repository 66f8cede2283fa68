"""F4, second design (issue 47): pretrain on one source, adapt on ``k`` samples of a shifted one.

The authors measure data efficiency by pretraining on generic text and then adapting on a few
samples of a new domain (128 papers, 50 steps), comparing perplexity, with HIPE only in the
upper layers (AIogry/relative_PE, EXPERIMENT_DESIGN.md; read, not copied).  The toy version:

1. *Pretraining* (one run per variant, same initial weights, same batches): fresh sequences
   of the multi-scale language with lag windows ``cfg.windows`` every step
   (``pretrain_steps x batch`` sequences, seen once: the "generic text").  Every variant is
   pretrained with its own positional scheme (RoPE in the lower layers for all, the variant's
   scale in the upper ``hipe_layers``), because a model adapted with HIPE is the model that was
   pretrained with it; sharing one pretrained model across variants would hand RoPE's attention
   patterns to a HIPE model it was not trained with.
2. *Adaptation*: each pretrained variant is fine-tuned on the first ``k`` sequences (``k`` in
   ``cfg.sizes``, nested prefixes of one pool) of a *shifted* source: the same table, lag
   windows ``cfg.shift_windows``.  Members with the same ``k`` see the same batches.  Every
   member runs ``steps`` steps; its validation loss (``n_val`` held-out shifted sequences) is
   measured at step 0 and every ``eval_every`` steps and the best checkpoint is kept
   (early stopping, one rule for every variant and ``k``); it is scored on ``n_test`` further
   sequences.  ``best_step == steps`` flags a member whose validation loss was still falling
   at the end of the budget (not converged).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from icml26.common import generator
from icml26.place_fields.task import VARIANTS, LMConfig, make_task
from icml26.place_fields.transformer import (
    HipeTransformer,
    cosine_schedule,
    held_out_loss,
    members,
    optimizer,
)


def adapt_data(cfg: LMConfig, seed: int) -> dict:
    """The pretraining stream, its validation set, and the shifted source's pool / val / test.

    ``{"table", "pretrain" [pretrain_steps * batch, T], "pretrain_val" [n_val, T],
    "train" [max(sizes), T], "val" [n_val, T], "test" [n_test, T]}`` (int64).
    """
    cfg.validate()
    cfg.check_windows("shift_windows")
    g = generator(10_000 + int(seed))
    table = torch.randperm(cfg.vocab, generator=g)
    shifted = dataclasses.replace(cfg, windows=cfg.shift_windows)
    return {"table": table,
            "pretrain": make_task(cfg, cfg.pretrain_steps * cfg.batch, g, table),
            "pretrain_val": make_task(cfg, cfg.n_val, g, table),
            "train": make_task(shifted, max(cfg.sizes), g, table),
            "val": make_task(shifted, cfg.n_val, g, table),
            "test": make_task(shifted, cfg.n_test, g, table)}


def _check(loss: torch.Tensor, stage: str, step: int) -> None:
    if not torch.isfinite(loss).all():
        raise FloatingPointError(f"non-finite {stage} loss at step {step}: {loss.tolist()}")


def pretrain(cfg: LMConfig, seed: int, data: dict, impl: str = "auto",
             device: str | torch.device = "cpu") -> tuple[dict, np.ndarray]:
    """Pretrain one model per variant (``VARIANTS`` order) on the source stream.

    Returns ``({parameter name: [V, ...] tensor}, source validation loss [V])``.
    """
    dev = torch.device(device)
    g = generator(20_000 + int(seed))
    scale = torch.stack([cfg.layer_scale(v) for v in VARIANTS], dim=1)
    model = HipeTransformer(cfg, scale, g, impl=impl, shared_init=True).to(dev)
    opt = optimizer(model, cfg, cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, cosine_schedule(cfg.pretrain_steps,
                                                                   cfg.warmup))
    stream = data["pretrain"].to(dev)
    for step in range(cfg.pretrain_steps):
        x = stream[step * cfg.batch:(step + 1) * cfg.batch]
        loss = model.member_loss(x[None].expand(len(VARIANTS), -1, -1))
        _check(loss, "pretraining", step)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        sched.step()
    source_val = held_out_loss(model, data["pretrain_val"].to(dev)).cpu().numpy()
    return {n: p.detach().clone() for n, p in model.named_parameters()}, source_val


def train_seed(cfg: LMConfig, seed: int, impl: str = "auto", device: str = "cpu",
               progress: bool = False) -> dict:
    """Pretrain, then adapt every (variant, k) member; early-stopped test loss per member.

    Returns ``{"members": [(variant, k)], "val_loss": [E] (test loss at the early-stopped
    checkpoint), "select_loss": [E] (its validation loss), "best_step": [E], "eval_steps":
    [K], "val_curve": [K, E], "source_val": [V], "zero_shot": [E] (test loss before
    adaptation)}``.
    """
    cfg.validate()
    dev = torch.device(device)
    data = adapt_data(cfg, seed)
    pre, source_val = pretrain(cfg, seed, data, impl, dev)
    mem = members(cfg)
    g = generator(30_000 + int(seed))
    scale = torch.stack([cfg.layer_scale(v) for v, _ in mem], dim=1)
    model = HipeTransformer(cfg, scale, g, impl=impl).to(dev)
    origin = torch.tensor([VARIANTS.index(v) for v, _ in mem], device=dev)
    with torch.no_grad():
        for name, par in model.named_parameters():
            par.copy_(pre[name][origin])
    train, val, test = (data[k].to(dev) for k in ("train", "val", "test"))
    sizes = sorted(cfg.sizes)
    which = torch.tensor([sizes.index(k) for _, k in mem])
    k_of = torch.tensor([k for _, k in mem], dtype=torch.float64)
    opt = optimizer(model, cfg, cfg.adapt_lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    zero_shot = held_out_loss(model, test)
    best = held_out_loss(model, val)
    best_state = {n: p.detach().clone() for n, p in model.named_parameters()}
    best_step = torch.zeros(len(mem), dtype=torch.long)
    eval_steps, curve = [0], [best.cpu().numpy()]
    steps = range(1, cfg.steps + 1)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"F4 adapt seed {seed}", leave=False)
    for step in steps:
        u = torch.rand(len(sizes), cfg.adapt_batch, generator=g, dtype=torch.float64)
        idx = (u[which] * k_of[:, None]).long()  # same batch for every variant at one k
        loss = model.member_loss(train[idx.to(dev)])
        _check(loss, "adaptation", step)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        sched.step()
        if step % cfg.eval_every == 0 or step == cfg.steps:
            v = held_out_loss(model, val)
            better = v < best
            best = torch.where(better, v, best)
            best_step[better.cpu()] = step
            with torch.no_grad():
                for name, par in model.named_parameters():
                    best_state[name][better] = par[better]
            eval_steps.append(step)
            curve.append(v.cpu().numpy())
    with torch.no_grad():
        for name, par in model.named_parameters():
            par.copy_(best_state[name])
    return {"members": mem, "val_loss": held_out_loss(model, test).cpu().numpy(),
            "select_loss": best.cpu().numpy(), "best_step": best_step.numpy(),
            "eval_steps": np.asarray(eval_steps), "val_curve": np.stack(curve),
            "source_val": source_val, "zero_shot": zero_shot.cpu().numpy()}
