"""Explorer for "Lagrangian Perturbation Diffusion Steering" (lpds).

Live views (analytic or a handful of scripted demos, a few ms per step): the obstacle map with
demonstrations at the chosen obstacle offset and noisy share; the latent-norm law
``||eps + Delta||^2`` at the trust region ``||Delta||^2 = delta`` (a noncentral chi^2_16)
against the prior's chi^2_16 and its 99% ball; the share of steered latents outside that ball
as a function of delta.  Behind the Run button (with progress): the flow-matching BC prior,
then LP-DS at the chosen delta, DSRL and residual RL trained online; then return and action
entropy vs episodes, E||Delta||^2 and lambda vs iterations, and decoded paths per method.
The module also holds the chart functions the notebook uses.

Serve alone with ``panel serve dashboards/lpds.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np
import param
import torch
from scipy.stats import chi2, ncx2

from icml26 import lpds
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart

COLORS = {"BC": "#7f7f7f", "LP-DS": "#1f77b4", "DSRL": "#d62728", "residual RL": "#2ca02c",
          "clean demo": "#1f77b4", "noisy demo": "#ff7f0e", "obstacle": "black"}
DIM = lpds.MapConfig().action_dim


def color(label: str) -> str:
    """A label's colour; a grid value ("LP-DS d=2", "DSRL W=3") takes its method's."""
    for method in ("LP-DS", "DSRL", "residual RL"):
        if label == method or label.startswith(method + " "):
            return COLORS[method]
    return COLORS[label]


# --------------------------------------------------------------------------- chart functions
def obstacle_series(m: lpds.MapConfig) -> list[Series]:
    theta = np.linspace(0, 2 * math.pi, 80)
    out = []
    for cx, cy in m.centers().tolist():
        out.append(Series(COLORS["obstacle"], cx + m.radius * np.cos(theta),
                          cy + m.radius * np.sin(theta), width=2))
    goal = m.goal.tolist()
    out.append(Series("black", [goal[0]], [goal[1]], "goal", kind="scatter"))
    return out


def joined(states: np.ndarray, actions: np.ndarray, horizon: int) -> tuple:
    """Many paths as one line with NaN breaks: ``(x, y)``."""
    pts = np.concatenate([states[:, None], actions.reshape(len(actions), horizon, 2)], axis=1)
    pts = np.concatenate([pts, np.full((len(pts), 1, 2), np.nan)], axis=1).reshape(-1, 2)
    return pts[:, 0], pts[:, 1]


def trajectories_chart(exp: dict, m: lpds.MapConfig, labels=None, n: int = 16) -> Chart:
    """Decoded paths (``n`` per method) over the obstacle map."""
    series = obstacle_series(m)
    for label in labels or exp:
        s, a = exp[label]["paths"]
        x, y = joined(np.asarray(s)[:n], np.asarray(a)[:n], m.horizon)
        series.append(Series(color(label), x, y, label, width=1.2 if label == "BC" else 1.6,
                             dash="dotted" if label == "BC" else "solid"))
    return Chart("Decoded waypoint paths per method", "position x", "position y", series,
                 height=340, geometry=True)


def returns_chart(exp: dict) -> Chart:
    """Online return vs episodes (dashed: the frozen BC policy)."""
    series = [Series(COLORS["BC"], kind="hline", at=exp["BC"]["final_return"], dash="dashed")]
    for label, res in exp.items():
        if label != "BC":
            h = res["history"]
            series.append(Series(color(label), h["episodes"], h["return"], label))
    return Chart("Return vs episodes (dashed: frozen BC)", "episodes", "mean return", series)


def entropy_chart(exp: dict) -> Chart:
    """Action entropy (Kozachenko-Leonenko, nats) vs episodes (dashed: BC)."""
    series = [Series(COLORS["BC"], kind="hline", at=exp["BC"]["final_entropy"], dash="dashed")]
    for label, res in exp.items():
        if label != "BC":
            h = res["history"]
            series.append(Series(color(label), h["ent_episodes"], h["entropy"], label))
    return Chart("Action entropy vs episodes (dashed: frozen BC)", "episodes",
                 "entropy of 16-D chunks (nats)", series)


def dual_chart(res: dict, delta: float) -> Chart:
    """E||Delta||^2 and lambda vs iterations for one LP-DS run (dashed: delta)."""
    h = res["history"]
    it = np.arange(1, len(h["lam"]) + 1)
    return Chart(f"Trust region: E||Delta||^2 vs delta = {delta:g}, and lambda", "iteration",
                 "E||Delta||^2, lambda", [
                     Series("black", kind="hline", at=delta, dash="dashed", width=1),
                     Series(COLORS["LP-DS"], it, h["delta_sq"], "E||Delta||^2"),
                     Series("#9467bd", it, h["lam"], "lambda")])


def latent_hist_chart(exp: dict, bins: int = 40) -> Chart:
    """Histogram (density) of ||w||^2 per method against chi^2_16 and its 99% quantile."""
    q = lpds.chi2_quantile(DIM)
    edges = np.linspace(0, max(60.0, q * 1.5), bins + 1)
    mid = (edges[1:] + edges[:-1]) / 2
    series = [Series("black", mid, chi2.pdf(mid, DIM), "chi^2_16", dash="dashed"),
              Series("black", kind="vline", at=q, dash="dotted", width=1)]
    for label, res in exp.items():
        if label == "BC" or label.startswith("residual RL"):
            continue
        dens, _ = np.histogram(np.clip(np.asarray(res["latent_sq"]), 0, edges[-1]), edges,
                               density=True)
        series.append(Series(color(label), mid, dens, label))
    return Chart("Latent norms ||w||^2 (dotted: 99% ball of the prior)", "||w||^2",
                 "density", series)


def tuning_chart(exp: dict, cfg: lpds.LPDSConfig) -> Chart:
    """Claims v3's symmetric tuning: each method's evaluation return at each of its 3
    settings (left to right in grid order), the validation-best one circled in
    black (the one every comparison reads); dashed: the frozen BC policy."""
    groups = lpds.method_groups(cfg)
    series = [Series(COLORS["BC"], kind="hline", at=exp["BC"]["final_return"], dash="dashed",
                     width=1)]
    bx, by = [], []
    for i, (method, labels) in enumerate(groups.items()):
        xs = i + np.linspace(-0.2, 0.2, len(labels))
        series.append(Series(COLORS[method], xs, [exp[k]["final_return"] for k in labels],
                             f"{method}: {', '.join(k[len(method) + 1:] for k in labels)}",
                             kind="scatter"))
        best = lpds.tuned(exp, labels)
        bx.append(float(xs[labels.index(best)]))
        by.append(exp[best]["final_return"])
    series.append(Series("black", bx, by, "validation-best setting", kind="line", width=1))
    return Chart("Each method at its 3 settings; black: chosen on the shared validation split",
                 "method", "evaluation return", series, x_names=list(groups))


def entropy_contrast_chart(exp: dict, cfg: lpds.LPDSConfig) -> Chart:
    """Action entropy of DSRL against its noise-space bound W, beside LP-DS at its
    validation-best delta (solid) and the frozen BC policy (dashed): entropy_vs_unconstrained
    reads the gap at the largest W (dotted)."""
    labels = lpds.method_groups(cfg)["DSRL"]
    mc = lpds.method_configs(cfg)
    pts = sorted((mc[k].dsrl_bound, exp[k]["final_entropy"]) for k in labels)
    best = lpds.tuned(exp, lpds.method_groups(cfg)["LP-DS"])
    return Chart("Entropy vs DSRL's bound W (dotted: least constrained)",
                 "DSRL noise-space bound W", "entropy of 16-D chunks (nats)", [
                     Series(COLORS["DSRL"], [p[0] for p in pts], [p[1] for p in pts],
                            "DSRL", kind="line"),
                     Series(COLORS["DSRL"], [p[0] for p in pts], [p[1] for p in pts],
                            kind="scatter"),
                     Series(COLORS["LP-DS"], kind="hline", at=exp[best]["final_entropy"]),
                     Series(COLORS["LP-DS"], [pts[0][0]], [exp[best]["final_entropy"]],
                            f"{best} (validation-best)", kind="scatter"),
                     Series(COLORS["BC"], kind="hline", at=exp["BC"]["final_entropy"],
                            dash="dashed", width=1),
                     Series("black", kind="vline", at=pts[-1][0], dash="dotted", width=1)])


# --------------------------------------------------------------------------- live (cheap)
@functools.lru_cache(maxsize=64)
def demo_paths(noisy_share: float, obstacle_y: float, seed: int, n: int = 24) -> dict:
    m = lpds.MapConfig(noisy_share=noisy_share, obstacle_y=obstacle_y)
    d = lpds.demonstrations(m, n, torch.Generator().manual_seed(seed))
    return {k: v.numpy() for k, v in d.items()}


LIVE_CAPTION = (
    "*Left:* the map (two disks with a narrow gap; start at x = -1, goal at x = +1) and "
    "scripted demos, clean (blue) and noisy (orange). *Middle:* with the trust region full, "
    "||Delta||^2 = delta, the steered latent w = eps + Delta has ||w||^2 ~ noncentral "
    "chi^2_16(delta), against the prior's chi^2_16 (dashed) and its 99% ball (dotted). "
    "*Right:* the share of steered latents outside that ball vs delta (dashed: the claim's "
    "5%).")


# --------------------------------------------------------------------------- explorer
class LPDSExplorer(ExplorerBase):
    """Set the trust region; watch the latents' law; Run trains LP-DS and its baselines."""

    delta = param.Number(0.5, bounds=(0.05, 8.0), step=0.05,
                         doc="Trust region delta: E||Delta(s)||^2 <= delta.")
    eta_lambda = param.Number(0.5, bounds=(0.0, 5.0), step=0.1,
                              doc="Dual step size eta_lambda (0 freezes lambda at 0: the "
                                  "mutation, no trust region).")
    actor_hidden = param.Integer(64, bounds=(8, 256), step=8,
                                 doc="Width of the steering network Delta_theta(s).")
    critic_lr = param.Selector(default=3e-3, objects=[1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
                               doc="Learning rate of the reward model Q(s, w).")
    euler_steps = param.Integer(4, bounds=(1, 16),
                                doc="Euler steps of the flow-matching prior's decoder.")
    noisy_share = param.Number(0.3, bounds=(0.0, 0.9), step=0.05,
                               doc="Share of noisy, suboptimal demonstrations (demo mix).")
    obstacle_y = param.Number(0.2, bounds=(-0.4, 0.4), step=0.05,
                              doc="Vertical offset of the obstacle pair (0: both routes equal).")
    knn_k = param.Integer(3, bounds=(1, 10), doc="k of the Kozachenko-Leonenko entropy.")
    iterations = param.Integer(60, bounds=(10, 200), step=10,
                               doc="Online iterations (x 256 episodes) per method.")
    warmup = param.Integer(6, bounds=(0, 50),
                           doc="Iterations collected with the BC prior before actor steps.")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of demos, prior and online runs.")
    run = param.Event(doc="Train the prior, then LP-DS, DSRL and residual RL online.")

    INVALID_EXAMPLES = [{"iterations": 10, "warmup": 20}]
    RUN_LABEL, LIVE_CAPTION, LIVE_ROW = "Run steering", LIVE_CAPTION, 3

    def config(self) -> lpds.LPDSConfig:
        """The lib config of a Run (raises ValueError when invalid)."""
        base = lpds.config_for("quick")
        m = replace(base.map, noisy_share=self.noisy_share, obstacle_y=self.obstacle_y)
        prior = replace(base.prior, euler_steps=self.euler_steps)
        steer = replace(base.steer, eta_lambda=self.eta_lambda, actor_hidden=self.actor_hidden,
                        critic_lr=self.critic_lr, knn_k=self.knn_k, iterations=self.iterations,
                        warmup=self.warmup)
        m.validate(), prior.validate(), steer.validate()
        # one delta, so one value of each baseline's grid (the same tuning budget)
        return replace(base, map=m, prior=prior, steer=steer, deltas=(self.delta,),
                       dsrl_bounds=base.dsrl_bounds[:1],
                       residual_scales=base.residual_scales[:1])

    @param.depends("iterations", "warmup", "noisy_share", "obstacle_y", watch=True, on_init=True)
    def _check(self) -> None:
        self._show_error()

    def plot_data(self) -> dict:
        """The numbers behind the views; ``share`` (``off_share`` over a grid of deltas):
        P(||eps + Delta||^2 > chi^2_{16,0.99}) at ||Delta||^2 = delta (noncentral chi^2)."""
        deltas = np.linspace(0.05, 8.0, 80)
        q = lpds.chi2_quantile(DIM)
        r = np.linspace(0.5, 70, 140)
        data = {"demos": demo_paths(round(self.noisy_share, 4), round(self.obstacle_y, 4),
                                    self.seed),
                "deltas": deltas,
                "off_share": ncx2.sf(q, DIM, deltas),
                "share": float(ncx2.sf(q, DIM, self.delta)), "quantile": q, "r": r,
                "prior_pdf": chi2.pdf(r, DIM), "steered_pdf": ncx2.pdf(r, DIM, self.delta)}
        if self._result is not None:
            data["final_returns"] = {k: v["final_return"] for k, v in
                                     self._result["exp"].items()}
        return data

    # ------------------------------------------------------------------ live views
    @param.depends("noisy_share", "obstacle_y", "seed")
    def map_chart(self) -> Chart:
        """The obstacle map with 24 scripted demonstrations (clean / noisy)."""
        d = demo_paths(round(self.noisy_share, 4), round(self.obstacle_y, 4), self.seed)
        m = lpds.MapConfig(obstacle_y=self.obstacle_y)
        series = obstacle_series(m)
        for label, mask in (("clean demo", ~d["noisy"]), ("noisy demo", d["noisy"])):
            x, y = joined(d["states"][mask], d["actions"][mask], m.horizon)
            series.append(Series(COLORS[label], x, y, label, width=1.2))
        return Chart(f"Map and demos ({self.noisy_share:.0%} noisy)", "position x",
                     "position y", series, height=320, geometry=True)

    @param.depends("delta")
    def latent_law_chart(self) -> Chart:
        """Law of ||eps + Delta||^2 at ||Delta||^2 = delta vs the prior's chi^2_16."""
        d = self.plot_data()
        return Chart(f"||w||^2 at delta = {self.delta:g}: {d['share']:.1%} off the 99% ball",
                     "||w||^2", "density", [
                         Series("black", kind="vline", at=d["quantile"], dash="dotted", width=1),
                         Series("black", d["r"], d["prior_pdf"], "prior chi^2_16",
                                dash="dashed"),
                         Series(COLORS["LP-DS"], d["r"], d["steered_pdf"], "steered")],
                     height=320)

    @param.depends("delta")
    def share_chart(self) -> Chart:
        """Share of steered latents outside the prior's 99% ball vs delta (dashed: 5%)."""
        d = self.plot_data()
        return Chart("Off-support share vs trust region", "delta (E||Delta||^2)",
                     "share outside the 99% ball", [
                         Series("black", kind="hline", at=0.05, dash="dashed", width=1),
                         Series(COLORS["LP-DS"], d["deltas"], d["off_share"], "ncx2 tail"),
                         Series("black", [self.delta], [d["share"]], "chosen delta",
                                kind="scatter")], height=320)

    def live_charts(self) -> list:
        return [self.map_chart, self.latent_law_chart, self.share_chart]

    # ------------------------------------------------------------------ Run views
    @run_chart
    def run_returns_chart(self) -> Chart | None:
        return returns_chart(self._result["exp"])

    @run_chart
    def run_entropy_chart(self) -> Chart | None:
        return entropy_chart(self._result["exp"])

    @run_chart
    def run_dual_chart(self) -> Chart | None:
        r = self._result
        return dual_chart(r["exp"][r["lp_label"]], r["delta"])

    @run_chart
    def run_paths_chart(self) -> Chart | None:
        return trajectories_chart(self._result["exp"], self._result["map"])

    def run_charts(self) -> list:
        return [self.run_returns_chart, self.run_entropy_chart, self.run_dual_chart,
                self.run_paths_chart]

    def result_note(self) -> str:
        if self._result is None:
            return ("**Online steering:** press **Run** (flow-matching BC prior, then LP-DS at "
                    "this delta, DSRL and residual RL; cached per setting; the cost: under the Run "
                    "button).")
        r = self._result
        rets = ", ".join(f"{k} {v['final_return']:.3f}" for k, v in r["exp"].items())
        return f"**Online steering** ({r['title']}): final returns {rets}."

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed
        labels = list(lpds.method_configs(cfg))

        def keep(results):
            exp = {"BC": results[1], **dict(zip(labels, results[2:]))}
            self._result = {"exp": exp, "map": cfg.map, "delta": self.delta,
                            "lp_label": labels[0],
                            "title": f"delta {self.delta:g}, eta_lambda {self.eta_lambda:g}, "
                                     f"{cfg.steer.iterations} x {cfg.steer.n_envs} episodes, "
                                     f"seed {seed}"}

        stages = [("flow-matching BC prior", lambda: lpds.trained_prior(cfg, seed)),
                  ("frozen BC policy: evaluation", lambda: lpds.bc_result(cfg, seed))]
        stages += [(f"{label}: online training",
                    functools.partial(lpds.run_method, cfg, label, seed)) for label in labels]
        self.run_stages(stages, keep)


Explorer = LPDSExplorer
create_app = app_factory(Explorer, (
    "## LP-DS: Lagrangian perturbation diffusion steering (lpds)\n\n"
    "*Lagrangian Perturbation Diffusion Steering: Latent RL for Generative Policies* "
    "([arXiv 2606.01151](https://arxiv.org/abs/2606.01151)); a toy 2-D reconstruction "
    "derived from the abstract. Live: the trust region's effect on the latents; **Run** "
    "trains a flow-matching BC prior and steers it online (LP-DS, DSRL, residual RL)."))

if __name__.startswith("bokeh"):
    create_app().servable()
