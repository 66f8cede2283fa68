"""The data of ``unilid``: Django's translation catalogues as a language-ID corpus.

Django ships a ``.po`` catalogue per language and per app (``django/**/locale/<code>/
LC_MESSAGES/django.po``). The files are read as data from the installed distribution's
directory (located through ``importlib.metadata``, so Django is never imported).

One label = one Django locale code. A UI string is a ``msgstr`` (``msgstr[0]`` for plurals)
with placeholders (``%(name)s``, ``%s``, ``{name}``) and markup removed; strings that occur
under more than one label are dropped (identical translations of close pairs say nothing
about the label). Each label's strings are shuffled with the seed's generator and split in
half: a train pool and a test pool. A *sample* is a pseudo-sentence: strings of one pool,
drawn without replacement, joined by spaces until it reaches ``min_chars`` characters (a
FLORES-like sentence length; the spec's first probe on single 10-40 character strings did not
reproduce the 5-shot numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import torch

#: The close pairs of the spec (dialects / very close languages).
CLOSE12 = ("pt", "pt_BR", "nb", "nn", "hsb", "dsb", "es", "es_AR", "cs", "sk", "hr", "bs")
CLOSE_PAIRS = (("pt", "pt_BR"), ("nb", "nn"), ("hsb", "dsb"), ("es", "es_AR"), ("cs", "sk"),
               ("hr", "bs"))
#: Ten distinct Latin-script languages (ours; the spec does not list its distinct set).
DISTINCT10 = ("de", "fr", "it", "nl", "pl", "fi", "hu", "tr", "ro", "id")
ALL22 = DISTINCT10 + CLOSE12
LANGUAGE_SETS = {"all22": ALL22, "close12": CLOSE12, "distinct10": DISTINCT10}

_PLACEHOLDER = re.compile(r"%\([^)]*\)[-#0 +]*\d*(?:\.\d+)?[sdifrx]|%[sdifr]|\{[^}]*\}|<[^>]+>"
                          r"|&[a-z]+;")
_SPACES = re.compile(r"\s+")


def django_root() -> Path:
    """The installed ``django`` package directory (located, never imported)."""
    try:
        dist = metadata.distribution("django")
    except metadata.PackageNotFoundError as err:
        raise RuntimeError("the django distribution (a data-only dependency) is not "
                           "installed") from err
    return Path(dist.locate_file("django"))


@lru_cache(maxsize=1)
def _catalogues() -> dict[str, tuple[Path, ...]]:
    """Locale code -> its ``django.po`` files, from one walk of the package directory."""
    out: dict[str, list[Path]] = {}
    for path in sorted(django_root().glob("**/locale/*/LC_MESSAGES/django.po")):
        out.setdefault(path.parent.parent.name, []).append(path)
    return {code: tuple(paths) for code, paths in out.items()}


def po_files(code: str) -> list[Path]:
    """Every ``django.po`` catalogue of locale ``code`` (all apps), sorted."""
    files = _catalogues().get(code)
    if not files:
        raise ValueError(f"no Django catalogue for locale {code!r}")
    return list(files)


def _unquote(line: str) -> str:
    s = line.strip()
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
    return s.replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").replace("\\\\", "\\")


def parse_po(text: str) -> list[str]:
    """The translated strings of a ``.po`` text: non-fuzzy ``msgstr`` / ``msgstr[0]`` (the
    header entry, the ``msgstr`` of ``msgid ""``, is skipped)."""
    out, cur, fuzzy, in_str, header = [], [], False, False, False

    def flush():
        s = "".join(cur)
        if in_str and s and not fuzzy and not header:
            out.append(s)

    for line in text.splitlines():
        if line.startswith("#,"):
            flush()
            cur, in_str, fuzzy = [], False, "fuzzy" in line
        elif line.startswith("msgid ") or line.startswith("msgctxt "):
            flush()
            cur, in_str = [], False
            if line.startswith("msgid "):  # the catalogue header is the msgstr of msgid ""
                header = line.strip() == 'msgid ""'
        elif line.startswith('"') and not in_str and header:
            header = False  # a multi-line msgid that starts with an empty first line
        elif line.startswith("msgstr ") or line.startswith("msgstr[0] "):
            cur, in_str = [_unquote(line.split(" ", 1)[1])], True
        elif line.startswith("msgstr["):
            flush()
            cur, in_str = [], False
        elif line.startswith('"') and in_str:
            cur.append(_unquote(line))
        elif not line.strip():
            flush()
            cur, in_str, fuzzy = [], False, False
    flush()
    return out


def clean(s: str) -> str:
    """Placeholders and markup removed, whitespace collapsed."""
    return _SPACES.sub(" ", _PLACEHOLDER.sub(" ", s)).strip(" .,:;")


@lru_cache(maxsize=64)
def language_strings(code: str, min_len: int = 4) -> tuple[str, ...]:
    """The distinct cleaned strings of locale ``code`` (at least ``min_len`` characters and
    one letter), in file order."""
    seen: dict[str, None] = {}
    for path in po_files(code):
        for s in parse_po(path.read_text(encoding="utf-8")):
            c = clean(s)
            if len(c) >= min_len and any(ch.isalpha() for ch in c):
                seen.setdefault(c, None)
    return tuple(seen)


def corpus(codes: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Each label's strings minus those shared with another label of the *whole* 22-label
    set (so a language's data do not depend on which subset is studied)."""
    everyone = tuple(dict.fromkeys(ALL22 + tuple(codes)))
    counts: dict[str, int] = {}
    for code in everyone:
        for s in language_strings(code):
            counts[s] = counts.get(s, 0) + 1
    return {c: tuple(s for s in language_strings(c) if counts[s] == 1) for c in codes}


