"""Shared fixtures: device, markers, seeding, and the Triton interpreter on CPU.

``TRITON_INTERPRET`` must be set before any ``@triton.jit`` runs, i.e. before
``icml26.kernels`` is imported, so it is set here at collection time when no GPU is present.
Panel fixtures live in ``tests/dashboards/conftest.py`` so kernel tests run without panel.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

import icml26  # noqa: F401 - first: pins the numeric code paths before torch or numpy runs

# Playwright helpers (tests/ui/browser.py) are test code, not part of the package: the UI tests,
# the dashboard tests and benchmarks/ import them as `browser`.
sys.path.insert(0, str(Path(__file__).parent / "ui"))

try:
    import torch

    _HAS_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    _HAS_CUDA = False

if not _HAS_CUDA:
    os.environ.setdefault("TRITON_INTERPRET", "1")

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# A planned paper has no code yet; a paper whose code exists ("reproduced" or "blocked") is
# tested, whatever its claims do (the same switch that serves it in the index).
KERNEL_TESTS = {"place_fields": ["kernels/test_scaled_rope.py"],
                "promotion": ["kernels/test_bellman_interp.py"],
                "gsrq": ["kernels/test_gain_shape_assign.py"],
                "tpv": ["kernels/test_quant_noise.py"],
                "panda": ["kernels/test_soft_bellman.py"],
                "unilid": ["kernels/test_lattice_forward.py"],
                "detectrouter": ["kernels/test_token_stats.py"],
                "tritongym": ["kernels/test_tritongym_ops.py"],
                "ad_auctions": ["kernels/test_auction_topk.py"],
                "selfflow": ["kernels/test_ln_modulate.py"],
                "grids": ["kernels/test_grid_sample.py"],
                "coval": ["kernels/test_ray_cast.py"]}


def _pending_test_files() -> list[str]:
    from icml26 import papers

    out = []
    for p in papers.PAPERS:
        if not p.built:
            out += [f"test_{p.slug}.py", f"dashboards/test_{p.slug}_app.py",
                    *KERNEL_TESTS.get(p.slug, [])]
    return out


collect_ignore = _pending_test_files()


def pytest_addoption(parser):
    # "--device" belongs to pytest-playwright (browser emulation), hence "--torch-device"
    parser.addoption("--torch-device", default="cuda" if _HAS_CUDA else "cpu",
                     help="torch device for the tests (default: cuda when available)")
    parser.addoption("--gpu", action="store_true", help="run tests marked gpu")
    parser.addoption("--ui", action="store_true",
                     help="run browser tests (needs /usr/bin/chromium; always on when CI=true)")
    parser.addoption("--skip-slow", action="store_true", help="skip tests marked slow")


def pytest_collection_modifyitems(config, items):
    run_ui = config.getoption("--ui") or IN_CI
    run_gpu = config.getoption("--gpu")
    for item in items:
        if "ui" in item.keywords and not run_ui:
            item.add_marker(pytest.mark.skip(reason="browser test: pass --ui (or set CI=true) "
                                             "with Debian's chromium installed"))
        if "gpu" in item.keywords and not (run_gpu and _HAS_CUDA):
            item.add_marker(pytest.mark.skip(reason="needs a CUDA device and --gpu"))
        if "slow" in item.keywords and config.getoption("--skip-slow"):
            item.add_marker(pytest.mark.skip(reason="--skip-slow"))


@pytest.fixture
def device(request):
    return torch.device(request.config.getoption("--torch-device"))


@pytest.fixture(autouse=True)
def _seed_everything():
    random.seed(0)
    try:
        import numpy as np

        np.random.seed(0)
    except ImportError:  # pragma: no cover
        pass
    torch.manual_seed(0)
    yield
