"""What every paper's library shares: argument checks, scale presets, seeded generators and
the on-disk cache of trained models, DP tables and sweeps.

The cache folder comes from ``ICML26_CACHE`` (default ``~/.cache/icml26``), never
site-packages. Entries are keyed by paper, a per-paper cache version, a hash of the config and
the seed, so changing any of them recomputes. Values are stored with ``torch.save``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
C = TypeVar("C")


# --------------------------------------------------------------------------- arguments
def check_int(name: str, value, low: int, high: int | None = None) -> None:
    """Raise ``ValueError`` unless ``value`` is an integer (not a bool) in ``[low, high]``."""
    ok = not isinstance(value, bool)
    try:
        ok = ok and int(value) == value
    except (TypeError, ValueError):
        ok = False
    if not ok or value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")


def check_choice(name: str, value, choices) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def config_for(scales: Mapping[str, C], scale: str) -> C:
    """The preset of ``scales`` named ``scale`` ("quick" | "paper"), or a clear ValueError."""
    if scale not in scales:
        raise ValueError(f"scale must be one of {sorted(scales)}, got {scale!r}")
    return scales[scale]


DEVICE_TYPES = ("cpu", "cuda")


def resolve_device(device="cpu"):
    """``device`` ("cpu", "cuda", "cuda:N" or a ``torch.device``) as a ``torch.device``.

    A clear ``ValueError`` (the CLI prints it as one line, naming ``--device``) when the
    device is unknown or when CUDA is asked for and torch sees no GPU: never a traceback from
    deep inside a model.
    """
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"device (--device) must be 'cpu', 'cuda' or 'cuda:N', got "
                         f"{device!r}") from None
    if dev.type not in DEVICE_TYPES:
        raise ValueError(f"device (--device) must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device (--device) {device!r} asked for, but torch "
                             f"{torch.__version__} sees no CUDA GPU on this machine; use "
                             "--device cpu")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device (--device) {device!r}: this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s)")
    return dev


def device_key(key: str, device) -> str:
    """A cache key that differs by device type where results may differ (float32 reductions
    on a GPU are not bit-identical to the CPU's); CPU keys stay as they were."""
    dev = resolve_device(device)
    return key if dev.type == "cpu" else f"{key}-{dev.type}"


#: held while a model's parameters are drawn from torch's process-global generator
_GLOBAL_RNG = threading.Lock()


@contextlib.contextmanager
def global_rng_from(gen):
    """Within the block, torch's process-global generator is seeded from ``gen`` (one draw)
    and no other thread of this process re-seeds it through here: ``nn.Module`` constructors
    draw their initial parameters from the global generator, and two app sessions (or a
    fuzzing test) training at once in threads would otherwise interleave their draws and cache
    a model that no seed reproduces."""
    import torch

    with _GLOBAL_RNG:
        torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
        yield


def generator(seed: int):
    """A CPU ``torch.Generator`` seeded with ``seed`` (every random draw of a claim comes
    from one of these, so the same seed gives the same values)."""
    import torch

    return torch.Generator().manual_seed(int(seed))


# --------------------------------------------------------------------------- cache
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


def in_cache(paper: str, key: str, config: Any, seed: int, version: int) -> bool:
    """Whether :func:`cached` would read this entry instead of computing it (it exists)."""
    return cache_path(paper, key, config, seed, version).exists()


_LISTENERS = threading.local()


@contextlib.contextmanager
def cache_listener(hear: Callable[[str, Path], None]):
    """Within the block, in this thread, ``hear(event, path)`` learns what :func:`cached`
    does: ``"read"`` when it returns a stored entry, ``"compute"`` just before it computes a
    missing one (an app's Run says truthfully whether it trains or reads the cache)."""
    outer = getattr(_LISTENERS, "stack", ())
    _LISTENERS.stack = (*outer, hear)
    try:
        yield
    finally:
        _LISTENERS.stack = outer


def _tell(event: str, path: Path) -> None:
    for hear in getattr(_LISTENERS, "stack", ()):
        hear(event, path)


def cached(paper: str, key: str, config: Any, seed: int, version: int,
           compute: Callable[[], T]) -> T:
    """Return the cached value for (paper, key, config, seed, version), computing it once.

    Writes go through a temporary file and an atomic rename, so concurrent test workers and
    notebooks never read a half-written entry. While one process or thread computes an entry,
    others asking for it wait on its lock file and then read it (no entry is computed twice
    at once by parallel test workers, Dask workers or dashboard sessions).
    """
    path = cache_path(paper, key, config, seed, version)
    value = _load(path)
    if value is not _MISSING:
        _tell("read", path)
        return value
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path.with_name(path.name + ".lock")):
        value = _load(path)  # computed by another worker while this one waited
        if value is not _MISSING:
            _tell("read", path)
            return value
        _tell("compute", path)
        value = compute()
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        os.close(fd)
        import torch

        torch.save(value, tmp)
        os.replace(tmp, path)
    return value


_MISSING = object()


def _load(path: Path):
    """The entry at ``path``, or ``_MISSING`` (absent or corrupt: a corrupt one is removed)."""
    import torch

    if not path.exists():
        return _MISSING
    try:
        return torch.load(path, weights_only=False)
    except Exception:  # a corrupt entry is recomputed, not fatal
        path.unlink(missing_ok=True)
        return _MISSING


@contextlib.contextmanager
def _exclusive(lock_path: Path):
    """Hold an exclusive advisory lock on ``lock_path`` (POSIX ``flock``; elsewhere none)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: entries may be computed twice, never read half-written
        yield
        return
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
