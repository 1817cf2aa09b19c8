"""Splitting raw text into keyed sentences (docs/formats.md).

NLTK Punkt with the installed ``punkt_tab`` English model when ``nltk.data.find``
finds it, else Punkt with the parameters below, which ship with ragreview: a fresh
machine (and the build machines) have no NLTK data and must never try to download it.
CJK text is also split after 。！？ (Punkt only splits before whitespace, and Chinese
and Japanese put none between sentences).

Text is never altered: every sentence is an exact slice ``text[start:end]`` and what
lies between sentences is whitespace only.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from types import ModuleType
from typing import Any

from ..core.keys import doc_key, response_key

# Punkt stores abbreviations lower-case and without the final dot; inner dots stay
# ("e.g." -> "e.g"). Months are the short forms people write with a dot.
ABBREVIATIONS = frozenset(
    """
    dr mr mrs ms prof inc ltd co corp vs etc e.g i.e a.m p.m u.s u.k u.n no nos fig figs
    st jr sr mt ft ave rd blvd dept est approx cf al ed eds vol vols pp ch sec gen col lt
    sgt capt gov sen rep rev hon
    jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)

# Capitalised words that, after an abbreviation, start a new sentence ("… etc. The
# results"): Punkt's frequent-sentence-starter heuristic. Only function words that
# do not follow a title or a figure number ("Dr. Who", "Fig. One", "No. One" stay).
SENTENCE_STARTERS = frozenset(
    """
    the this that these those there then thus however but and also in on at for from
    he she it its we they our their his her you your my while if after before as so
    yet because although though such many most some all both each finally moreover
    furthermore
    """.split()
)

# A CJK sentence ends after 。！？ (also the half-width ideographic stop and runs of
# several terminators), taking trailing closing quotes and brackets with it.
_CJK_END = re.compile(r"[。｡！？]+[”’」』）)】》〉〕\"'\]]*")

_BACKEND = {"name": ""}


# ``import nltk`` loads scipy.stats (nltk.metrics.association) and scikit-learn
# (nltk.classify) whenever they are installed: 2.6 s before the first sentence on a
# machine that has them (a data-science environment, and our dev extra, where every
# test child that sentencizes paid it). Punkt uses neither, so they are hidden while
# nltk itself loads, unless the program already imported them, as _lean_sqlite_utils
# does for pandas; afterwards they import normally. (In such a process nltk's own
# scipy- and sklearn-based helpers, which ragreview never calls, stay unavailable.)
_HIDDEN_FROM_NLTK = ("scipy", "sklearn")


def _punkt() -> ModuleType:
    """``nltk.tokenize.punkt``, nltk loaded without scipy and scikit-learn."""
    hidden = [] if "nltk" in sys.modules else [m for m in _HIDDEN_FROM_NLTK if m not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        from nltk.tokenize import punkt
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
    return punkt


def _bundled_tokenizer() -> Any:
    punkt = _punkt()
    params = punkt.PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    params.sent_starters = set(SENTENCE_STARTERS)
    return punkt.PunktSentenceTokenizer(params)


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    """The installed English ``punkt_tab`` model, else our bundled parameters.

    Only ``nltk.data.find`` and the model's own files are consulted; ``nltk.download``
    is never called, so a missing model costs nothing but the fallback.
    """
    punkt = _punkt()
    import nltk.data

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        tokenizer = punkt.PunktTokenizer("english")
    except (LookupError, OSError, ValueError):
        _BACKEND["name"] = "bundled"
        return _bundled_tokenizer()
    _BACKEND["name"] = "punkt_tab"
    return tokenizer


def backend() -> str:
    """Which parameters are in use: ``"punkt_tab"`` (installed model) or ``"bundled"``."""
    _tokenizer()
    return _BACKEND["name"]


def reset() -> None:
    """Forget the loaded tokenizer (after ``nltk.data.path`` changed, e.g. in tests)."""
    _tokenizer.cache_clear()


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cjk_split(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    for match in _CJK_END.finditer(text, start, end):
        if match.end() < end:
            out.append((start, match.end()))
            start = match.end()
    out.append((start, end))
    return out


def spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: ``text[start:end]`` is the sentence, verbatim.

    Spans are in order, do not overlap, have no leading or trailing whitespace, and
    whitespace-only sentences are dropped.
    """
    if not text or text.isspace():
        return []
    out = []
    for start, end in _tokenizer().span_tokenize(text):
        for s, e in _cjk_split(text, start, end):
            s, e = _trim(text, s, e)
            if s < e:
                out.append((s, e))
    return out


def split(text: str) -> list[str]:
    """The sentences of ``text`` as exact substrings."""
    return [text[s:e] for s, e in spans(text)]


def keyed_document(doc_index: int, text: str) -> tuple[tuple[str, str], ...]:
    """``((\"0a\", sentence), (\"0b\", sentence), …)`` for document ``doc_index``."""
    return tuple((doc_key(doc_index, i), s) for i, s in enumerate(split(text)))


def keyed_response(text: str) -> tuple[tuple[str, str], ...]:
    """``((\"a\", sentence), (\"b\", sentence), …)`` for a response."""
    return tuple((response_key(i), s) for i, s in enumerate(split(text)))
