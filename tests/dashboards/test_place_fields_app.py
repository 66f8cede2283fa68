"""The place_fields Explorer without a browser: live views follow the parameters."""

from __future__ import annotations

import numpy as np
import pytest

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")

from icml26.dashboards import place_fields as dash  # noqa: E402


def test_field_follows_sigma_and_width_grows():
    e = dash.Explorer()
    narrow = e.plot_data()
    e.sigma = 0.4
    wide = e.plot_data()
    assert not np.array_equal(narrow["field"], wide["field"])
    # the app's FWHM curve is the lib's F1 data on the app's sigma grid: increasing
    assert np.all(np.diff(wide["fwhm"]) >= 0)


def test_mse_curve_follows_the_regression_parameters():
    e = dash.Explorer(n_train=20, ell=0.05)
    a = e.plot_data()
    e.ell = 0.3
    b = e.plot_data()
    assert b["sigma_star"] > a["sigma_star"]  # a smoother environment wants wider fields
    assert np.isfinite(b["mse"]).all()


def test_head_sigmas_set_one_kernel_per_head():
    e = dash.Explorer(head_sigmas="4, 16, 64", max_dist=256)
    d = e.plot_data()
    assert d["hipe_kernels"].shape == (3, 257)
    assert isinstance(e.kernel_view(), hv.Overlay)


@pytest.mark.parametrize("bad", dash.PlaceFieldsExplorer.INVALID_EXAMPLES,
                         ids=["empty", "negative", "not_a_number", "odd_head_dim"])
def test_bad_head_settings_show_a_message_and_keep_the_rest(bad):
    e = dash.Explorer(**bad)
    assert e.error_message()
    d = e.plot_data()
    assert "hipe_kernels" not in d and "field" in d and "mse" in d
    assert isinstance(e.kernel_view(), hv.Text)


def test_2d_arena_shows_the_2d_field():
    e = dash.Explorer(dim="2D")
    img = e.arena_view()
    assert isinstance(img, hv.Image) and img.dimension_values("rate").size == 61 * 61
    assert e.plot_data()["field"].shape == (61, 61)


def test_f4_comes_from_the_shipped_results_when_the_cache_is_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    frame = dash.f4_frame()
    assert frame is not None, "lib/data/place_fields_f4.json is stale or missing: run " \
                              "benchmarks/place_fields/place_fields_ship_f4.py"
    assert set(frame["size"]) == set(dash.lm.LMConfig().sizes)
    assert isinstance(dash.Explorer().efficiency_view(), hv.Overlay)


def test_parse_sigmas():
    assert dash.parse_sigmas("2, 4;8") == (2.0, 4.0, 8.0)
    for bad in ("", "a, b", "0, 1", "1, inf"):
        with pytest.raises(ValueError):
            dash.parse_sigmas(bad)
