"""The claim rows' change log (issue 44): the baseline snapshot plus the logged changes, replayed
in order, is exactly the current rows on every logged field, so no name, op, threshold,
expected flag, role, unit or source changes without a row saying why."""

from __future__ import annotations

import pytest

from icml26 import claim_log, papers, status
from icml26.claims import ClaimSpec

DOCS = claim_log.ROOT / "docs" / "claims.md"


def test_replay_is_the_current_rows_of_every_paper():
    replayed, current = claim_log.replay(), claim_log.snapshot_rows()
    assert claim_log.differences(replayed, current) == []
    assert {r["paper"] for r in current} == {p.slug for p in papers.built()}
    assert claim_log.problems(replayed) == []


def test_every_change_row_is_well_formed():
    rows = claim_log.read_rows(claim_log.CHANGES)
    assert rows, "the log has rows"
    for r in rows:
        assert tuple(r) == claim_log.CHANGE_FIELDS
        assert r["field"] in claim_log.LOGGED and r["reason"].strip(), r
        assert r["date"][:4].isdigit() and r["old"] != r["new"], r


def test_baseline_has_every_column():
    rows = claim_log.read_rows(claim_log.BASELINE)
    assert rows and all(tuple(r) == claim_log.ROW_FIELDS for r in rows)


def _mutated(slug, name, monkeypatch, **fields):
    specs = dict(status.claim_specs(slug))
    specs[name] = specs[name]._replace(**fields)
    monkeypatch.setattr(status.claims_module(slug), "CLAIM_SPECS", specs)
    return specs


def test_mutation_a_row_changed_without_a_log_row_fails(monkeypatch):
    _mutated("recruitment", "bound_monotone", monkeypatch, role="finding")
    diff = claim_log.differences(claim_log.replay(), claim_log.snapshot_rows())
    assert diff == ["recruitment.bound_monotone: role is 'finding', the log says 'check'"]
    _mutated("recruitment", "bound_monotone", monkeypatch, role="check", threshold=0.5)
    assert claim_log.differences(claim_log.replay(), claim_log.snapshot_rows())


def test_mutation_a_statement_change_needs_no_log_row(monkeypatch):
    _mutated("recruitment", "bound_monotone", monkeypatch, statement="reworded")
    assert claim_log.differences(claim_log.replay(), claim_log.snapshot_rows()) == []


def test_mutation_a_renamed_or_added_claim_fails(monkeypatch):
    specs = dict(status.claim_specs("promotion"))
    specs["new_claim"] = specs.pop("myopic_games")
    monkeypatch.setattr(status.claims_module("promotion"), "CLAIM_SPECS", specs)
    diff = claim_log.differences(claim_log.replay(), claim_log.snapshot_rows())
    assert any("new_claim" in d for d in diff) and any("myopic_games" in d for d in diff)


def test_mutation_a_headline_without_source_fails():
    rows = claim_log.replay()
    i = next(k for k, r in enumerate(rows) if r["role"] == "headline")
    rows[i] = {**rows[i], "source": ""}
    assert any("quotes its abstract fragment" in p for p in claim_log.problems(rows))
    # ... and so does a log that leaves one
    change = dict(date="2026-12-07", paper=rows[i]["paper"], claim=rows[i]["claim"],
                  field="source", old=claim_log.replay()[i]["source"], new="", reason="test")
    replayed = claim_log.replay(changes=[*claim_log.read_rows(claim_log.CHANGES), change])
    assert claim_log.problems(replayed)


def test_mutation_a_log_row_whose_old_does_not_match_fails():
    changes = claim_log.read_rows(claim_log.CHANGES)
    bad = [dict(changes[0], old="headline" if changes[0]["old"] != "headline" else "check"),
           *changes[1:]]
    with pytest.raises(ValueError, match="the log says old"):
        claim_log.replay(changes=bad)
    with pytest.raises(ValueError, match="no row"):
        claim_log.replay(changes=[dict(changes[0], claim="no_such_claim")])
    with pytest.raises(ValueError, match="field must be one of"):
        claim_log.replay(changes=[dict(changes[0], field="statement")])


def test_replay_applies_changes_in_order_and_renames():
    base = [claim_log.row_of("p", "a", ClaimSpec("s", ">=", 1.0, True, "check", "each", ""))]
    log = [dict(date="d", paper="p", claim="a", field="threshold", old="1", new="2", reason="r"),
           dict(date="d", paper="p", claim="a", field="threshold", old="2.0", new="3",
                reason="r"),
           dict(date="d", paper="p", claim="a", field="name", old="a", new="b", reason="r"),
           dict(date="d", paper="p", claim="b", field="expected", old="true", new="False",
                reason="r")]
    (row,) = claim_log.replay(base, log)
    assert (row["claim"], float(row["threshold"]), row["expected"]) == ("b", 3.0, "False")
    with pytest.raises(ValueError, match="reason"):
        claim_log.replay(base, [dict(log[0], reason=" ")])


def test_docs_table_lists_every_row_with_its_role_and_unit():
    """docs/claims.md's per-paper tables name each row's current role and unit."""
    text = DOCS.read_text(encoding="utf-8")
    missing = [f"{r['paper']}.{r['claim']}" for r in claim_log.snapshot_rows()
               if f"| {r['claim']} | {r['role']} | {r['unit']} |" not in text]
    assert not missing, f"docs/claims.md does not list (claim, role, unit) of: {missing}"
