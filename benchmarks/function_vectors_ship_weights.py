"""Write the shipped seed-0 weights of ``icml26.function_vectors`` (quick scale).

The dashboard starts from these when the cache is empty, so serving the app never trains.
Claims never use them: ``claims(seed)`` always trains (or loads the run's cache), and
``tests/test_function_vectors.py`` re-checks the claims on retrained models. Run from the
repository root after changing the model or training config:

    python benchmarks/function_vectors_ship_weights.py

It trains seed 0 (or takes it from the cache) and stores the state dict in float16 (~0.3 MB),
with the model and training configs and the training history, as
``lib/data/function_vectors_seed0.pt``.
"""

from __future__ import annotations

from pathlib import Path

import torch

from icml26 import function_vectors as fv


def main() -> None:
    cfg = fv.config_for("quick")
    blob = fv.trained(cfg, 0)
    out = Path(__file__).resolve().parents[1] / "lib" / "data"
    out.mkdir(exist_ok=True)
    small = {**blob, "state": {k: v.half() for k, v in blob["state"].items()}}
    torch.save(small, out / "function_vectors_seed0.pt")
    print(f"wrote {out / 'function_vectors_seed0.pt'}")


if __name__ == "__main__":
    main()
