"""Rouge-L and Extractiveness_RougeL (core/metrics/rouge.py, mtrag.py) against the
references on every fixture row and on random strings (issue 27).

References: ``rouge_score.rouge_scorer.RougeScorer(["rougeL"]).score(target,
prediction).fmeasure`` (what IBM's ``run_algorithmic.rouge_l`` calls through ``evaluate``)
and IBM/mt-rag-benchmark scripts/evaluation/run_algorithmic.py ``extractiveness_rouge``,
restated below with its own cleaning (``strip_newline_words`` then ``html.unescape``; the
BeautifulSoup text of a string without ``<``/``&`` left is the string itself)."""

from __future__ import annotations

import html
import json
import random
import re
import string
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from ragreview.core.metrics.mtrag import extractiveness, max_extractiveness, token_recall
from ragreview.core.metrics.rouge import lcs_length, rouge_l

SCORER = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
REPO = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
FIXTURE_DIRS = [
    REPO / "fixtures" / "mtrag",
    SHARED / "mtrag",
    REPO / "fixtures" / "inspectorraget",
    SHARED / "inspectorraget",
]


def reference_rouge_l(prediction: str, target: str) -> float:
    return SCORER.score(target, prediction)["rougeL"].fmeasure


def reference_extractiveness(text: str, target: str) -> float:
    """run_algorithmic.extractiveness_rouge(text=prediction, target=passage)."""

    def clean(value: str) -> str:
        return html.unescape(re.sub(r"[^\w\s]", "", value.replace("\n", " ")).lower())

    text, target = clean(text), clean(target)
    if target.replace(" ", "") in text.replace(" ", ""):
        return 1
    return reference_rouge_l(text, target)


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if isinstance(value, dict):
        for key in ("text", "value", "content"):
            if isinstance(value.get(key), str):
                return [value[key]]
    return []


def _mtrag_pairs(path: Path) -> Iterator[tuple[str, str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        for prediction in _texts(row.get("predictions") or []):
            for other in _texts(row.get("targets") or []) + _texts(row.get("contexts") or []):
                yield prediction, other


def _inspectorraget_pairs(path: Path) -> Iterator[tuple[str, str]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    tasks = {t["task_id"]: t for t in doc["tasks"]}
    for ev in doc.get("evaluations") or doc.get("results") or []:
        task = tasks[ev["task_id"]]
        responses = _texts(ev.get("model_response")) + _texts(ev.get("output") or [])
        others = _texts(task.get("targets") or []) + _texts(task.get("contexts") or [])
        for prediction in responses:
            for other in others:
                yield prediction, other


def fixture_pairs() -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for folder in FIXTURE_DIRS:
        for path in sorted(folder.glob("*.json*")) if folder.is_dir() else []:
            reader = _mtrag_pairs if path.suffix == ".jsonl" else _inspectorraget_pairs
            pairs.extend(reader(path))
    return pairs


def test_every_fixture_row_equals_the_references() -> None:
    pairs = fixture_pairs()
    assert len(pairs) > 1000  # all four folders were read
    rouge_misses = [p for p in pairs if rouge_l(*p) != reference_rouge_l(*p)]
    extract_misses = [p for p in pairs if extractiveness(*p) != reference_extractiveness(*p)]
    assert rouge_misses == [] and extract_misses == []


WORDS = st.sampled_from(["the", "cat", "Cat", "sat", "on", "mat", "1999", "é", "x-ray", "\n"])
TEXT = st.one_of(
    st.text(max_size=80),
    st.lists(WORDS, max_size=40).map(" ".join),
    st.text(alphabet="ab .,\n", max_size=60),
)


@settings(max_examples=400, deadline=None)
@given(TEXT, TEXT)
def test_random_strings_equal_the_references(prediction: str, target: str) -> None:
    assert rouge_l(prediction, target) == reference_rouge_l(prediction, target)
    assert extractiveness(prediction, target) == reference_extractiveness(prediction, target)


def test_max_over_passages_equals_the_references_on_every_fixture_record() -> None:
    """The metric's max over a record's passages (the prediction cleaned once, passages
    kept across records) equals the reference's, record by record."""
    records = 0
    for folder in FIXTURE_DIRS[:2]:
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line) if line.strip() else {}
                passages = _texts(row.get("contexts") or [])
                for prediction in _texts(row.get("predictions") or []) if passages else []:
                    expected = max(reference_extractiveness(prediction, p) for p in passages)
                    assert max_extractiveness(prediction, passages) == expected
                    records += 1
    assert records > 0


@settings(max_examples=200, deadline=None)
@given(TEXT, st.lists(TEXT, min_size=1, max_size=4))
def test_max_over_random_passages_equals_the_references(prediction: str, passages) -> None:
    expected = max(reference_extractiveness(prediction, p) for p in passages)
    assert max_extractiveness(prediction, passages) == expected


def test_lcs_hand_computed() -> None:
    # "a b c b d a b" vs "b d c a b a": the textbook LCS is 4 (b c b a / b d a b)
    assert lcs_length("a b c b d a b".split(), "b d c a b a".split()) == 4
    assert lcs_length([], ["x"]) == 0
    # distinct tokens never match, even long ones sharing a prefix
    assert lcs_length(["token" * 20 + "1"], ["token" * 20 + "2"]) == 0


def _dynamic_programme_lcs(a: list[str], b: list[str]) -> int:
    """rouge_score's ``_lcs_table`` last cell, written out."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                rows[i][j] = rows[i - 1][j - 1] + 1
            else:
                rows[i][j] = max(rows[i - 1][j], rows[i][j - 1])
    return rows[-1][-1]


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=30), st.lists(WORDS, max_size=30))
def test_lcs_equals_the_dynamic_programme(a: list[str], b: list[str]) -> None:
    """Tokens of one side missing on the other all become -1: they never match."""
    assert lcs_length(a, b) == _dynamic_programme_lcs(a, b) == lcs_length(b, a)


def reference_token_recall(prediction: str, target: str) -> float:
    """IBM's run_algorithmic token recall (SQuAD-style normalisation, then the common
    token count over the target's), written as the script does."""

    def normalize(text: str) -> str:
        text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())

    prediction_tokens, target_tokens = normalize(prediction).split(), normalize(target).split()
    common = Counter(prediction_tokens) & Counter(target_tokens)
    same = sum(common.values())
    return 0.0 if same == 0 else same / len(target_tokens)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT)