@dataclass(frozen=True)
class Split:
    """Per label: the shuffled train pool and test pool of strings."""

    train: dict[str, tuple[str, ...]]
    test: dict[str, tuple[str, ...]]


def split_pools(codes: tuple[str, ...], seed: int) -> Split:
    """Shuffle each label's strings with the seed and cut them in half (train / test)."""
    strings = corpus(codes)
    train, test = {}, {}
    for i, code in enumerate(codes):
        g = torch.Generator().manual_seed(1_000_003 * seed + ALL22.index(code)
                                          if code in ALL22 else seed * 7919 + i)
        order = torch.randperm(len(strings[code]), generator=g).tolist()
        pool = [strings[code][j] for j in order]
        half = len(pool) // 2
        train[code], test[code] = tuple(pool[:half]), tuple(pool[half:])
    return Split(train, test)


def pseudo_sentences(pool: tuple[str, ...], n: int, min_chars: int, start: int = 0
                     ) -> tuple[list[str], int]:
    """``n`` pseudo-sentences from ``pool[start:]`` (each string used once, in order).

    Returns the sentences and the next unused index; raises ``ValueError`` when the pool runs
    out (a clear message instead of silently reusing strings)."""
    out, i = [], start
    for _ in range(n):
        parts, length = [], 0
        while length < min_chars:
            if i >= len(pool):
                raise ValueError(f"the pool of {len(pool)} strings ran out after {len(out)} "
                                 f"samples of >= {min_chars} characters")
            parts.append(pool[i])
            length += len(pool[i]) + 1
            i += 1
        out.append(" ".join(parts))
    return out, i


@dataclass(frozen=True)
class Samples:
    """Labelled samples of one seed: ``train[code]`` (k per label), ``valid[code]`` (for
    tuning the baselines), ``test[code]``, and ``unlabelled`` (the pooled train-pool strings
    the shared vocabulary is trained on)."""

    train: dict[str, list[str]]
    valid: dict[str, list[str]]
    test: dict[str, list[str]]
    unlabelled: list[str]


def make_samples(codes: tuple[str, ...], k: int, n_valid: int, n_test: int, min_chars: int,
                 seed: int) -> Samples:
    """k training, ``n_valid`` validation samples from the train pools, ``n_test`` from the
    test pools; the unlabelled text is every train-pool string of every label."""
    split = split_pools(codes, seed)
    train, valid, test = {}, {}, {}
    for code in codes:
        train[code], nxt = pseudo_sentences(split.train[code], k, min_chars)
        valid[code], _ = pseudo_sentences(split.train[code], n_valid, min_chars, nxt)
        test[code], _ = pseudo_sentences(split.test[code], n_test, min_chars)
    unlabelled = [s for code in codes for s in split.train[code]]
    return Samples(train, valid, test, unlabelled)
