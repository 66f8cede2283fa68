"""Synthetic commit histories with known milestones and a known dependency DAG.

A repository of ``M`` milestones: milestone ``i`` owns a topic (a few words), a few files
``<topic>/<word>.py`` and a few symbols ``<topic>_<word>``; it depends on some earlier
milestones (each earlier one with probability ``density``, at most ``max_parents``) and its
code uses their symbols.  Its commits touch its files, define its symbols, use its parents'
symbols and carry messages built from its topic.  At noise ``eta`` the log is corrupted the way
real logs are (reconstructed from the DeepCommit description, not from its data):

* interleaving: commit times spread over ``1 + 2 eta`` milestone slots, so milestones overlap;
* vague messages: with probability ``eta`` a message has no topic word ("wip", "update");
* cross-cutting touches: with probability ``eta`` a commit also touches another milestone's file;
* stray uses: with probability ``eta / 2`` a commit uses a symbol of a non-parent milestone;
* extra commits, ``eta`` per core commit: fix-ups (``fixup! <msg>``, one file, later), reverts
  (``Revert "<msg>"``, same files, soon after) and refactors (files of two milestones, a
  "refactor: rename helpers" message), each labelled with the milestone it belongs to.

Every draw comes from ``numpy.random.default_rng`` seeded by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26.common import check_int

TOPIC_WORDS = (
    "auth", "cache", "config", "parser", "router", "logger", "metrics", "storage", "queue",
    "scheduler", "session", "billing", "search", "index", "export", "upload", "mailer",
    "webhook", "plugin", "theme", "locale", "backup", "audit", "quota", "token", "cluster",
    "shard", "stream", "codec", "layout", "render", "widget", "sync", "retry", "gateway",
    "payment", "invoice", "profile", "avatar", "notify", "feed", "tag", "vault", "policy")
PART_WORDS = (
    "core", "model", "handler", "client", "server", "util", "schema", "view", "store",
    "loader", "builder", "checker", "reader", "writer", "adapter", "manager", "service")
VERBS = ("add", "implement", "support", "extend", "wire", "introduce", "handle", "finish")
VAGUE = ("wip", "update", "misc changes", "small fixes", "cleanup", "more work", "tweak")


@dataclass(frozen=True)
class HistoryConfig:
    """One synthetic repository; the defaults are this reproduction's (not the paper's)."""

    n_milestones: int = 12  # EvoClaw grades 98 milestones over 7 repositories (~14 each)
    density: float = 0.3  # chance of an edge to each earlier milestone (124 edges / 98 nodes)
    max_parents: int = 3
    files_per_milestone: int = 3
    symbols_per_milestone: int = 3
    topic_words: int = 3  # words of a milestone's topic (its messages draw from them)
    commits_min: int = 4
    commits_max: int = 7
    noise: float = 0.2  # eta above; the claims read noise 0.2

    def validate(self) -> None:
        check_int("n_milestones", self.n_milestones, 2, 40)
        check_int("max_parents", self.max_parents, 0, 10)
        check_int("files_per_milestone", self.files_per_milestone, 1, 8)
        check_int("symbols_per_milestone", self.symbols_per_milestone, 1, 8)
        check_int("topic_words", self.topic_words, 1, 6)
        check_int("commits_min", self.commits_min, 1, 30)
        check_int("commits_max", self.commits_max, self.commits_min, 30)
        for name in ("density", "noise"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        if self.n_milestones * self.topic_words > len(TOPIC_WORDS):
            raise ValueError(f"n_milestones * topic_words must be <= {len(TOPIC_WORDS)} (the "
                             f"topic vocabulary), got {self.n_milestones * self.topic_words}")


@dataclass(frozen=True)
class Commit:
    """One commit of the log: what a diff parser and ``git log`` would give."""

    time: float
    message: str
    files: frozenset[str]
    defines: frozenset[str]
    uses: frozenset[str]
    milestone: int  # ground truth (hidden from the reconstruction)
    kind: str = "core"  # "core" | "fixup" | "revert" | "refactor"


@dataclass(frozen=True)
class History:
    """A repository's milestones, its true DAG (edges ``(parent, child)``) and its log."""

    config: HistoryConfig
    topics: tuple[tuple[str, ...], ...]
    files: tuple[tuple[str, ...], ...]
    symbols: tuple[tuple[str, ...], ...]
    edges: frozenset[tuple[int, int]]
    commits: tuple[Commit, ...] = field(default_factory=tuple)

    @property
    def labels(self) -> np.ndarray:
        return np.array([c.milestone for c in self.commits])