def test_token_recall_equals_the_reference(prediction: str, target: str) -> None:
    assert token_recall(prediction, target) == reference_token_recall(prediction, target)


def test_token_recall_equals_the_reference_on_every_fixture_pair() -> None:
    pairs = fixture_pairs()
    assert [p for p in pairs if token_recall(*p) != reference_token_recall(*p)] == []


# ASCII texts take the byte-translate paths of the tokenizers and cleaners (issue 27):
# every ASCII character (controls and \x1c-\x1f, which str.split takes for whitespace,
# punctuation, "_"), and words with articles glued to punctuation or other characters.
ASCII_TEXT = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=127), max_size=120),
    st.lists(
        st.sampled_from(
            [
                "the",
                "The",
                "a",
                "an",
                "An",
                "theatre",
                "_the",
                "the_",
                "a.",
                "(an)",
                "x\x1fa",
                "\x1c",
                "\x0b",
                "\t",
                "\r\n",
                "don't",
                "U.S.",
                "1,000",
                "•",
                "’s",
                "é",
                "-",
                "/",
            ]
        ),
        max_size=40,
    ).map(" ".join),
)


@settings(max_examples=500, deadline=None)
@given(ASCII_TEXT, ASCII_TEXT)
def test_ascii_texts_equal_the_references(prediction: str, target: str) -> None:
    assert rouge_l(prediction, target) == reference_rouge_l(prediction, target)
    assert extractiveness(prediction, target) == reference_extractiveness(prediction, target)
    assert token_recall(prediction, target) == reference_token_recall(prediction, target)


def test_a_text_of_more_distinct_tokens_than_characters_scores_alike(monkeypatch) -> None:
    """Texts number their tokens as characters; one with more distinct tokens than
    there are characters (only a hostile text) numbers them as ints: same LCS."""
    from ragreview.core.metrics import rouge

    a = "a b c b d a b e f g".split()
    b = "b d c a b a g x".split()
    expected = _dynamic_programme_lcs(a, b)
    assert lcs_length(a, b) == expected
    monkeypatch.setattr(rouge, "_CHARACTERS", 3)
    assert type(rouge.numbered(a)[1]) is list
    assert lcs_length(a, b) == expected
    assert rouge_l(" ".join(a), " ".join(b)) == reference_rouge_l(" ".join(a), " ".join(b))


def test_tokens_numbered_past_the_surrogates_match_exactly() -> None:
    """A passage of 70,000 distinct tokens numbers some as surrogate code points and
    beyond U+FFFF: still exact (against the LCS of the same tokens as ints)."""
    from rapidfuzz.distance import LCSseq

    a = [f"w{i}" for i in range(70_000)]
    rng = random.Random(5)
    b = [a[i] for i in sorted(rng.sample(range(54_000, 70_000), 300))] + ["zz", "w1"]
    ids = {t: i for i, t in enumerate(a)}
    expected = LCSseq.similarity(list(range(70_000)), [ids.get(t, -1) for t in b])
    assert expected == 300
    assert lcs_length(a, b) == expected


