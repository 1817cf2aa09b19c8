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

import importlib
import importlib.abc
import importlib.util
import os
import re
import string
import sys
import types
from functools import lru_cache
from itertools import repeat
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
_CJK_STOP = re.compile(r"[。｡！？]")  # (where none is, _CJK_END finds nothing)

_BACKEND = {"name": ""}


def _default_data_dirs() -> tuple[str, ...]:
    """nltk.data's search path when nothing changed it (nltk/data.py, POSIX and Windows
    lists together): where an installed punkt_tab model could be."""
    return (
        *(d for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d),
        "~/nltk_data",
        os.path.join(sys.prefix, "nltk_data"),
        os.path.join(sys.prefix, "share", "nltk_data"),
        os.path.join(sys.prefix, "lib", "nltk_data"),
        os.path.join(os.environ.get("APPDATA", "C:\\"), "nltk_data"),
        "/usr/share/nltk_data",
        "/usr/local/share/nltk_data",
        "/usr/lib/nltk_data",
        "/usr/local/lib/nltk_data",
        r"C:\nltk_data",
        r"D:\nltk_data",
        r"E:\nltk_data",
    )


def _punkt_module() -> Any:
    """``nltk.tokenize.punkt``, without running ``nltk/__init__.py`` when nltk is not
    loaded yet: that imports most of NLTK, scipy and scikit-learn (1-4 s, more than a
    whole RAGBench import of 2,000 records), and Punkt needs none of it. The two parent
    packages are stood in for while Punkt and its few helper modules load, then every
    ``nltk`` entry leaves ``sys.modules`` again, so a later ``import nltk`` loads the
    real package afresh (this Punkt module stays referenced here only)."""
    if "nltk" in sys.modules:
        from nltk.tokenize import punkt

        return punkt
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("nltk")
    root = list(spec.submodule_search_locations)[0]
    try:
        return _load_punkt(root, lean=True)
    except Exception:  # an nltk whose Punkt needs more at import: load its helpers too
        return _load_punkt(root, lean=False)


# What Punkt's sentence splitting runs on: the module itself and nltk's regex wrapper.
# Its other imports serve loading, saving and training models (nltk.pathsec alone
# imports http.client, ssl and email: 0.2 G instructions, a tenth of an MT-RAG import
# of 2,000 records, issue 27).
_PUNKT_NEEDS = frozenset(("nltk.tokenize.punkt", "nltk.redos"))


def _load_punkt(root: str, lean: bool) -> Any:
    """Import ``nltk.tokenize.punkt`` under stand-in ``nltk`` packages; when ``lean``,
    every nltk module it imports besides ``_PUNKT_NEEDS`` is a stand-in too, whose
    names are placeholders that raise when used. Then every ``nltk`` entry leaves
    ``sys.modules`` again."""
    for name, folder in (("nltk", root), ("nltk.tokenize", os.path.join(root, "tokenize"))):
        stand_in = types.ModuleType(name)
        stand_in.__path__ = [folder]
        sys.modules[name] = stand_in
    finder = _StandInFinder()
    if lean:
        sys.meta_path.insert(0, finder)
    try:
        return importlib.import_module("nltk.tokenize.punkt")
    finally:
        if lean:
            sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "nltk" or n.startswith("nltk.")]:
            del sys.modules[name]


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every ``nltk.*`` module outside ``_PUNKT_NEEDS`` as a ``_StandIn``."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.startswith("nltk.") and fullname not in _PUNKT_NEEDS:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return _StandIn(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _StandIn(types.ModuleType):
    """A module none of whose names Punkt's splitting uses: each is a class (one may be
    a base class, as ``TokenizerI`` is) that raises when called."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        where = f"{self.__name__}.{name}"

        def unavailable(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError(f"{where} is not loaded (ragreview loads Punkt's splitting only)")

        placeholder = type(name, (), {"__init__": unavailable, "__module__": self.__name__})
        setattr(self, name, placeholder)
        return placeholder


def _model_may_be_installed() -> bool:
    """Whether a punkt_tab model could be on ``nltk.data.path``: nltk's own answer
    when nltk is loaded (a caller may have changed the path), else whether one of
    nltk's default data folders holds ``tokenizers/punkt_tab`` (a folder or a zip)."""
    if "nltk.data" in sys.modules:
        return True
    for folder in _default_data_dirs():
        base = os.path.join(os.path.expanduser(folder), "tokenizers")
        if os.path.exists(os.path.join(base, "punkt_tab")) or os.path.exists(
            os.path.join(base, "punkt_tab.zip")
        ):
            return True
    return False


