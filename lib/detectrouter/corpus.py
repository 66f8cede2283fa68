"""Human text that ships with the installed packages, cleaned and cut into passages.

Three corpora, read at run time (nothing downloaded): ``pydoc`` -- the help topics of CPython's
``pydoc_data.topics`` (the language reference as plain text); ``sklearn`` -- the dataset
descriptions ``sklearn/datasets/descr/*.rst``; ``docstrings`` -- the docstrings of a fixed list of
standard-library modules and their public members.  Text is reduced to printable ASCII with
whitespace runs collapsed to one space, so every model shares one alphabet of ``V = 96`` symbols
(95 printable characters + the padding/unknown id 0).

Passages are consecutive windows of ``length`` characters; each corpus's passages are split at
random (from the seed) into ``train`` (the language models' training text), ``ref`` (the human
reference text on which every surrogate's score is z-normalised) and ``test`` (held-out human
passages of the detection test sets).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from functools import cache

import numpy as np
import torch

CORPORA = ("pydoc", "sklearn", "docstrings")
#: id 0 = unknown/padding; ids 1..95 = chr(32)..chr(126)
VOCAB = 96
STDLIB_MODULES = (
    "abc", "argparse", "ast", "asyncio", "base64", "bisect", "calendar", "collections",
    "concurrent.futures", "configparser", "contextlib", "copy", "csv", "dataclasses",
    "datetime", "decimal", "difflib", "email.message", "enum", "fractions", "functools",
    "gettext", "glob", "gzip", "hashlib", "heapq", "hmac", "http.client", "http.server",
    "imaplib", "inspect", "io", "ipaddress", "itertools", "json", "locale", "logging",
    "mailbox", "math", "multiprocessing", "operator", "optparse", "os", "pathlib", "pickle",
    "pprint", "queue", "random", "re", "sched", "secrets", "selectors", "shlex", "shutil",
    "smtplib", "socket", "sqlite3", "ssl", "statistics", "string", "struct", "subprocess",
    "tarfile", "tempfile", "textwrap", "threading", "timeit", "tokenize", "trace",
    "traceback", "typing", "unittest", "urllib.parse", "urllib.request", "uuid", "warnings",
    "weakref", "xml.dom.minidom", "zipfile", "zoneinfo")


def clean(text: str) -> str:
    """Printable ASCII only, whitespace runs collapsed to one space."""
    text = "".join(ch if 32 <= ord(ch) < 127 else " " for ch in text)
    return re.sub(r"\s+", " ", text).strip()


def encode(text: str) -> np.ndarray:
    """``str -> uint8 ids [len]`` (printable ASCII -> 1..95, anything else -> 0)."""
    b = np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8).astype(np.int64) - 31
    return np.where((b >= 1) & (b < VOCAB), b, 0).astype(np.uint8)


def decode(ids) -> str:
    """``ids -> str`` (id 0 shown as '?')."""
    return "".join(chr(int(i) + 31) if 0 < int(i) < VOCAB else "?" for i in ids)


#: run in a fresh interpreter by :func:`_docstrings` (argv[1]: the modules, as JSON)
_DOCSTRINGS = """
import importlib, inspect, json, sys
parts = []
for name in json.loads(sys.argv[1]):
    try:
        mod = importlib.import_module(name)
    except Exception:  # a module missing from this build is skipped
        continue
    parts.append(inspect.getdoc(mod) or "")
    for attr in sorted(getattr(mod, "__all__", None) or dir(mod)):
        if attr.startswith("_"):
            continue
        obj = getattr(mod, attr, None)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and \\
                getattr(obj, "__module__", "").split(".")[0] == name.split(".")[0]:
            parts.append(inspect.getdoc(obj) or "")
print(json.dumps(" ".join(dict.fromkeys(p for p in parts if len(p) > 40))))
"""


def _docstrings() -> str:
    """The public docstrings of :data:`STDLIB_MODULES`, read in a fresh interpreter (``-I``):
    in this process they depend on what else was imported (panel replaces
    ``warnings.formatwarning``), and the app's zoo must be the claims' zoo."""
    done = subprocess.run([sys.executable, "-I", "-c", _DOCSTRINGS, json.dumps(STDLIB_MODULES)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@cache
def raw_corpus(name: str) -> str:
    """The cleaned text of corpus ``name`` (one of :data:`CORPORA`)."""
    if name == "pydoc":
        import pydoc_data.topics as topics

        return clean(" ".join(topics.topics[k] for k in sorted(topics.topics)))
    if name == "sklearn":
        import sklearn

        folder = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "descr")
        texts = [open(f, encoding="utf-8").read() for f in sorted(glob.glob(folder + "/*.rst"))]
        return clean(" ".join(texts))
    if name == "docstrings":
        return clean(_docstrings())
    raise ValueError(f"corpus must be one of {CORPORA}, got {name!r}")


#: a passage is prose when at least this share of its characters are letters or spaces
#: (drops the reST tables and rules of pydoc / sklearn, which every model copies verbatim)
MIN_PROSE = 0.8


def passages(name: str, length: int) -> np.ndarray:
    """Non-overlapping prose windows of corpus ``name``: ``uint8 [n, length]``."""
    ids = encode(raw_corpus(name))
    n = len(ids) // length
    p = ids[: n * length].reshape(n, length)
    letters = np.isin(p, encode(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    return p[letters.mean(1) >= MIN_PROSE]


def split_passages(name: str, length: int, fractions: tuple[float, float],
                   gen: torch.Generator) -> dict[str, np.ndarray]:
    """Random split of ``passages(name, length)`` into ``train`` / ``ref`` / ``test``;
    ``fractions`` = (ref, test) shares, the rest is ``train``."""
    p = passages(name, length)
    perm = torch.randperm(len(p), generator=gen).numpy()
    n_ref, n_test = (int(round(f * len(p))) for f in fractions)
    return {"ref": p[perm[:n_ref]], "test": p[perm[n_ref: n_ref + n_test]],
            "train": p[np.sort(perm[n_ref + n_test:])]}