def test_the_shared_numbering_starting_afresh_keeps_scores_exact(monkeypatch) -> None:
    """Texts share one token numbering, which starts afresh past its limit (a passage
    kept from before then is renumbered when next used): with a limit of 5 tokens it
    starts afresh on nearly every pair, and every score still equals the reference."""
    from ragreview.core.metrics import rouge

    monkeypatch.setattr(rouge.NUMBERING, "LIMIT", 5)
    rng = random.Random(11)
    vocabulary = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    passages = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 12))) for _ in range(4)]
    generation = rouge.NUMBERING.generation
    for _ in range(200):
        prediction = " ".join(rng.choices(vocabulary, k=rng.randint(0, 15)))
        target = rng.choice(passages)
        assert rouge_l(prediction, target) == reference_rouge_l(prediction, target)
        expected = max(reference_extractiveness(prediction, p) for p in passages)
        assert max_extractiveness(prediction, passages) == expected
    assert rouge.NUMBERING.generation > generation + 100
    assert len(rouge.NUMBERING) <= 5 + 60  # (the limit, and one call's tokens past it)


def test_threads_scoring_at_once_get_the_references_scores() -> None:
    """Two threads scoring while the numbering starts afresh (the TUI's background work
    beside an import): neither sees a text numbered in the other's generation."""
    import threading

    from ragreview.core.metrics import rouge

    rng = random.Random(12)
    words = [f"w{i}" for i in range(400)]
    pairs = [
        (" ".join(rng.choices(words, k=40)), " ".join(rng.choices(words, k=40))) for _ in range(150)
    ]
    expected = [reference_rouge_l(p, t) for p, t in pairs]
    wrong: list[int] = []
    old_limit = rouge.NUMBERING.LIMIT
    rouge.NUMBERING.LIMIT = 50  # (a fresh start on most pairs)
    try:

        def score() -> None:
            for _ in range(3):
                wrong.extend(i for i, (p, t) in enumerate(pairs) if rouge_l(p, t) != expected[i])

        threads = [threading.Thread(target=score) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        rouge.NUMBERING.LIMIT = old_limit
    assert wrong == []


@settings(max_examples=500, deadline=None)
@given(st.one_of(ASCII_TEXT, TEXT))
def test_extractiveness_tokens_taken_from_the_recall_words_are_rouge_scores_tokens(
    text: str,
) -> None:
    """Where extractiveness reuses token recall's split of the prediction (ASCII, no
    "_", plain words), it is exactly rouge_score's tokens of the cleaned text."""
    from ragreview.core.metrics import mtrag, rouge

    cleaned = mtrag._clean(text)
    assert mtrag._extractive_tokens(text, cleaned) == rouge.tokenize(cleaned)
    assert mtrag._extractive_tokens(text + "_x", cleaned + "_x") == rouge.tokenize(cleaned + "_x")


def reference_text_scores(
    prediction: str, target: str | None, passages: list[str]
) -> tuple[float | None, float | None, float | None]:
    """What ``text_scores`` gives, from the three references."""
    if target is None:
        recall = rouge = None
    else:
        recall = reference_token_recall(prediction, target)
        rouge = reference_rouge_l(prediction, target)
    extract = max(reference_extractiveness(prediction, p) for p in passages) if passages else None
    return recall, rouge, extract


def test_text_scores_equal_the_references_on_every_fixture_record() -> None:
    """A record's three text metrics at once (each word list split and numbered once
    where its tokenizations agree: issue 27) against the references, record by record,
    with and without its target and passages."""
    from ragreview.core.metrics.mtrag import text_scores

    records = 0
    for folder in FIXTURE_DIRS[:2]:
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line) if line.strip() else {}
                targets = _texts(row.get("targets") or [])
                passages = _texts(row.get("contexts") or [])
                for prediction in _texts(row.get("predictions") or []):
                    for target in (targets[0] if targets else None, None):
                        for some in (passages, []):
                            expected = reference_text_scores(prediction, target, some)
                            assert text_scores(prediction, target, some) == expected
                    records += 1
    assert records > 0


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(ASCII_TEXT, TEXT),
    st.one_of(st.none(), ASCII_TEXT, TEXT),
    st.lists(st.one_of(ASCII_TEXT, TEXT), max_size=4),
)
def test_text_scores_equal_the_references(
    prediction: str, target: str | None, passages: list[str]
) -> None:
    from ragreview.core.metrics.mtrag import text_scores

    expected = reference_text_scores(prediction, target, passages)
    assert text_scores(prediction, target, passages) == expected