def random_dag(n: int, density: float, max_parents: int, rng) -> frozenset[tuple[int, int]]:
    """Edges ``(j, i)``, ``j < i``: each earlier milestone is a parent with prob. ``density``."""
    edges = set()
    for i in range(1, n):
        parents = [j for j in range(i) if rng.random() < density]
        if len(parents) > max_parents:
            parents = sorted(rng.choice(parents, max_parents, replace=False).tolist())
        edges.update((int(j), i) for j in parents)
    return frozenset(edges)


def make_history(cfg: HistoryConfig, rng: np.random.Generator) -> History:
    """A synthetic repository and its noisy commit log (see the module docstring)."""
    cfg.validate()
    n, eta = cfg.n_milestones, cfg.noise
    words = rng.permutation(len(TOPIC_WORDS))
    topics, files, symbols = [], [], []
    for i in range(n):
        topic = tuple(TOPIC_WORDS[w] for w in words[i * cfg.topic_words:
                                                    (i + 1) * cfg.topic_words])
        parts = rng.choice(len(PART_WORDS), max(cfg.files_per_milestone,
                                               cfg.symbols_per_milestone), replace=False)
        topics.append(topic)
        files.append(tuple(f"{topic[0]}/{PART_WORDS[p]}.py"
                           for p in parts[: cfg.files_per_milestone]))
        symbols.append(tuple(f"{topic[0]}_{PART_WORDS[p]}"
                             for p in parts[: cfg.symbols_per_milestone]))
    edges = random_dag(n, cfg.density, cfg.max_parents, rng)
    parents = {i: sorted(j for j, k in edges if k == i) for i in range(n)}
    spread = 1.0 + 2.0 * eta
    commits: list[Commit] = []
    for i in range(n):
        n_commits = int(rng.integers(cfg.commits_min, cfg.commits_max + 1))
        defs = np.array_split(np.array(symbols[i]), n_commits)
        for c in range(n_commits):
            touched = set(rng.choice(files[i], int(rng.integers(1, min(2, len(files[i])) + 1)),
                                     replace=False).tolist())
            if rng.random() < eta:  # cross-cutting touch of another milestone's file
                other = int(rng.integers(n))
                touched.add(str(rng.choice(files[other])))
            if rng.random() < eta:
                message = str(rng.choice(VAGUE))
            else:
                picked = rng.choice(topics[i], int(rng.integers(1, len(topics[i]) + 1)),
                                    replace=False)
                message = f"{rng.choice(VERBS)} {' '.join(picked.tolist())}"
            uses = set()
            for j in parents[i]:
                if rng.random() < 0.6:
                    uses.add(str(rng.choice(symbols[j])))
            if rng.random() < eta / 2:  # a stray use of a non-parent's symbol
                others = [j for j in range(n) if j != i and j not in parents[i]]
                if others:
                    uses.add(str(rng.choice(symbols[int(rng.choice(others))])))
            time = i + spread * rng.random()
            commits.append(Commit(time, message, frozenset(touched),
                                  frozenset(str(s) for s in defs[c].tolist()),
                                  frozenset(uses), i))
    core = list(commits)
    for _ in range(int(round(eta * len(core)))):
        target = core[int(rng.integers(len(core)))]
        kind = str(rng.choice(["fixup", "revert", "refactor"]))
        i = target.milestone
        if kind == "fixup":
            commits.append(Commit(target.time + rng.random() * 3, f"fixup! {target.message}",
                                  frozenset([min(target.files)]), frozenset(), frozenset(),
                                  i, kind))
        elif kind == "revert":
            commits.append(Commit(target.time + rng.random() * 0.3,
                                  f'Revert "{target.message}"', target.files, frozenset(),
                                  frozenset(), i, kind))
        else:
            other = int(rng.integers(n))
            touched = {str(f) for f in rng.choice(files[i], min(2, len(files[i])),
                                                  replace=False)}
            touched.add(str(rng.choice(files[other])))
            commits.append(Commit(target.time + rng.random(), "refactor: rename helpers",
                                  frozenset(touched), frozenset(), frozenset(), i, kind))
    commits.sort(key=lambda c: c.time)
    return History(cfg, tuple(topics), tuple(files), tuple(symbols), edges, tuple(commits))
