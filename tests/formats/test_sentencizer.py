"""The sentencizer (docs/formats.md): Punkt with bundled parameters, CJK, exact substrings."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from ragreview.formats import sentencizer
from tests.conftest import subprocess_env


@pytest.fixture(autouse=True)
def bundled_parameters(tmp_path_factory, monkeypatch):
    """Pin the in-process tests to the bundled parameters, so the expected splits hold
    on a machine that happens to have NLTK's punkt_tab installed too."""
    import nltk.data

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path_factory.mktemp("no_nltk_data"))])
    sentencizer.reset()
    yield
    sentencizer.reset()


def assert_exact_cover(text: str, spans: list[tuple[int, int]]) -> None:
    """Every sentence is text[start:end]; spans are ordered, non-empty and trimmed;
    everything outside them is whitespace, so rejoining gives back the text."""
    pos = 0
    for start, end in spans:
        assert pos <= start < end <= len(text)
        assert text[pos:start].strip() == "", (text[pos:start], text)
        piece = text[start:end]
        assert piece == piece.strip() and piece
        pos = end
    assert text[pos:].strip() == ""
    rebuilt = "".join(
        text[prev_end:start] + text[start:end]
        for (start, end), prev_end in zip(spans, [0] + [e for _, e in spans])
    )
    assert rebuilt + text[pos:] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Smith met Mr. Jones at 5 p.m. yesterday. They talked.",
            ["Dr. Smith met Mr. Jones at 5 p.m. yesterday.", "They talked."],
        ),
        (
            "Mrs. Brown and Ms. Green met Prof. Black. He was late.",
            ["Mrs. Brown and Ms. Green met Prof. Black.", "He was late."],
        ),
        ("Acme Inc. and Foo Ltd. merged with Bar Co. and Baz Corp. today.", None),
        ("It was Smith vs. Jones, e.g. a famous case, i.e. a landmark.", None),
        ("He left at 9 a.m. on Jan. 5 and came back on Feb. 3 to St. Louis.", None),
        ("See Fig. 3 and No. 7 in the U.S. report by J. Smith Jr. and his father Sr. Ames.", None),
        ("Apples, pears, etc. The rest was sold.", ["Apples, pears, etc.", "The rest was sold."]),
        ("Is it? Yes! Of course.", ["Is it?", "Yes!", "Of course."]),
        ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
    ],
)
def test_abbreviations_do_not_end_sentences(text: str, expected: list[str] | None) -> None:
    assert sentencizer.backend() == "bundled"
    assert sentencizer.split(text) == (expected if expected is not None else [text])


def test_every_month_short_form_is_an_abbreviation() -> None:
    for month in "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split():
        text = f"It opened on {month}. 5 in the morning."
        assert sentencizer.split(text) == [text], month


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我们今天去公园。天气很好！你去吗？", ["我们今天去公园。", "天气很好！", "你去吗？"]),
        ("東京は大きい。日本の首都です。", ["東京は大きい。", "日本の首都です。"]),
        ("真的吗？！是的。", ["真的吗？！", "是的。"]),
        ("他说：“好。”然后走了。", ["他说：“好。”", "然后走了。"]),
        ("信息不足。", ["信息不足。"]),
    ],
)
def test_cjk_splits_after_terminators_and_keeps_them(text: str, expected: list[str]) -> None:
    assert sentencizer.split(text) == expected


def test_mixed_latin_and_cjk() -> None:
    text = "The answer is Tampa. 答案是坦帕。It was in 2021! 对吗？ Yes."
    assert sentencizer.split(text) == [
        "The answer is Tampa.",
        "答案是坦帕。",
        "It was in 2021!",
        "对吗？",
        "Yes.",
    ]


@pytest.mark.parametrize("text", ["", " ", "\n\t  \n", "\u3000"])
def test_empty_and_whitespace_only_give_no_sentences(text: str) -> None:
    assert sentencizer.split(text) == []
    assert sentencizer.spans(text) == []
    assert sentencizer.keyed_document(0, text) == ()


