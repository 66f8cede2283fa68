"""Explorer for "EvoClaw: Evaluating AI Agents on Continuous Software Evolution" (evoclaw).

Live views: the synthetic commit log of one repository at the chosen noise (commit time vs
its true milestone, by kind: core, fix-up, revert, refactor), and the independence model of the
resolve rate by milestone index (isolated ``p``, continuous ``p ^ (1 + |ancestors|)`` when an
integration test exists) for a package drawn at the chosen density; both cost milliseconds.
Behind the Run button (with progress): the DeepCommit-like reconstruction of that log, then the
generated packages' tests really run for every simulated agent, graded isolated and
continuous.  The module also holds the plot functions the notebook uses for F1-F4.

Serve alone with ``panel serve dashboards/evoclaw.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import numpy as np
import param

from icml26 import evoclaw
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, rows, run_chart

MODE_COLORS = {"isolated": "#1f77b4", "continuous": "#d62728"}
KIND_COLORS = {"core": "#7f7f7f", "fixup": "#ff7f0e", "revert": "#9467bd",
               "refactor": "#2ca02c"}
GRADINGS = {"own state (continuous)": False, "dependencies reset (mutation)": True}


# --------------------------------------------------------------------------- plot functions
def reconstruction_chart(rows: list[dict]) -> Chart:
    """F1: ARI and edge F1 vs noise: mean over repositories (lines) and worst (dotted)."""
    noises = sorted({r["noise"] for r in rows})
    series = [Series("lightgrey", kind="hline", at=0.8, dash="dashed", width=1),
              Series("#cccccc", kind="hline", at=0.7, dash="dotted", width=1),
              Series("#aaaaaa", kind="vline", at=0.2, dash="dotted", width=1)]
    for key, label, color in (("ari", "ARI", "#1f77b4"), ("edge_f1", "edge F1", "#d62728")):
        mean = [np.mean([r[key] for r in rows if r["noise"] == n]) for n in noises]
        worst = [min(r[key] for r in rows if r["noise"] == n) for n in noises]
        series += [Series(color, noises, mean, f"{label} (mean)"),
                   Series(color, noises, worst, f"{label} (worst)", dash="dotted"),
                   Series(color, noises, worst, kind="scatter")]
    n = len({r["repo"] for r in rows})
    return Chart(f"Milestone and DAG recovery over {n} repositories", "commit-log noise",
                 "score (ARI, edge F1)", series)


def by_index_chart(ev: dict, title: str = "Resolve rate by milestone index") -> Chart:
    """F2: resolve rate by milestone index, isolated vs continuous (pooled repositories)."""
    series = []
    for mode in ("isolated", "continuous"):
        y = ev[mode]["by_index"]
        x = np.arange(1, len(y) + 1)
        series += [Series(MODE_COLORS[mode], x, y, f"{mode} ({ev[mode]['score']:.2f})"),
                   Series(MODE_COLORS[mode], x, y, kind="scatter")]
    return Chart(title, "milestone index (DAG order)", "share of milestones resolved", series)


def recall_precision_chart(ev: dict) -> Chart:
    """F3: test recall and precision as milestones accumulate, both modes."""
    series = []
    for mode in ("isolated", "continuous"):
        y_r, y_p = ev[mode]["recall"], ev[mode]["precision"]
        x = np.arange(1, len(y_r) + 1)
        series += [Series(MODE_COLORS[mode], x, y_r, f"recall, {mode}"),
                   Series(MODE_COLORS[mode], x, y_p, f"precision, {mode}", dash="dashed")]
    return Chart("Tests passing as milestones accumulate", "milestones implemented",
                 "share of tests passing", series)


def sweep_chart(rows: list[dict], sweep: str) -> Chart:
    """F4: pooled isolated / continuous score vs ``p`` or vs ``beta``."""
    x_label = {"p": "competence p", "beta": "integration-test share beta"}[sweep]
    series = []
    if sweep == "p":
        grid = sorted({r["p"] for r in rows if r["sweep"] == "p"})
        series.append(Series("lightgrey", grid, grid, "y = p", dash="dashed", width=1))
    for mode in ("isolated", "continuous"):
        pts = sorted((r[sweep], r["score"]) for r in rows
                     if r["sweep"] == sweep and r["mode"] == mode)
        x, y = [a for a, _ in pts], [b for _, b in pts]
        series += [Series(MODE_COLORS[mode], x, y, mode),
                   Series(MODE_COLORS[mode], x, y, kind="scatter")]
    return Chart(f"Score vs {x_label}", x_label, "share of milestones resolved", series)


def model_by_index(spec: evoclaw.PackageSpec, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Independence model: isolated ``p``; continuous ``p ^ (1 + |ancestors(k)|)`` when a
    test of ``k`` is an integration test (else ``p``)."""
    iso = np.full(spec.n, p)
    if spec.n_integration() == 0:
        return iso, iso.copy()
    return iso, np.array([p ** (1 + len(spec.ancestors(k))) for k in range(spec.n)])


