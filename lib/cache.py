"""One on-disk cache for trained models, DP tables and sweeps.

The folder comes from ``ICML26_CACHE`` (default ``~/.cache/icml26``), never site-packages.
Entries are keyed by paper, a per-paper cache version, a hash of the config and the seed, so
changing any of them recomputes.  Values are stored with ``torch.save``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def cache_dir() -> Path:
    root = Path(os.environ.get("ICML26_CACHE", Path.home() / ".cache" / "icml26"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def config_hash(config: Any) -> str:
    """Stable short hash of a dataclass / dict / scalar config."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        config = dataclasses.asdict(config)
    blob = json.dumps(config, sort_keys=True, default=repr).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def cache_path(paper: str, key: str, config: Any, seed: int, version: int) -> Path:
    return cache_dir() / paper / f"v{version}" / f"{key}-{config_hash(config)}-s{seed}.pt"


def cached(paper: str, key: str, config: Any, seed: int, version: int,
           compute: Callable[[], T]) -> T:
    """Return the cached value for (paper, key, config, seed, version), computing it once.

    Writes go through a temporary file and an atomic rename, so concurrent test workers and
    notebooks never read a half-written entry.
    """
    import torch

    path = cache_path(paper, key, config, seed, version)
    if path.exists():
        try:
            return torch.load(path, weights_only=False)
        except Exception:  # a corrupt entry is recomputed, not fatal
            path.unlink(missing_ok=True)
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    torch.save(value, tmp)
    os.replace(tmp, path)
    return value