def test_text_is_never_altered() -> None:
    text = "  First  sentence.\n\nSecond\tone!   Third   (really.)  "
    spans = sentencizer.spans(text)
    assert [text[s:e] for s, e in spans] == [
        "First  sentence.",
        "Second\tone!",
        "Third   (really.)",
    ]
    assert_exact_cover(text, spans)


def test_round_trip_property_on_random_texts() -> None:
    rng = random.Random(20261121)
    words = [
        "Dr.",
        "Smith",
        "the",
        "U.S.",
        "e.g.",
        "etc.",
        "p.m.",
        "No.",
        "5",
        "3.14",
        "said",
        "The",
        "He",
        "data",
        "shows",
        "东京",
        "天气很好",
        "。",
        "！",
        "？",
        "？！",
        "(a)",
        '"quoted."',
        "”",
        "...",
        "Fig.",
        "vs.",
        "i.e.",
        "end.",
        "Why?",
        "Yes!",
        "x",
    ]
    seps = [" ", " ", " ", "  ", "\n", "\n\n", "\t", "", "\u3000"]
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(0, 25)):
            parts.append(rng.choice(words))
            parts.append(rng.choice(seps))
        text = rng.choice(["", " ", "\n"]) + "".join(parts)
        spans = sentencizer.spans(text)
        assert_exact_cover(text, spans)
        assert sentencizer.split(text) == [text[s:e] for s, e in spans]


def test_keys_follow_document_index_and_letters() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(28))
    keyed = sentencizer.keyed_document(2, text)
    assert [k for k, _ in keyed][:3] == ["2a", "2b", "2c"]
    assert keyed[25][0] == "2z" and keyed[26][0] == "2aa" and keyed[27][0] == "2ab"
    assert keyed[26][1] == "Sentence number 26 is here."
    assert sentencizer.keyed_response("One. Two.") == (("a", "One."), ("b", "Two."))


def test_importing_the_sentencizer_does_not_import_nltk() -> None:
    code = "import sys, ragreview.formats.sentencizer; print('nltk' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# The child refuses any network connection and any NLTK download, then sentencizes.
_OFFLINE_CHILD = textwrap.dedent(
    """
    import json, socket, sys
    def refuse(*args, **kwargs):
        raise AssertionError("network or download attempted")
    socket.socket.connect = refuse
    socket.create_connection = refuse
    import nltk, nltk.downloader
    nltk.download = refuse
    nltk.downloader.Downloader.download = refuse
    nltk.data.path[:] = [sys.argv[1]]  # only the given dir, not /usr/share/nltk_data
    from ragreview.formats import sentencizer
    text = "Dr. Who arrived at 5 p.m. on Jan. 3. It rained. 下雨了。好冷！"
    print(json.dumps({"backend": sentencizer.backend(), "sentences": sentencizer.split(text)}))
    """
)


def test_works_offline_with_no_nltk_data(tmp_path) -> None:
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", _OFFLINE_CHILD, str(empty)],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(tmp_path, NLTK_DATA=str(empty)),
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {
        "backend": "bundled",
        "sentences": ["Dr. Who arrived at 5 p.m. on Jan. 3.", "It rained.", "下雨了。", "好冷！"],
    }
    assert list(empty.iterdir()) == []  # nothing was written into the data dir
    assert [p.name for p in tmp_path.iterdir()] == ["nltk_data"]  # nor into HOME (tmp_path)


