"""The claims ledger, the registry and the CLI (shared by every paper)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from icml26 import estimates, papers, status
from icml26.claims import (
    FIELDS,
    HEADER,
    NO_VALUES,
    UNITS,
    Claim,
    ClaimSpec,
    ClaimTable,
    ShownClaims,
    failed,
    format_markdown,
    format_table,
    table_rows,
    to_frame,
    to_json,
)
from icml26.dashboards.app import cli

ROOT = Path(__file__).resolve().parents[1]
KIND = dict(role="check", unit="each")  # a claim's role and unit (required)


def test_holds_is_computed_from_measured_op_threshold():
    assert Claim("p", "a", "s", 1.0, "<=", 1.0, True, **KIND).holds
    assert not Claim("p", "a", "s", 1.0, "<", 1.0, True, **KIND).holds
    assert Claim("p", "a", "s", 2.0, ">", 1.0, False, **KIND).holds
    assert not Claim("p", "a", "s", math.nan, ">=", 0.0, True, **KIND).holds


def test_table_has_role_unit_expected_and_the_estimate_over_seeds_in_columns():
    assert HEADER == ["paper", "claim", "role", "unit", "measured (this seed)", "target",
                      "result (this seed)", "expected", "over seeds", "verdict over seeds",
                      "note"]
    cases = [(2.0, True), (0.0, True), (2.0, False), (0.0, False)]  # (measured, expected)
    claims = [Claim("p", f"c{i}", "s", m, ">=", 1.0, e, "n", "headline", "mean", "w")
              for i, (m, e) in enumerate(cases)]
    over = {("p", "c0"): ("mean 2 (95% CI 1.5 to 2.5), P(improve) 16/16", "holds")}
    rows = table_rows(claims, over)
    col = {h: [r[i] for r in rows] for i, h in enumerate(HEADER)}
    # this seed's verdict alone; whether a failure is expected is a column of its own
    assert col["result (this seed)"] == ["holds", "FAILS", "holds", "FAILS"]
    assert col["expected"] == ["yes", "yes", "no", "no"]
    assert col["role"] == ["headline"] * 4 and col["unit"] == ["mean"] * 4
    assert col["measured (this seed)"][0] == "2" and col["target"][0] == ">= 1"
    assert col["over seeds"] == [over["p", "c0"][0], *[NO_VALUES[0]] * 3]
    assert col["verdict over seeds"] == ["holds", *[NO_VALUES[1]] * 3]
    assert NO_VALUES == ("no committed values", "pending")
    assert {r[8] for r in table_rows(claims)} == {"—"}  # no estimates asked for
    text, md = format_table(claims, over=over), format_markdown(claims, over)
    assert text.splitlines()[0].split("  ")[:3] == ["paper", "claim", "role"]
    assert "16/16; holds" not in text and "P(improve) 16/16" in text
    assert md.splitlines()[0] == "| " + " | ".join(HEADER) + " |"
    assert "| yes | mean 2 (95% CI 1.5 to 2.5), P(improve) 16/16 | holds | n |" in md


def test_bad_op_is_rejected():
    with pytest.raises(ValueError, match="op must be one of"):
        Claim("p", "a", "s", 1.0, "==", 1.0, True, **KIND)


@pytest.mark.parametrize("role, unit, match", [("", "each", "role"), ("headline", "", "unit"),
                                               ("main", "each", "role"),
                                               ("check", "median", "unit")])
def test_role_and_unit_are_required_and_known(role, unit, match):
    with pytest.raises(ValueError, match=f"{match} must be one of"):
        Claim("p", "a", "s", 1.0, ">=", 1.0, True, role=role, unit=unit)
    assert UNITS == ("each", "mean")


def test_failed_computation_yields_claims_that_do_not_hold():
    spec = ClaimSpec("stmt", ">=", 1.0, True, "headline", "mean", "the abstract's words")
    out = failed("p", [("a", spec)], "diverged")
    assert len(out) == 1 and not out[0].holds and "diverged" in out[0].note
    assert (out[0].role, out[0].unit, out[0].source) == ("headline", "mean",
                                                         "the abstract's words")


SPECS = {"h": ClaimSpec("s", ">=", 1.0, True, "headline", "mean", "quoted words"),
         "c": ClaimSpec("t", "<", 2.0, False, "check", "each", "")}


def test_claim_table_carries_role_unit_and_source():
    table = ClaimTable("p", SPECS)
    c = table.add("h", 2.0, "n")
    assert (c.role, c.unit, c.source, c.holds, c.expected) == ("headline", "mean",
                                                               "quoted words", True, True)
    table.fail(["c"], "boom")
    assert (table.claims[1].unit, table.claims[1].source, table.claims[1].holds) == (
        "each", "", False)
    with table.guard(["h"]):
        raise RuntimeError("x")
    assert table.claims[-1].role == "headline" and "RuntimeError" in table.claims[-1].note


@pytest.mark.parametrize("specs, match", [
    ({"a": ("s", ">=", 1.0, True, "check")}, "ClaimSpec"),
    ([("a", SPECS["h"])], "dict"),
    ({"a": SPECS["h"]._replace(source="")}, "quotes its abstract fragment"),
    ({"a": SPECS["c"]._replace(source="words")}, "source == ''"),
    ({"a": SPECS["c"]._replace(unit="")}, "unit must be one of"),
    ({"a": SPECS["c"]._replace(role="")}, "role must be one of"),
    ({"a": SPECS["c"]._replace(op="==")}, "op must be one of"),
])
def test_claim_table_rejects_anything_but_valid_claimspecs(specs, match):
    with pytest.raises(ValueError, match=match):
        ClaimTable("p", specs)


def test_frame_and_shown_table_have_the_unit():
    c = [ClaimTable("p", SPECS).add("h", 2.0)]
    frame = to_frame(c)
    assert list(frame.columns) == [*FIELDS, "holds"]
    assert {"unit", "source"} <= set(FIELDS)
    assert frame.loc[0, "unit"] == "mean" and frame.loc[0, "source"] == "quoted words"
    shown = ShownClaims(c)
    assert shown.COLUMNS[:3] == ("claim", "role", "unit") and shown.rows()[0][2] == "mean"
    assert repr(shown).splitlines()[0].split()[:3] == ["claim", "role", "unit"]


def test_json_has_exactly_the_contract_fields():
    c = [Claim("p", "a", "s", 1.0, "<=", 2.0, True, "n", "headline", "mean", "words")]
    (obj,) = json.loads(to_json(c))
    assert set(obj) == {*FIELDS, "holds"} and obj["holds"] is True
    assert (obj["unit"], obj["source"]) == ("mean", "words")
    assert "| p | a |" in format_markdown(c) and "holds" in format_table(c)


def test_registry_lists_all_19_papers_with_unique_slugs():
    assert len(papers.PAPERS) == 19
    assert len({p.slug for p in papers.PAPERS}) == 19
    assert all(p.status in status.WORDS for p in papers.PAPERS)
    with pytest.raises(ValueError, match="unknown paper"):
        papers.get("nope")


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_built_paper_has_every_layer(slug):
    lib = ROOT / "lib"
    assert (lib / f"{slug}.py").exists() or (lib / slug / "__init__.py").exists(), slug
    for path in (f"dashboards/{slug}.py", f"notebooks/{slug}.ipynb",
                 f"tests/test_{slug}.py"):
        assert (ROOT / path).exists(), path
    assert callable(papers.get(slug).module().claims)


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_library_imports_no_plotting_stack(slug):
    code = (f"import sys, icml26.{slug}; bad = [m for m in ('panel', 'holoviews', 'param', "
            "'bokeh', 'matplotlib') if m in sys.modules]; print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "", f"icml26.{slug} imports {out}"


def test_claims_cli_never_imports_panel():
    code = ("import sys; from icml26.dashboards.app import cli; cli.main(['list']); "
            "assert 'panel' not in sys.modules and 'holoviews' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_cli_rejects_unknown_paper(capsys):
    assert cli.main(["claims", "no_such_paper"]) == 2
    assert "unknown paper" in capsys.readouterr().err


def _fake_claims(monkeypatch, claims, raising=()):
    def fake(self, seed=0, scale="quick", device="cpu"):
        if self.slug in raising:
            raise RuntimeError("boom")
        return [c for c in claims if c.paper == self.slug]

    monkeypatch.setattr(papers.Paper, "claims", fake)


def test_cli_exit_code_reflects_unexpected_failures(monkeypatch, capsys):
    good = [Claim("recruitment", "a", "s", 1.0, ">=", 0.0, True, **KIND)]
    bad = [Claim("recruitment", "a", "s", -1.0, ">=", 0.0, True, **KIND)]
    _fake_claims(monkeypatch, good)
    assert cli.main(["claims", "recruitment", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["holds"] is True
    _fake_claims(monkeypatch, bad)
    assert cli.main(["claims", "recruitment"]) == 1
    assert "UNEXPECTED: recruitment.a" in capsys.readouterr().err


def test_cli_exits_0_when_only_claims_not_expected_fail(monkeypatch, capsys):
    """A claim not expected to hold may fail: its row says FAILS and expected "no", the exit
    status stays 0; one expected failure (or a paper that raised) makes it 1."""
    claims = [Claim("recruitment", "a", "s", 1.0, ">=", 0.0, True, **KIND),
              Claim("recruitment", "b", "s", -1.0, ">=", 0.0, False, **KIND),
              Claim("evoclaw", "c", "s", -1.0, ">=", 0.0, False, **KIND)]
    _fake_claims(monkeypatch, claims)
    assert cli.main(["claims", "recruitment", "evoclaw"]) == 0
    out, err = capsys.readouterr()
    row = next(line for line in out.splitlines() if line.startswith("recruitment  b "))
    assert row.split()[7:11] == ["FAILS", "no", "no", "committed"]  # result, expected, estimate
    assert "UNEXPECTED" not in err
    for argv in (["--json"], ["--markdown"]):
        assert cli.main(["claims", "recruitment", "evoclaw", *argv]) == 0
    capsys.readouterr()
    _fake_claims(monkeypatch, [*claims, Claim("evoclaw", "d", "s", -1.0, ">=", 0.0, True,
                                              **KIND)])
    assert cli.main(["claims", "recruitment", "evoclaw"]) == 1
    err = capsys.readouterr().err
    assert "UNEXPECTED: evoclaw.d" in err and "recruitment.b" not in err
    _fake_claims(monkeypatch, claims, raising=("evoclaw",))
    assert cli.main(["claims", "recruitment", "evoclaw"]) == 1  # a paper raised
    assert "RuntimeError: boom" in capsys.readouterr().err


def test_cli_shows_each_claims_committed_estimate_and_its_verdict(monkeypatch, capsys):
    est = {n: e for n, e in estimates.estimates("recruitment").items() if e is not None}
    name, committed = next(iter(est.items()))
    claims = [Claim("recruitment", name, "s", 0.0, "<=", 1.0, True, **KIND),
              Claim("recruitment", "not_a_row", "s", 0.0, "<=", 1.0, True, **KIND)]
    _fake_claims(monkeypatch, claims)
    assert cli.main(["claims", "recruitment", "--markdown"]) == 0
    out = capsys.readouterr().out
    verdict = cli._over_json(committed, "quick")["verdict"]
    row = next(line for line in out.splitlines() if f"| {name} |" in line)
    assert f"| {committed.text()} | {verdict} |" in row
    assert "| no committed values | pending |" in next(
        line for line in out.splitlines() if "| not_a_row |" in line)
    # the JSON keeps the contract: exactly the claim's fields plus holds
    assert cli.main(["claims", "recruitment", "--json"]) == 0
    objs = json.loads(capsys.readouterr().out)
    assert all(set(o) == {*FIELDS, "holds"} for o in objs)
    # at paper scale there are no committed values (they are quick scale)
    assert cli.main(["claims", "recruitment", "--scale", "paper"]) == 0
    assert "no committed values at paper scale" in capsys.readouterr().out


@pytest.mark.parametrize("unit", ["each", "mean"])
def test_over_seeds_verdict_waits_for_the_seeds_0_15(unit):
    """holds / FAILS by the unit's rule once the values cover seeds 0-15, pending before."""
    def verdict(values, seeds):
        return cli._over_json(estimates.estimate(values, ">=", 0.0, unit, seeds), "quick")

    up = [1.0 + 0.1 * (s % 3) for s in range(16)]
    assert verdict(up, range(16))["verdict"] == "holds"
    assert verdict([-v for v in up], range(16))["verdict"] == "FAILS"
    short = verdict(up[:2], range(2))
    assert short["verdict"] == "pending" and short["holds"] is True and short["n"] == 2
    assert short["text"] == estimates.estimate(up[:2], ">=", 0.0, unit).text()
    assert cli._over_json(None, "quick")["text"] == "no committed values"


