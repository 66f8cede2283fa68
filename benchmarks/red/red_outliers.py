"""Does the red teacher develop outlier channels, and where? -> ``benchmarks/red/red_outliers.csv``.

Issue #34's hypothesis: outlier channels ("massive activations") form with a token that serves
as an attention sink (a fixed first token) and long Adam training without weight decay. Each
recipe trains the teacher with ``icml26.red.train_teacher`` (the code that makes the shipped
teacher) and, every ``--every`` steps, measures on the held-out windows per layer:

* ``outlier_ratio``: largest channel RMS / median channel RMS over every position (the
  ``teacher_outliers`` claim), and ``ratio_rest`` the same without the first position;
* ``top_channel``, ``second_channel``: the channels with the largest RMS;
* ``first_share``: the share of the top channel's energy at the first position (the BOS token
  with a BOS, a random character without);
* ``massive``: the largest ``|h|`` over every position and channel / the median ``|h|``, with
  its ``massive_pos`` (position), ``massive_token`` (``BOS``, ``newline``, ``space``, ``char``)
  and ``massive_channel``; ``hop_massive`` the same ratio on 1-3 hop sequences (which always
  start with their fixed ``HOP`` marker, BOS or not), at ``hop_massive_pos``;
* ``sink_attention``: the attention weight on the first position (BOS, or the first
  character), averaged over heads and the later positions of the held-out windows: an
  attention sink puts most of it there (a uniform causal head puts ~0.07).

Recipes (``RECIPES``): ``current`` (the first design's teacher: 1500 steps, peak lr 3e-3, no
BOS), ``bos`` (the same with a BOS token first), ``bos_lr`` (BOS and peak lr 1e-2: the second
design's teacher, ``config_for("quick")`` since issue #34), ``bos_long`` (BOS, 3000 steps).
One recipe takes ~8 min of one contended CPU core per 1500 steps.
The first position's attention is recomputed from the blocks' weights (``TinyLM`` uses a fused
attention that does not return its weights); a test checks it against the model's output.

    OMP_NUM_THREADS=1 python benchmarks/red/red_outliers.py RECIPE [RECIPE ...] [--every 100]
        [--save DIR]   # also writes DIR/<recipe>.pt (the final fp32 state_dict)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import torch

from icml26 import red
from icml26.common import generator
from icml26.kernels.bench import append_csv
from icml26.red.corpus import BOS, CHARS, MAX_HOPS, hop_sequences
from icml26.red.experiments import FIRST_DESIGN, eval_windows, lm_forward, outlier_layers

BASE = FIRST_DESIGN  # the first design's teacher (issue #16); the second is "bos_lr"
RECIPES = {
    "current": BASE,
    "bos": replace(BASE, bos=True, n_ctx=BASE.n_ctx + 1),
    "bos_lr": replace(BASE, bos=True, n_ctx=BASE.n_ctx + 1, teacher_lr=1e-2),
    "bos_long": replace(BASE, bos=True, n_ctx=BASE.n_ctx + 1, teacher_steps=3000),
}
OUT = Path(__file__).resolve().parent / "red_outliers.csv"


def token_kind(token: int, cfg) -> str:
    if cfg.bos and token == BOS:
        return "BOS"
    return {"\n": "newline", " ": "space"}.get(CHARS[token] if token < len(CHARS) else "",
                                              "char")


@torch.no_grad()
def measure(model, cfg, recipe: str, step: int) -> list[dict]:
    """One row per layer of ``model`` (see the module docstring)."""
    x = eval_windows(cfg)[:, :-1]
    tokens = torch.cat([torch.full_like(x[:, :1], BOS), x], 1) if cfg.bos else x
    _, hop_hidden = lm_forward(model, cfg, hop_sequences(48, MAX_HOPS, generator(99)))
    sinks = _sink_attention(model, tokens)
    rows = []
    for layer, stats in enumerate(outlier_layers(model, cfg, keep_hidden=True), 1):
        h = stats.pop("hidden")
        energy = (h ** 2).mean((0, 1))
        rms, rest = energy.sqrt(), (h[:, 1:] ** 2).mean((0, 1)).sqrt()
        top = energy.topk(2).indices.tolist()
        first = float((h[:, 0, top[0]] ** 2).sum() / (h[:, :, top[0]] ** 2).sum())
        a = h.abs()
        b, t, c = (int(i) for i in torch.unravel_index(a.argmax(), a.shape))
        rows.append({"recipe": recipe, "step": step, "layer": layer,
                     "outlier_ratio": round(float(rms.max() / rms.median()), 4),
                     "ratio_rest": round(float(rest.max() / rest.median()), 4),
                     "top_channel": top[0], "second_channel": top[1],
                     "first_share": round(first, 4),
                     "massive": round(float(a.max() / a.median()), 2), "massive_pos": t,
                     "massive_token": token_kind(int(tokens[b, t]), cfg),
                     "massive_channel": c, **_hop_massive(hop_hidden[layer - 1]),
                     "sink_attention": round(sinks[layer - 1], 4),
                     "bos": cfg.bos, "lr": cfg.teacher_lr,
                     "steps": cfg.teacher_steps})
    return rows


@torch.no_grad()
def _sink_attention(model, tokens: torch.Tensor) -> list[float]:
    """Per block, the mean attention weight (heads, positions 1..T-1) on position 0."""
    x = model.tok(tokens) + model.pos(torch.arange(tokens.shape[1]))
    out = []
    for block in model.blocks:
        out.append(float(attention(block, x)[..., 1:, 0].mean()))
        x = block(x)
    return out


def attention(block, x: torch.Tensor) -> torch.Tensor:
    """The causal attention weights ``[B, H, T, T]`` of ``block`` on its input ``x``."""
    t, d = x.shape[1], x.shape[-1]
    q, k, _ = block.qkv(block.ln1(x)).split(d, dim=2)
    q, k = (z.view(*z.shape[:2], block.heads, -1).transpose(1, 2) for z in (q, k))
    causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
    att = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).masked_fill(~causal, -torch.inf)
    return att.softmax(-1)


def _hop_massive(h: torch.Tensor) -> dict:
    a = h.abs()
    t = int(torch.unravel_index(a.argmax(), a.shape)[1])
    return {"hop_massive": round(float(a.max() / a.median()), 2), "hop_massive_pos": t}


def run(recipe: str, every: int, save: Path | None) -> list[dict]:
    cfg, rows, start = RECIPES[recipe], [], time.perf_counter()

    def probe(step, model):
        if step % every == 0 or step == cfg.teacher_steps:
            rows.extend(measure(model, cfg, recipe, step))
            worst = max(r["outlier_ratio"] for r in rows[-cfg.n_layers:])
            print(f"{recipe} step {step}: max/median channel RMS {worst:.2f} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)

    state = red.train_teacher(cfg, probe=probe)
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        torch.save(state, save / f"{recipe}.pt")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipes", nargs="+", choices=sorted(RECIPES))
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for recipe in args.recipes:
        append_csv(args.out, run(recipe, args.every, args.save))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