def _memoized(tokenizer: Any) -> Any:
    """Punkt decides each candidate break from its short context alone ("word. Next"),
    with fixed parameters: the same context always gives the same answer, and contexts
    repeat a lot, so each is decided once (most of Punkt's time, issue 27)."""
    tokenizer.text_contains_sentbreak = lru_cache(maxsize=16_384)(tokenizer.text_contains_sentbreak)
    return tokenizer


def _bundled_tokenizer() -> Any:
    punkt = _punkt_module()
    params = punkt.PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    params.sent_starters = set(SENTENCE_STARTERS)
    return _memoized(punkt.PunktSentenceTokenizer(params))


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    """The installed English ``punkt_tab`` model, else our bundled parameters.

    Only ``nltk.data.find`` and the model's own files are consulted; ``nltk.download``
    is never called, so a missing model costs nothing but the fallback.
    """
    if not _model_may_be_installed():
        _BACKEND["name"] = "bundled"
        return _bundled_tokenizer()
    import nltk.data
    from nltk.tokenize.punkt import PunktTokenizer

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
        tokenizer = PunktTokenizer("english")
    except (LookupError, OSError, ValueError):
        _BACKEND["name"] = "bundled"
        return _bundled_tokenizer()
    _BACKEND["name"] = "punkt_tab"
    return _memoized(tokenizer)


def backend() -> str:
    """Which parameters are in use: ``"punkt_tab"`` (installed model) or ``"bundled"``."""
    _tokenizer()
    return _BACKEND["name"]


def reset() -> None:
    """Forget the loaded tokenizer (after ``nltk.data.path`` changed, e.g. in tests)."""
    _tokenizer.cache_clear()
    _contexts.cache_clear()
    _spans.cache_clear()
    keyed_document.cache_clear()


_WHITESPACE = tuple(string.whitespace)  # what Punkt takes for the space before a word


def _unwrapped(pattern: Any) -> Any:
    """The compiled pattern behind nltk's ``redos.TimedPattern`` (newer nltk wraps every
    regex to run it under a time limit, which costs half of each search); Punkt's two
    patterns used here are fixed and linear. An older nltk's plain pattern as it is."""
    return getattr(pattern, "_rx", pattern)


def _exact_context(text: str, word_start: int, match: Any) -> str:
    """What Punkt decides a candidate break on: the word, the end character and what
    the lookahead matched (group 1, "after_tok"), which follow each other."""
    return text[word_start : match.end(1)]


_PLAIN_WORD = "xx"  # (two ASCII letters: no initial, number, ellipsis or abbreviation)
_PLAIN_NEXT = "Xx"