GLUED = st.lists(
    st.sampled_from(["the", "a", "don't", "x-ray", "u.s.", "1,000", "(an)", "e.g.", "a_b", "co"]),
    max_size=30,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(GLUED, GLUED, st.lists(GLUED, max_size=3))
def test_text_scores_of_words_glued_by_punctuation_equal_the_references(
    prediction: str, target: str, passages: list[str]
) -> None:
    """Words with punctuation between letters ("don't") are one recall word and two
    rouge_score tokens: such a text is tokenized both ways."""
    from ragreview.core.metrics.mtrag import text_scores

    expected = reference_text_scores(prediction, target, passages)
    assert text_scores(prediction, target, passages) == expected


def test_text_scores_with_the_numbering_starting_afresh_equal_the_references(
    monkeypatch,
) -> None:
    from ragreview.core.metrics import rouge
    from ragreview.core.metrics.mtrag import text_scores

    monkeypatch.setattr(rouge.NUMBERING, "LIMIT", 5)
    rng = random.Random(13)
    vocabulary = "alpha beta gamma the a an don't x-ray delta".split()
    passages = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 12))) for _ in range(3)]
    for _ in range(200):
        prediction = " ".join(rng.choices(vocabulary, k=rng.randint(0, 15)))
        target = " ".join(rng.choices(vocabulary, k=rng.randint(0, 8)))
        expected = reference_text_scores(prediction, target, passages)
        assert text_scores(prediction, target, passages) == expected


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(st.text(max_size=80), ASCII_TEXT, st.sampled_from(["\u212a", "İ", "ǅ", "\ud800a"]))
)
def test_tokenize_is_rouge_scores_tokenizer(text: str) -> None:
    """Every character left outside ASCII once lower-cased separates tokens, as in the
    regex (lower-casing can make ASCII letters: the Kelvin sign is "k")."""
    from ragreview.core.metrics import rouge

    assert rouge.tokenize(text) == re.findall(r"[a-z0-9]+", text.lower())
    assert rouge.tokenize(text) == SCORER._tokenizer.tokenize(text)


def test_text_scores_equal_the_references_on_the_bench_rows() -> None:
    """The MT-RAG bench's rows (long predictions made of their passages' words, so most
    passages are longer than the prediction and some short ones inside it), and
    targets of articles only, repeated words, or no words: each against the references."""
    from bench.mtrag_bench import mtrag_rows
    from ragreview.core.metrics.mtrag import text_scores

    cases = []
    for row in mtrag_rows(40):
        prediction = row["predictions"][0]["text"]
        passages = _texts(row.get("contexts") or [])
        targets = _texts(row.get("targets") or [])
        cases.append((prediction, targets[0] if targets else None, passages))
        words = prediction.split()
        cases.append((prediction, "the a an The", [" ".join(words[3:9]), *passages]))
        cases.append((prediction, " ".join(words[:5] * 3) + " the the", passages[:1]))
        cases.append((prediction, "?!", [prediction.upper()]))
    for prediction, target, passages in cases:
        expected = reference_text_scores(prediction, target, passages)
        assert text_scores(prediction, target, passages) == expected


def test_split_words_of_any_text_deletes_ascii_punctuation_as_str_translate_does() -> None:
    """``_split_words`` deletes ASCII punctuation from the UTF-8 bytes (issue 27): the
    same words as ``str.translate`` on texts beyond ASCII, lone surrogates included."""
    from ragreview.core.metrics import mtrag

    table = str.maketrans("", "", mtrag._PUNCTUATION)
    pieces = [*mtrag._PUNCTUATION, *"abcXYZ 019\t\n\x1c\u00a0ñÉİß’—\u0301Σ\U0001f600"]
    pieces += ["\ud800", "\udfff", "\udc80"]
    rng = random.Random(2027)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20))) + "ñ"
        words = text.lower().translate(table).split()
        assert mtrag._split_words.__wrapped__(text) == (words, mtrag._plain(words)), text


def test_ascii_words_are_the_recall_words_and_rouge_tokens_of_any_ascii_text() -> None:
    """``_ascii_words`` (one translate marks the runs and what is not plain, issue 27):
    None exactly where the recall words are not ``_plain``, else those words and
    ``tokenize``'s tokens, on random texts of every ASCII character."""
    from ragreview.core.metrics import mtrag, rouge

    rng = random.Random(2711)
    every = [chr(c) for c in range(128)]
    common = list("abc XYZ 01 '-.,_\n\t")
    for i in range(30_000):
        text = "".join(rng.choice(every if i % 3 else common) for _ in range(rng.randint(0, 16)))
        words, plain = mtrag._split_words.__wrapped__(text)
        expected = (words, rouge.tokenize(text)) if plain else None
        assert mtrag._ascii_words(text) == expected, repr(text)