LIVE_CAPTION = (
    "*Left:* one synthetic repository's commit log (x: commit time in milestone slots, "
    "y: the milestone a commit belongs to); noise interleaves milestones and adds fix-ups, "
    "reverts and refactors. *Right:* the independence model of the resolve rate by milestone "
    "index for package 1: isolated runs start from the reference code (p), continuous runs "
    "from the agent's own code, so milestone k also needs every ancestor right "
    "(p^(1 + |ancestors|) when it has an integration test). **Run** measures both by running "
    "the generated tests.")


# --------------------------------------------------------------------------- explorer
class EvoClawExplorer(ExplorerBase):
    """Noisy commit logs -> milestones; isolated vs continuous grading of a simulated agent."""

    noise = param.Number(0.2, bounds=(0.0, 0.5), step=0.05,
                         doc="Commit-log noise eta: interleaving, vague messages, cross-cutting "
                             "touches, stray uses, and eta extra fix-up/revert/refactor commits "
                             "per core commit (the claims read 0.2).")
    log_milestones = param.Integer(12, bounds=(3, 14),
                                   doc="Milestones of the previewed repository's log.")
    density = param.Number(0.3, bounds=(0.0, 0.8), step=0.05,
                           doc="DAG density: chance of a dependency on each earlier milestone "
                               "(at most 3 parents), for the log and the packages.")
    pkg_milestones = param.Integer(14, bounds=(3, 20),
                                   doc="Milestones of each generated package (EvoClaw: 98 "
                                       "over 7 repositories, 14 each).")
    p = param.Number(0.85, bounds=(0.0, 1.0), step=0.05,
                     doc="Agent competence: chance of writing a milestone correctly (else one "
                         "of three seeded bugs).")
    r = param.Number(0.0, bounds=(0.0, 0.3), step=0.02,
                     doc="Regression rate: chance that a milestone's change also breaks an "
                         "earlier module (a pass-to-pass regression).")
    beta = param.Selector(default=1.0, objects=[0.0, 0.25, 0.5, 0.75, 1.0],
                          doc="Share of a milestone's 4 tests that are integration tests "
                              "(call its dependencies); 0 = unit tests only, no propagation.")
    grading = param.Selector(default="own state (continuous)", objects=list(GRADINGS),
                             doc="How continuous runs are graded: on the agent's own state, or "
                                 "with dependencies reset to the reference (the mutation).")
    n_repos = param.Integer(7, bounds=(1, 7), doc="Generated packages graded by Run.")
    trajectories = param.Integer(100, bounds=(10, 400), step=10,
                                 doc="Simulated agents per package (the claims use 100).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the logs, packages and agents.")
    run = param.Event(doc="Reconstruct the log, then run and grade the packages' tests.")
    RUN_LABEL, LIVE_CAPTION = "Run reconstruction and grading", LIVE_CAPTION

    # ------------------------------------------------------------------ model
    def config(self) -> evoclaw.EvoConfig:
        """The lib config of these settings (raises ValueError when invalid)."""
        cfg = evoclaw.EvoConfig(
            history=evoclaw.HistoryConfig(n_milestones=self.log_milestones,
                                          density=self.density, noise=self.noise),
            n_repos=self.n_repos, pkg_milestones=self.pkg_milestones,
            pkg_density=self.density, beta=float(self.beta), p=self.p, r=self.r,
            n_trajectories=self.trajectories, reset_dependencies=GRADINGS[self.grading])
        cfg.validate()
        return cfg

    def history(self) -> evoclaw.History:
        cfg = self.config()
        return evoclaw.make_history(cfg.history, np.random.default_rng([self.seed, 0, 0]))

    def plot_data(self) -> dict:
        """The numbers behind the views: the log's commits, the model's curves, the Run's."""
        hist = self.history()
        spec = evoclaw.repo_package(self.config(), self.seed, 0)
        iso, con = model_by_index(spec, self.p)
        data = {"commit_time": np.array([c.time for c in hist.commits]),
                "commit_milestone": hist.labels, "model_isolated": iso,
                "model_continuous": con}
        if self._result is not None:
            ev = self._result["evaluation"]
            data.update({f"{mode}_{key}": np.array(ev[mode][key])
                         for mode in ("isolated", "continuous")
                         for key in ("by_index", "recall", "precision")})
        return data

    @param.depends("noise", "log_milestones", "density", "pkg_milestones", "p", "r", "beta",
                   "n_repos", "trajectories", watch=True, on_init=True)
    def _check(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live views
    @param.depends("noise", "log_milestones", "density", "seed")
    def log_chart(self) -> Chart | None:
        """The previewed repository's commit log: time vs true milestone, by commit kind."""
        try:
            hist = self.history()
        except ValueError:
            return None
        series = []
        for kind, color in KIND_COLORS.items():
            pts = [(c.time, c.milestone) for c in hist.commits if c.kind == kind]
            series.append(Series(color, [t for t, _ in pts], [m for _, m in pts], kind,
                                 kind="scatter"))
        return Chart(f"Commit log: {len(hist.commits)} commits, {len(hist.edges)} dependency "
                     f"edges (noise {self.noise:.2f})", "commit time (milestone slots)",
                     "true milestone", series)

    @param.depends("density", "pkg_milestones", "p", "beta", "seed")
    def model_chart(self) -> Chart | None:
        """The independence model of the resolve rate by milestone index (package 0)."""
        try:
            cfg = self.config()
        except ValueError:
            return None
        spec = evoclaw.repo_package(cfg, self.seed, 0)
        iso, con = model_by_index(spec, self.p)
        x = np.arange(1, spec.n + 1)
        return Chart(f"Model: isolated {iso.mean():.2f}, continuous {con.mean():.2f} "
                     "(package 1)", "milestone index (DAG order)", "chance resolved", [
                         Series(MODE_COLORS["isolated"], x, iso, "isolated = p"),
                         Series(MODE_COLORS["continuous"], x, con,
                                "continuous = p^(1 + ancestors)"),
                         Series(MODE_COLORS["continuous"], x, con, kind="scatter")])

    def live_charts(self) -> list:
        return [self.log_chart, self.model_chart]

    # ------------------------------------------------------------------ Run results
    @run_chart
    def recovered_chart(self) -> Chart | None:
        """The previewed log after reconstruction: commits clustered right vs wrong."""
        rec, hist = self._result["recon"], self._result["history"]
        mapping = evoclaw.majority_map(rec["labels"], hist.labels)
        ok = np.array([mapping[int(k)] == c.milestone
                       for k, c in zip(rec["labels"], hist.commits)])
        t = np.array([c.time for c in hist.commits])
        m = hist.labels
        return Chart(f"Recovered: ARI {rec['ari']:.2f}, edge F1 {rec['edge_f1']:.2f}, "
                     f"{rec['n_found']} clusters", "commit time (milestone slots)",
                     "true milestone", [
                         Series("#1f77b4", t[ok], m[ok], "in its milestone's cluster",
                                kind="scatter"),
                         Series("#d62728", t[~ok], m[~ok], "in another cluster",
                                kind="scatter")])

    @run_chart
    def index_chart(self) -> Chart | None:
        """Measured resolve rate by milestone index, isolated vs continuous."""
        return by_index_chart(self._result["evaluation"], "Measured resolve rate by index")

    @run_chart
    def curves_chart(self) -> Chart | None:
        """Test recall and precision as milestones accumulate."""
        return recall_precision_chart(self._result["evaluation"])

    def run_charts(self) -> list:
        return [self.recovered_chart, self.index_chart, self.curves_chart]

    def result_panes(self) -> list:
        recovered, *rest = self.run_panes()  # the recovered log alone, then two side by side
        return rows([recovered], 1) + rows(rest)

    def result_note(self) -> str:
        if self._result is None:
            return ("**Reconstruction and grading:** press **Run** (the log above is "
                    "clustered; the packages' tests are run for every simulated agent).")
        ev = self._result["evaluation"]
        return (f"**After Run** ({self._result['title']}): isolated "
                f"{ev['isolated']['score']:.3f}, continuous {ev['continuous']['score']:.3f} "
                f"(drop {ev['isolated']['score'] - ev['continuous']['score']:.3f}); "
                f"{ev['runs']} distinct code states whose tests were run.")

    @param.depends("run", watch=True)
    def _run(self) -> None:
        got = self.run_config(lambda: (self.config(), self.history()))
        if got is None:
            return
        (cfg, hist), seed, p, r, beta = got, self.seed, self.p, self.r, float(self.beta)
        stages = [(f"reconstructing the log ({len(hist.commits)} commits)",
                   lambda: evoclaw.reconstruct(hist, cfg.recon))]
        for repo in range(cfg.n_repos):
            stages.append((f"package {repo + 1}/{cfg.n_repos}: {cfg.n_trajectories} agents, "
                           "tests run isolated and continuous",
                           lambda repo=repo: evoclaw.evaluate_repo(
                               cfg, seed, repo, p, r, beta, cfg.n_trajectories,
                               cfg.reset_dependencies)))

        def keep(results):
            self._result = {
                "recon": results[0], "history": hist,
                "evaluation": evoclaw.pool(results[1:]),
                "title": f"p = {p:g}, r = {r:g}, beta = {beta:g}, {cfg.n_repos} packages x "
                         f"{cfg.pkg_milestones} milestones, {cfg.n_trajectories} agents each, "
                         f"{self.grading}, seed {seed}"}

        self.run_stages(stages, keep)


Explorer = EvoClawExplorer
create_app = app_factory(Explorer, (  # the paper's citation, the tier-C statement
    "## EvoClaw: continuous software evolution (evoclaw)\n\n"
    "Deng, Chen, ..., Tang & Wang, *EvoClaw: Evaluating AI Agents on Continuous Software "
    "Evolution*, ICML 2026 ([arXiv 2603.13428](https://arxiv.org/abs/2603.13428)). "
    "**Tier C:** no LLM agent runs here and no real repository is used; the harness "
    "(milestone reconstruction, really-run tests, EvoClaw's grading rule) and the "
    "error-propagation mechanism are reproduced with a simulated agent."))

if __name__.startswith("bokeh"):
    create_app().servable()