@lru_cache(maxsize=8)
def _contexts(tokenizer: Any) -> Any:
    """How ``punkt_spans`` gives ``tokenizer`` a candidate's context: ``_exact_context``,
    or, where plain words decide alike (no collocations, and nltk's own tokenizer,
    token and language classes), one Punkt decides alike with fewer distinct texts, so
    the memoised decision is mostly found: each new word pair was a miss costing ~100 us
    of nltk's token objects (issue 27: most of an MT-RAG response's split).

    A word of two or more ASCII letters that is no abbreviation is a sentence break on
    its first pass, and nothing in the second pass reads it: it is no initial, number,
    ellipsis or abbreviation, and the collocation check finds none. A next token of
    ASCII letters and digits is then read by no heuristic either, and both tokenize as
    any other such word does. So the word becomes ``xx`` and such a next token ``Xx``,
    whitespace and punctuation kept as they are. tests/formats/test_sentencizer.py
    holds the decisions equal on random contexts and the splits equal nltk's on every
    fixture text."""
    params = tokenizer._params
    names = getattr(type(tokenizer).__init__, "__globals__", {})  # (its punkt module's)
    if (
        params.collocations
        or type(tokenizer) not in (names.get("PunktSentenceTokenizer"), names.get("PunktTokenizer"))
        or type(tokenizer._lang_vars) is not names.get("PunktLanguageVars")
        or tokenizer._Token is not names.get("PunktToken")
    ):
        return _exact_context
    abbreviations = frozenset(params.abbrev_types)
    if _PLAIN_WORD in abbreviations:
        return _exact_context

    def context(text: str, word_start: int, match: Any) -> str:
        end = match.start()
        word = text[word_start:end]
        if len(word) < 2 or not word.isascii() or not word.isalpha():
            return text[word_start : match.end(1)]
        if word.lower() in abbreviations:
            return text[word_start : match.end(1)]
        after = match.start(2)  # ("next_tok"; -1 when it did not match)
        if after >= 0:
            following = text[after : match.end(2)]
            if following.isascii() and following.isalnum():
                return _PLAIN_WORD + text[end:after] + _PLAIN_NEXT
        return _PLAIN_WORD + text[end : match.end(1)]

    return context


# nltk's period context pattern with its verbose whitespace and comments taken out: a
# sentence end character, then only a lookahead. Each match is then that one character,
# and the matches are the end characters where the pattern matches.
_PERIOD_CONTEXT = r"%(SentEndChars)s(?=(?P<after_tok>%(NonWord)s|\s+(?P<next_tok>\S+)))"


@lru_cache(maxsize=8)
def _candidates(lang: Any) -> Any:
    """``period_context_re().finditer`` of ``lang``'s Punkt, as a function of the text:
    where the pattern is nltk's (``_PERIOD_CONTEXT``), the same matches found by trying
    the pattern only where a sentence end character is (``str.find``). Scanning every
    character with a pattern, nltk's ``regex`` one or a class in ``re``, was a third of
    a response's split (issue 27). Any other pattern is searched as it is."""
    pattern = _unwrapped(lang.period_context_re())
    fmt = getattr(lang, "_period_context_fmt", "")
    parts = {"SentEndChars": lang._re_sent_end_chars, "NonWord": lang._re_non_word_chars}
    if re.sub(r"#[^\n]*|\s+", "", fmt) != _PERIOD_CONTEXT or pattern.pattern != fmt % parts:
        return pattern.finditer
    # (the characters _re_sent_end_chars' class holds)
    ends = tuple(dict.fromkeys("".join(lang.sent_end_chars)))
    match = pattern.match

    def candidates(text: str) -> Any:
        positions = []
        for end in ends:
            at = text.find(end)
            while at >= 0:
                positions.append(at)
                at = text.find(end, at + 1)
        if len(ends) > 1:
            positions.sort()
        return filter(None, map(match, repeat(text), positions))

    return candidates