def test_installed_punkt_tab_model_is_used_when_found(tmp_path) -> None:
    """A punkt_tab model on nltk.data.path wins over the bundled parameters.

    The model is written here from Punkt parameters whose only abbreviation is "zz",
    so the test can tell which parameters did the split."""
    model = tmp_path / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
    model.mkdir(parents=True)
    # The punkt_tab layout: four text files (NLTK refuses to save outside its data dirs).
    (model / "abbrev_types.txt").write_text("zz\n", encoding="utf-8")
    for name in ("collocations.tab", "sent_starters.txt", "ortho_context.tab"):
        (model / name).write_text("", encoding="utf-8")
    code = textwrap.dedent(
        """
        import json, sys, nltk
        nltk.data.path[:] = [sys.argv[1]]
        from ragreview.formats import sentencizer
        print(json.dumps([sentencizer.backend(), sentencizer.split("Zz. Dr. Who came. Ok.")]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "nltk_data")],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["punkt_tab", ["Zz. Dr.", "Who came.", "Ok."]]


def test_splits_equal_plain_punkt_with_the_same_parameters() -> None:
    """The memoised decisions and the kept splits change no split: nltk's own
    PunktSentenceTokenizer with the bundled parameters, then the CJK and trim steps,
    on random texts (each split twice, so the second comes from the caches)."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(sentencizer.ABBREVIATIONS)
    params.sent_starters = set(sentencizer.SENTENCE_STARTERS)
    plain = PunktSentenceTokenizer(params)
    rng = random.Random(27)
    words = "Dr. Smith the U.S. e.g. etc. No. 5 3.14 said The He data. shows (a) Why? Yes! x end."
    for _ in range(300):
        text = " ".join(rng.choice(words.split()) for _ in range(rng.randint(0, 30)))
        expected = [
            (s, e)
            for start, end in plain.span_tokenize(text)
            for s, e in (sentencizer._trim(text, start, end),)
            if s < e
        ]
        assert sentencizer.spans(text) == expected, text
        assert sentencizer.spans(text) == expected, text


def test_splitting_loads_no_nltk_package() -> None:
    """Punkt loads without nltk/__init__ (which imports scipy and scikit-learn, seconds);
    afterwards nltk is out of sys.modules, and a later ``import nltk`` gets the whole
    package, working."""
    code = textwrap.dedent(
        """
        import sys
        from ragreview.formats import sentencizer
        first = sentencizer.split("Dr. Who came. It rained.")
        loaded = sorted(m for m in ("nltk", "scipy", "sklearn") if m in sys.modules)
        import nltk
        from nltk.tokenize import sent_tokenize, punkt
        assert nltk.tokenize.punkt is punkt and callable(nltk.word_tokenize)
        print(sentencizer.backend(), first, loaded)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(" ", 1)[0] in ("bundled", "punkt_tab")
    assert out.stdout.strip().endswith("[]")


def test_punkt_loads_without_nltks_model_and_network_modules() -> None:
    """The bundled tokenizer loads Punkt alone: nltk.pathsec (http, ssl, email), the
    pickle and training helpers stay unloaded (a tenth of an MT-RAG import, issue 27).
    Its splits are nltk's own (the tests above compare them with the real package)."""
    code = textwrap.dedent(
        """
        import sys
        from ragreview.formats import sentencizer
        print(sentencizer.backend(), sentencizer.split("Dr. Who came. It rained."))
        print(sorted(m for m in ("http.client", "ssl", "email.parser", "pickle",
                                 "xml.etree.ElementTree", "nltk") if m in sys.modules))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert out.returncode == 0, out.stderr
    first, loaded = out.stdout.splitlines()
    if first.startswith("bundled"):
        assert first == "bundled ['Dr. Who came.', 'It rained.']"
        assert loaded == "[]"


def test_a_stand_in_nltk_name_refuses_to_run() -> None:
    """What the lean load stands in for raises, naming itself, rather than doing
    nothing: Punkt's splitting never reaches one (the equality tests above)."""
    stand_in = sentencizer._StandIn("nltk.pathsec")
    with pytest.raises(RuntimeError, match="nltk.pathsec.open is not loaded"):
        stand_in.open("x")
    assert stand_in.open is stand_in.open  # (one placeholder per name)

    class Tokenizer(sentencizer._StandIn("nltk.tokenize.api").TokenizerI):  # a base class
        def __init__(self) -> None:
            self.made = True

    assert Tokenizer().made


def test_the_full_load_gives_the_same_punkt() -> None:
    """The fallback for an nltk whose Punkt needs more at import: the same module,
    its helpers loaded."""
    import importlib.util

    spec = importlib.util.find_spec("nltk")
    assert spec is not None and spec.submodule_search_locations
    root = list(spec.submodule_search_locations)[0]
    loaded = {n: m for n, m in sys.modules.items() if n == "nltk" or n.startswith("nltk.")}
    try:  # (each load empties sys.modules of nltk: this process's nltk is put back)
        lean = sentencizer._load_punkt(root, lean=True)
        full = sentencizer._load_punkt(root, lean=False)
    finally:
        sys.modules.update(loaded)
    text = "Dr. Smith said no. 5 is e.g. fine. Why? Yes! (a) The end."
    spans = [
        list(m.PunktSentenceTokenizer(_bundled_params(m)).span_tokenize(text)) for m in (lean, full)
    ]
    assert spans[0] == spans[1] and len(spans[0]) > 2


def _bundled_params(punkt: Any) -> Any:
    params = punkt.PunktParameters()
    params.abbrev_types = set(sentencizer.ABBREVIATIONS)
    params.sent_starters = set(sentencizer.SENTENCE_STARTERS)
    return params


def test_punkt_tab_under_nltk_data_is_found_without_nltk_loaded(tmp_path) -> None:
    """The same model found through NLTK_DATA by a process that never imported nltk:
    the cheap check of nltk's default folders sees it and defers to nltk.data.find."""
    model = tmp_path / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
    model.mkdir(parents=True)
    (model / "abbrev_types.txt").write_text("zz\n", encoding="utf-8")
    for name in ("collocations.tab", "sent_starters.txt", "ortho_context.tab"):
        (model / name).write_text("", encoding="utf-8")
    code = (
        "import json; from ragreview.formats import sentencizer; "
        "print(json.dumps([sentencizer.backend(), sentencizer.split('Zz. Dr. Who came.')]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(tmp_path, NLTK_DATA=str(tmp_path / "nltk_data")),
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ["punkt_tab", ["Zz. Dr.", "Who came."]]


def _fixture_texts() -> list[str]:
    """Every text of the fixture files that ragreview sentencizes (and more): each JSON
    string of at least two characters in every fixture file, ours and the shared ones."""
    from tests.core.test_rouge_reference import FIXTURE_DIRS, SHARED

    texts: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str) and len(value) > 1:
            texts.add(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    shared = sorted(SHARED.iterdir()) if SHARED.is_dir() else []
    folders = [*FIXTURE_DIRS, *shared]
    for folder in folders:
        for path in sorted(folder.glob("*.json*")) if folder.is_dir() else []:
            content = path.read_text(encoding="utf-8")
            try:
                walk(json.loads(content))
            except json.JSONDecodeError:  # JSON Lines
                for line in content.splitlines():
                    if line.strip():
                        walk(json.loads(line))
    return sorted(texts)


def _assert_spans_equal_nltk(tokenizer: object, texts: list[str]) -> None:
    misses = [
        t
        for t in texts
        if sentencizer.punkt_spans(tokenizer, t)
        != list(
            tokenizer.span_tokenize(t)  # type: ignore[attr-defined]
        )
    ]
    assert misses == []


def test_lean_punkt_loop_equals_span_tokenize_on_every_fixture_text() -> None:
    """``punkt_spans`` (nltk's span_tokenize folded into one loop, issue 27) gives
    exactly nltk's spans on every string of every fixture file, with the bundled
    parameters and with a punkt_tab-like model (abbreviations, collocations, sentence
    starters and orthographic contexts, which the bundled parameters lack)."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    texts = _fixture_texts()
    assert len(texts) > 3_000  # (the shared fixtures: more than 9,000)
    _assert_spans_equal_nltk(sentencizer._tokenizer(), texts)
    params = PunktParameters()
    params.abbrev_types = {"dr", "e.g", "no", "fig", "u.s", "st"}
    params.collocations = {("##number##", "october"), ("st", "louis")}
    params.sent_starters = {"the", "however", "in"}
    for typ, context in (("the", 0b1000110), ("however", 0b0000010), ("cardinals", 0b0100)):
        params.ortho_context[typ] = context
    _assert_spans_equal_nltk(PunktSentenceTokenizer(params), texts)


PUNKT_PIECES = [
    "Dr.",
    "Smith",
    "the",
    "U.S.",
    "e.g.",
    "etc.",
    "No.",
    "5.",
    "3.14",
    "J.",
    "said",
    "The",
    "He",
    "end.",
    "Why?",
    "Yes!",
    "Wow!!!",
    "...",
    "..",
    "--",
    "-",
    "(a)",
    "(Sent.)",
    ")",
    '"',
    "'",
    "]",
    "}",
    "\u201d",
    "\u2019",
    "\u00bb",
    "\u201cQuoted.\u201d",
    '"done."',
    "x.",
    "A.",
    "a.",
    "?",
    "!",
    ".",
    ",",
    ";",
    ":",
    "1.",
    "Oct.",
    "October",
    "well.)",
]
PUNKT_SEPARATORS = [" ", " ", " ", "  ", "\n", "\n\n", "\t", "", "\r\n", "\x0b", "\x0c", "\u3000"]


def test_lean_punkt_loop_equals_span_tokenize_on_random_texts() -> None:
    """The same on random texts made of the pieces Punkt decides on: abbreviations,
    initials, numbers, ellipses, closing quotes and brackets (the realignment),
    several kinds of whitespace (the word before a candidate), texts ending in space."""
    rng = random.Random(2027)
    texts = []
    for _ in range(3_000):
        parts = []
        for _ in range(rng.randint(0, 30)):
            parts.append(rng.choice(PUNKT_PIECES))
            parts.append(rng.choice(PUNKT_SEPARATORS))
        texts.append(rng.choice(["", " ", "\n"]) + "".join(parts))
    _assert_spans_equal_nltk(sentencizer._tokenizer(), texts)


def _reference_spans(tokenizer: object, text: str) -> list[tuple[int, int]]:
    """The splitting as first written: nltk's spans, each cut after CJK terminators,
    then trimmed, whitespace-only pieces dropped."""
    if not text or text.isspace():
        return []
    out = []
    for start, end in tokenizer.span_tokenize(text):  # type: ignore[attr-defined]
        for s, e in sentencizer._cjk_split(text, start, end):
            s, e = sentencizer._trim(text, s, e)
            if s < e:
                out.append((s, e))
    return out


def test_spans_equal_the_first_written_splitting() -> None:
    """``spans`` (CJK cuts only in texts that hold a CJK terminator, trimming only
    where a span starts or ends on whitespace) against the splitting as first written,
    on every fixture string (the shared RGB set is Chinese) and on random texts."""
    tokenizer = sentencizer._tokenizer()
    rng = random.Random(31)
    cjk = ["东京", "天气很好", "。", "！", "？", "？！", "｡", "」", "』", "）", "”"]
    texts = _fixture_texts() + [
        "".join(rng.choice([*PUNKT_PIECES, *cjk]) + rng.choice(PUNKT_SEPARATORS) for _ in range(n))
        for n in [rng.randint(0, 25) for _ in range(2_000)]
    ]
    assert [t for t in texts if sentencizer.spans(t) != _reference_spans(tokenizer, t)] == []
    text = "Hi.  “Quoted.” 東京。Next！"
    assert sentencizer.keyed_response(text) == tuple(
        (sentencizer.response_key(i), s) for i, s in enumerate(sentencizer.split(text))
    )


def test_plain_words_stand_in_for_each_other_in_punkts_decisions() -> None:
    """``punkt_spans`` gives Punkt a plain word before a candidate break (and a plain
    next token) as ``xx`` (``Xx``): the spans stay nltk's on random texts of words of
    every case and length, abbreviations, initials, numbers and punctuation, with the
    bundled parameters and with a model that has sentence starters and orthographic
    contexts but no collocations (with collocations the exact contexts are used)."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    rng = random.Random(1127)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def word() -> str:
        choice = rng.random()
        if choice < 0.5:
            return "".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))
        if choice < 0.6:
            return rng.choice(sorted(sentencizer.ABBREVIATIONS)).capitalize()
        if choice < 0.7:
            return str(rng.randint(0, 3000))
        if choice < 0.8:
            return rng.choice(["the", "The", "However", "In", "cardinals", "Xx", "xx", "XX"])
        return rng.choice(PUNKT_PIECES)

    texts = []
    for _ in range(3_000):
        parts = []
        for _ in range(rng.randint(1, 25)):
            parts.append(word() + rng.choice(["", "", ".", ".", "?", "!", ",", ".)", '."', ".."]))
            parts.append(rng.choice(PUNKT_SEPARATORS))
        texts.append("".join(parts))
    _assert_spans_equal_nltk(sentencizer._tokenizer(), texts)
    params = PunktParameters()
    params.abbrev_types = {"dr", "e.g", "no", "fig", "u.s", "st"}
    params.sent_starters = {"the", "however", "in"}
    for typ, context in (("the", 0b1000110), ("however", 0b0000010), ("cardinals", 0b0100)):
        params.ortho_context[typ] = context
    model = PunktSentenceTokenizer(params)
    assert sentencizer._contexts(model) is not sentencizer._exact_context
    _assert_spans_equal_nltk(model, texts)
    params.collocations = {("##number##", "october")}
    assert sentencizer._contexts(PunktSentenceTokenizer(params)) is sentencizer._exact_context


def _spans_of(matches: object) -> list[tuple[tuple[int, int], ...]]:
    return [(m.span(), m.span(1), m.span(2)) for m in matches]  # type: ignore[attr-defined]


def test_candidates_are_the_period_context_patterns_matches() -> None:
    """``_candidates`` (the pattern tried only at each sentence end character, issue 27)
    finds exactly ``period_context_re().finditer``'s matches, groups included, on every
    fixture text and on random texts of Punkt's pieces; with more end characters too;
    and a language whose pattern is not nltk's is searched with that pattern."""
    from nltk.tokenize.punkt import PunktLanguageVars

    rng = random.Random(2711)
    texts = _fixture_texts()
    for _ in range(2_000):
        parts = []
        for _ in range(rng.randint(0, 30)):
            parts.append(rng.choice([*PUNKT_PIECES, "\u3002", "a;b", "\u2026", "?!"]))
            parts.append(rng.choice([*PUNKT_SEPARATORS, "\x1c", "\u00a0", "\u2028"]))
        texts.append("".join(parts))

    class MoreEnds(PunktLanguageVars):
        sent_end_chars = (".", "?", "!", ";", "\u3002")

    class OwnPattern(PunktLanguageVars):
        _period_context_fmt = (
            r"\S*%(SentEndChars)s(?=(?P<after_tok>%(NonWord)s|\s+(?P<next_tok>\S+)))"
        )

    for lang in (sentencizer._tokenizer()._lang_vars, MoreEnds()):
        pattern = sentencizer._unwrapped(lang.period_context_re())
        candidates = sentencizer._candidates(lang)
        assert candidates != pattern.finditer  # (the fast path)
        for text in texts:
            assert _spans_of(candidates(text)) == _spans_of(pattern.finditer(text)), text
    own = OwnPattern()
    assert sentencizer._candidates(own) == sentencizer._unwrapped(own.period_context_re()).finditer
