"""The Explorer base's Run: its stage text says truthfully whether a stage computes (trains)
or reads the on-disk cache -- decided once in the base from what ``icml26.common.cached``
does, never typed into an app's label."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from icml26 import common  # noqa: E402
from icml26.dashboards.app import ExplorerBase  # noqa: E402


class Toy(ExplorerBase):
    def config(self):
        return {}


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))


def _run(e: Toy, stages) -> list[str]:
    """Run ``stages`` (each a label and the cache entry it asks for, or None), recording the
    stage text the moment each stage's work happens (inside compute)."""
    seen: list[str] = []

    def stage(key):
        def compute():
            if key is not None:
                common.cached("toy", key, {}, 0, 1,
                              lambda: seen.append(e._stage.object) or {"model": key})
            seen.append(e._stage.object)
            return key
        return compute

    assert e.run_stages([(label, stage(key), *verb) for label, key, *verb in stages],
                        lambda results: None)
    return seen


def test_stage_text_says_training_from_an_empty_cache_then_reading_it(tmp_cache):
    e = Toy()
    assert not common.in_cache("toy", "model", {}, 0, 1)
    first = _run(e, [("train the model", "model", "training")])
    # while computing (inside compute) and after: "not in the cache: training"
    assert all("not in the cache: training now" in t for t in first), first
    assert "(read from the cache)" not in " ".join(first)
    assert "computed, now cached: 1 of 1 stages" in e._stage.object
    assert common.in_cache("toy", "model", {}, 0, 1)
    second = _run(e, [("train the model", "model", "training")])
    assert "(read from the cache)" in second[-1] and "training" not in second[-1].replace(
        "train the model", "")
    assert e._stage.object.startswith("Run done") and "computed" not in e._stage.object


def test_a_stage_that_asks_no_cache_claims_neither(tmp_cache):
    e = Toy()
    seen = _run(e, [("fit", None), ("train", "m2")])
    assert seen[0] == "**Run 1/2:** fit…"  # no cache consulted: no word about it
    assert "not in the cache: computing now" in seen[-1]  # the default verb
    assert "1 of 2 stages" in e._stage.object


def test_stage_progress_keeps_the_line_and_its_cache_note(tmp_cache):
    e = Toy()
    seen = []

    def compute():
        def work():
            e.stage_progress("half way", 0.5)
            seen.append((e._stage.object, e._progress.value))
            return 1
        return common.cached("toy", "p", {}, 0, 1, work)

    e.run_stages([("a", lambda: 0), ("b", compute, "training")], lambda r: None)
    text, bar = seen[0]
    assert text == "**Run 2/2:** b (not in the cache: training now, then cached): half way (50%)…"
    assert bar == 75  # stage 2 of 2, half done


def test_the_listener_hears_only_its_own_thread(tmp_cache):
    import threading

    heard = []
    with common.cache_listener(lambda event, path: heard.append(event)):
        t = threading.Thread(target=lambda: common.cached("toy", "t", {}, 0, 1, lambda: 1))
        t.start()
        t.join()
        assert heard == []  # another thread's Run is not this one's
        common.cached("toy", "t", {}, 0, 1, lambda: 1)
    common.cached("toy", "t", {}, 0, 1, lambda: 1)  # outside the block: nobody hears
    assert heard == ["read"]


def test_placeholders_wrap_to_lines_that_fit_the_frame():
    """Issue 32: "Press Run for the Monte Carlo comparison" was drawn on one line and clipped
    at both ends of a narrow frame ("ress Run for the Monte Carlo compariso")."""
    from icml26.dashboards.app import page

    text = page.message_plot("Press Run for the Monte Carlo comparison").data[2]
    lines = text.split("\n")
    assert len(lines) > 1 and max(map(len, lines)) <= page.MESSAGE_LINE
    assert " ".join(lines) == "Press Run for the Monte Carlo comparison"
    kept = page.message_plot("No GPU benchmark recorded yet:\nrun it").data[2]
    assert kept.split("\n")[-1] == "run it"  # the caller's line breaks stay