def punkt_spans(tokenizer: Any, text: str) -> list[tuple[int, int]]:
    """``tokenizer.span_tokenize(text)`` (nltk's ``PunktSentenceTokenizer``, realigning
    boundaries), its generators folded into one loop: the same candidate breaks,
    contexts and decisions (``text_contains_sentbreak``, memoised) as
    ``_match_potential_end_contexts``, ``_slices_from_text`` and
    ``_realign_boundaries`` (nltk 3.9-3.10), in half the time (issue 27: Punkt was a
    fifth of an MT-RAG import). tests/formats/test_sentencizer.py checks it against
    ``span_tokenize`` on every fixture text and on random texts."""
    lang = tokenizer._lang_vars
    decide = tokenizer.text_contains_sentbreak
    context = _contexts(tokenizer)
    spaces = [c for c in _WHITESPACE if c in text]  # (most texts have one or two kinds)
    # (one kind of space, as most texts have: its rfind alone, without a list per candidate)
    only_space = spaces[0] if len(spaces) == 1 else None
    slices: list[tuple[int, int]] = []  # _slices_from_text's
    last_break = 0
    # the candidate before: its match (None: none yet), its word's start and end
    previous: Any = None
    word_start = word_end = 0
    for match in _candidates(lang)(text):
        start = match.start()
        # the word before this candidate starts after the last space since the previous
        # word (_get_last_whitespace_index: none, or a space right at its end, and it
        # goes on from the previous word's start)
        if only_space is not None:
            space = text.rfind(only_space, word_end, start)
        else:
            space = max([text.rfind(c, word_end, start) for c in spaces]) if spaces else -1
        word = space + 1 if space > word_end else word_start
        if previous is not None and word_end <= word:  # (else the two overlap: skipped)
            # the context: the word, the end character and what the lookahead matched
            # (group 1, "after_tok"), which follow each other
            if decide(context(text, word_start, previous)):
                slices.append((last_break, previous.end()))
                next_token = previous.start(2)  # ("next_tok"; -1 when it did not match)
                last_break = next_token if next_token >= 0 else previous.end()
        previous, word_start, word_end = match, word, start
    if previous is not None and decide(context(text, word_start, previous)):
        slices.append((last_break, previous.end()))
        next_token = previous.start(2)
        last_break = next_token if next_token >= 0 else previous.end()
    slices.append((last_break, len(text.rstrip())))
    return _realigned(text, slices, _unwrapped(lang.re_boundary_realignment))


def _realigned(text: str, slices: list[tuple[int, int]], realign_re: Any) -> list[tuple[int, int]]:
    """``_realign_boundaries``: closing punctuation after a break joins the sentence
    before it. (Its pattern starts with a closing quote or bracket: a sentence that
    starts with a letter or digit is not matched against it.)"""
    out = []
    realign = 0
    for i in range(len(slices) - 1):
        start, stop = slices[i]
        start += realign
        next_start, next_stop = slices[i + 1]
        found = (
            realign_re.match(text[next_start:next_stop])
            if next_start < next_stop and not text[next_start].isalnum()
            else None
        )
        if found:
            out.append((start, next_start + len(found.group(0).rstrip())))
            realign = found.end()
        else:
            realign = 0
            if start < stop:  # (``if text[sentence1]``: the slices lie within the text)
                out.append((start, stop))
    start, stop = slices[-1]
    if start + realign < stop:
        out.append((start + realign, stop))
    return out


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
    return list(_spans(text))


@lru_cache(maxsize=1_024)
def _spans(text: str) -> tuple[tuple[int, int], ...]:
    """Kept for texts seen lately: MT-RAG repeats a conversation's passages on each of
    its turns (one record each), and a passage is the longest text Punkt splits."""
    pieces = punkt_spans(_tokenizer(), text)
    # (an ASCII text has no CJK terminator; most others have none either)
    if not text.isascii() and _CJK_STOP.search(text) is not None:
        pieces = [piece for s, e in pieces for piece in _cjk_split(text, s, e)]
    out = []
    for s, e in pieces:
        if text[s].isspace() or text[e - 1].isspace():  # (most spans start and end on text)
            s, e = _trim(text, s, e)
            if s >= e:
                continue
        out.append((s, e))
    return tuple(out)


def split(text: str) -> list[str]:
    """The sentences of ``text`` as exact substrings."""
    if not text or text.isspace():
        return []
    return [text[s:e] for s, e in _spans(text)]


@lru_cache(maxsize=1_024)
def keyed_document(doc_index: int, text: str) -> tuple[tuple[str, str], ...]:
    """``((\"0a\", sentence), (\"0b\", sentence), …)`` for document ``doc_index``
    (kept for recent passages, as ``_spans``: the tuple is immutable, so shared)."""
    return tuple((doc_key(doc_index, i), s) for i, s in enumerate(split(text)))


_RESPONSE_KEYS: list[str] = []  # response_key(i) at i, made once


def keyed_response(text: str) -> tuple[tuple[str, str], ...]:
    """``((\"a\", sentence), (\"b\", sentence), …)`` for a response."""
    sentences = split(text)
    keys = _RESPONSE_KEYS
    while len(keys) < len(sentences):
        keys.append(response_key(len(keys)))
    return tuple(zip(keys, sentences))
