"""The tpv Explorer after Run: live views answer every slider with finite data."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("panel")

from icml26.dashboards import tpv as app  # noqa: E402


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))


def finite(data: dict) -> bool:
    arrays = [*data["points"].values(), data["trace_train"], data["trace_test"], data["mc"],
              data["mc_trace"]]
    return all(np.isfinite(np.asarray(a, dtype=float)).all() for a in arrays) and all(
        np.isfinite([r["train"], r["test"], r["ratio"]]).all() for r in data["table"])


def test_before_run_the_views_show_the_untrained_student():
    e = app.Explorer(width=3, n_train=20, seed=9999)
    d = e.plot_data()
    assert not d["trained"] and d["table"] == [] and finite(d)
    assert "UNTRAINED" in e.tpv_view().opts.get().kwargs["title"]
    e.width = 4  # the first slider moves the plotted numbers (the browser test relies on it)
    assert not np.array_equal(e.plot_data()["points"]["quant"], d["points"]["quant"])


def test_run_then_sliders(tmp_cache):
    e = app.Explorer(width=4, depth=3, n_train=40, teacher="relu", seed=3)
    e.param.trigger("run")
    assert e.error_message() == ""
    d = e.plot_data()
    assert {r["perturbation"] for r in d["table"]} == set(app.LABELS.values())
    assert d["points"]["prune"].shape == (8, 2)  # one point per hidden neuron (2 x 4)
    assert finite(d)
    # trace form and Monte Carlo of the run agree at 8 bits and fall ~4x per bit
    mc = dict(zip(d["mc_bits"], d["mc"]))
    tr = dict(zip(d["mc_bits"], d["mc_trace"]))
    assert abs(tr[8.0] / mc[8.0] - 1) < 0.5  # 64 draws only
    assert 3.0 < tr[8.0] / tr[9.0] < 4.5
    rng = random.Random(0)
    before = d["points"]["quant"].copy()
    for _ in range(30):
        e.param.update(perturbation=rng.choice(list(app.tpv.PERTURBATIONS)),
                       bits=rng.randint(1, 16), label_sigma=rng.uniform(0.001, 0.1),
                       label_lambda=rng.uniform(0.001, 10.0), sgd_lr=rng.uniform(1e-4, 0.1),
                       sgd_batch=rng.randint(1, 1000))
        e.tpv_view(), e.bits_view(), e.table_view()
        assert finite(e.plot_data())
    e.bits = 10
    after = e.plot_data()["points"]["quant"]
    e.bits = 8
    np.testing.assert_allclose(e.plot_data()["points"]["quant"], before)
    assert (after < before).all()
    e.width = 5  # another student: back to the untrained view until Run
    assert not e.plot_data()["trained"]
