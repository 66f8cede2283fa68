"""The PANDA Explorer: analytic schedule live, the landscape + methods behind Run."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from icml26 import panda as lib  # noqa: E402
from icml26.dashboards import panda as app  # noqa: E402


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))


def test_defaults_are_the_quick_scale_so_run_reuses_the_claims_cache():
    assert app.Explorer().config() == lib.config_for("quick")


def test_schedule_is_live_and_analytic():
    e = app.Explorer(rho0=2.0, rho_growth=0.05, iterations=200, anneal=0.5, lr=0.01)
    d = e.plot_data()
    assert d["rho"][0] == 2.0 and d["rho"][-1] == pytest.approx(12.0)
    assert d["lr"][0] == 0.01 and d["lr"][-1] == pytest.approx(1e-4)  # decayed to 1%
    assert "convergence" not in d
    assert "Run" in e.convergence_view().text


def test_run_then_change_a_setting(tmp_cache):
    e = app.Explorer(iterations=100, grid=9, methods=["panda", "ignore"], n_states=2, seed=5)
    e.param.trigger("run")
    assert e.error_message() == ""
    d = e.plot_data()
    assert d["landscape"].shape == (9, 9) and np.isfinite(d["landscape"]).all()
    assert set(d["paths"]) == {"panda", "ignore"}
    assert {r["method"] for r in d["convergence"]} == {"panda", "ignore"}
    assert all(np.isfinite([r["phi"], r["ratio"]]).all() for r in d["convergence"])
    e.convergence_view(), e.ni_view(), e.landscape_view()
    assert "Phi*" in e.summary_view().object
    e.tau = 0.5  # another game: the result views ask for Run again
    assert "convergence" not in e.plot_data()
    assert "Run" in e.landscape_view().text


def test_a_failed_run_shows_a_message(tmp_cache, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("Newton did not converge")

    monkeypatch.setattr(lib, "experiment", boom)
    e = app.Explorer(iterations=100, grid=9)
    e.param.trigger("run")
    assert "Newton did not converge" in e.error_message()
    assert "convergence" not in e.plot_data()