def _taken_port():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


MISUSES = {
    "serve: port out of range": (["serve", "--port", "99999"], "--port"),
    "serve: port taken": (["serve", "--port", "{taken}"], "--port"),
    "report: --out not writable": (["report", "--out", "/proc/icml26/x"], "--out"),
    "report: unknown paper": (["report", "--out", "{tmp}/site", "--papers", "nope"],
                              "unknown paper"),
    "report: no workers": (["report", "--out", "{tmp}/site", "--workers", "0"], "--workers"),
    "notebooks: unknown paper": (["notebooks", "nope", "--refresh-outputs"], "unknown paper"),
    "notebooks: nothing to do": (["notebooks", "recruitment"], "--refresh-outputs"),
    "claims: unknown scale": (["claims", "recruitment", "--scale", "huge"], "--scale"),
    "claims: seed not a number": (["claims", "recruitment", "--seed", "x"], "--seed"),
    "unknown command": (["serv"], "serv"),
    "claims: unknown paper": (["claims", "no_such_paper"], "unknown paper"),
    "claims: negative seed": (["claims", "recruitment", "--seed", "-1"], "--seed"),
    "claims: unknown device": (["claims", "recruitment", "--device", "tpu"], "--device"),
    "sweep: empty seed range": (["sweep", "recruitment", "--seeds", "5:5"], "seed"),
    "sweep: negative seeds": (["sweep", "recruitment", "--seeds", "-3:2"], "seed"),
    "sweep: unknown paper": (["sweep", "nope", "--seeds", "0:1"], "unknown paper"),
    "sweep: unreachable scheduler": (["sweep", "recruitment", "--seeds", "0:1", "--scheduler",
                                      "tcp://127.0.0.1:1", "--timeout", "1"], "scheduler"),
}


@pytest.mark.parametrize("argv, needle", MISUSES.values(), ids=list(MISUSES))
def test_cli_misuse_is_one_line_and_exit_2(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written: not here, not under --out
    monkeypatch.setenv("ICML26_SWEEPS", str(tmp_path / "sweeps"))
    sock, port = _taken_port()
    try:
        code = cli.main([a.replace("{taken}", str(port)).replace("{tmp}", str(tmp_path))
                         for a in argv])
    finally:
        sock.close()
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and needle in err, (code, err)
    assert not captured.out and not list(tmp_path.iterdir()), list(tmp_path.iterdir())


def test_serve_counts_the_apps_it_serves(monkeypatch, capsys):
    from icml26.dashboards.app import perf

    served = {}
    monkeypatch.setattr(perf, "serve", lambda apps, **kw: served.update(apps))
    sock, port = _taken_port()
    sock.close()  # a free port
    assert cli.main(["serve", "--port", str(port)]) == 0
    routes = [r for r in served if r not in ("/", "/robustness")]
    assert len(routes) == len(papers.built()) == 19
    assert f"serving {len(routes)} paper apps" in capsys.readouterr().err


def test_help_shows_no_rest_markup(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "claims" in out
