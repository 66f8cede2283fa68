"""Write the shipped quick-scale teacher of ``icml26.red`` -> ``lib/data/red_teacher.pt``.

``claims(seed)`` at quick scale, the notebook and the dashboard load this teacher instead of
training it (1500 steps, ~8 min of one contended CPU core). It is ``icml26.red.train_teacher``'s
output for ``config_for("quick")`` (the second design of issue #34: a BOS token first, peak lr
1e-2), stored in float16 (~0.8 MB) with the config it was trained with (``teacher_key``); the
loader ignores a file whose key differs from the current config's. Every claim note names the
file's sha256. Training is not bit-reproducible across machines; the training code is tested at
tiny size (``tests/test_red.py``). Run from the repository root after changing the teacher's
config:

    OMP_NUM_THREADS=1 python benchmarks/red/red_ship_teacher.py [--force]
"""

from __future__ import annotations

import argparse
import time

import torch

from icml26 import red
from icml26.red.experiments import SHIPPED, outlier_layers, teacher_source


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="overwrite a matching shipped file")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfg = red.config_for("quick")
    if teacher_source(cfg) != "trained" and not args.force:
        print(f"kept {SHIPPED} ({teacher_source(cfg)}; --force to retrain)")
        return 0
    start = time.perf_counter()
    state = red.train_teacher(cfg, progress=lambda s: s % 100 == 99 and print(
        f"step {s + 1}/{cfg.teacher_steps} ({time.perf_counter() - start:.0f} s)", flush=True))
    torch.save({"teacher_key": cfg.teacher_key(),
                "state": {k: v.half() for k, v in state.items()}}, SHIPPED)
    model = red.trained_teacher(cfg)  # the shipped file, read back (fp16 -> fp32)
    ratios = [r["outlier_ratio"] for r in outlier_layers(model, cfg)]
    print(f"wrote {SHIPPED} ({teacher_source(cfg)}) in {time.perf_counter() - start:.0f} s; "
          "max/median channel RMS per layer " + ", ".join(f"{r:.2f}" for r in ratios))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
