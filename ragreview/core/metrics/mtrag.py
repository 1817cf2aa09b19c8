"""MT-RAG per-record metrics, docs/metrics.md, after IBM/mt-rag-benchmark scripts/evaluation.

Computed from text (``run_algorithmic.py``): ``mtrag.recall`` (token recall against the
first target), ``mtrag.rouge_l`` (rougeL, no stemming), ``mtrag.extractiveness`` (max
over passages of Extractiveness_RougeL), ``mtrag.length``. Imported from ``scores``
(they need a DeBERTa model): ``mtrag.bertscore_p``, ``mtrag.bertscore_r`` (first
target) and ``mtrag.bert_k_prec`` (max over passages, a null passage value taken as 0,
as rb_agg does; the key present with null means "BertKPrec existed, all null"; present,
rb_agg uses it, whether or not the turn has passages).

``mtrag.rb_agg``, ``mtrag.rb_llm``, ``mtrag.rl_f`` and their IDK-conditioned forms
follow ``rb_agg``, ``RB_llm`` as stored (``extract_rating`` already applied) and
``get_idk_underspec_score`` / ``get_idk_score`` exactly, quirks kept (see the function
docstrings). A record without
a prediction (a task input) has no text metric: they are None, never 0.

Texts: the prediction, targets and passages are taken from the MT-RAG source object
when the record carries one (so ``Length`` counts the original characters), else from
the canonical fields (response sentences, ``references``, documents) joined by spaces.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..labels import Layer
from ..record import Record
from . import rouge
from .common import Values, source_record
from .ragas import faithfulness
from .rouge import Reference, best_rouge_l, rouge_l, tokenize

LABELS = ("idk", "underspecified", "answerability", "rb_llm_rating")
NO_ANSWER = ("UNANSWERABLE", "CONVERSATIONAL")
# string.punctuation, spelled out: importing ``string`` (its Template class compiles a
# pattern) cost every command's start-up 1.5 ms (issue 27)
_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_PUNCTUATION_BYTES = _PUNCTUATION.encode()
# what str.split and isalnum leave in a plain ASCII word list: letters, digits and the
# characters str.split takes for whitespace (\x1c-\x1f among them)
_ALNUM_OR_SPACE_BYTES = bytes(c for c in range(128) if chr(c).isalnum() or chr(c).isspace())
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))
_NON_WORD = re.compile(r"[^\w\s]")
# ``_clean`` of an ASCII text on its bytes: the ASCII characters ``_NON_WORD`` removes
# (found by the regex itself), and the newline to a space
_NON_WORD_BYTES = bytes(c for c in range(128) if _NON_WORD.match(chr(c)))
_NEWLINE_TO_SPACE = bytes.maketrans(b"\n", b" ")


def normalize_text(text: str) -> str:
    """Lower, strip ASCII punctuation, drop a/an/the, collapse whitespace."""
    return " ".join(_normalized_words(text))


@lru_cache(maxsize=4)  # (a record's prediction: for token recall, then extractiveness)
def _split_words(text: str) -> tuple[list[str], bool]:
    """The text lower-cased and split, its ASCII punctuation deleted; and whether those
    words are ``_plain`` (the list is shared: read only)."""
    if text.isascii():  # (the same deletion by one C translate of the bytes)
        kept = text.lower().encode().translate(None, _PUNCTUATION_BYTES)
        # plain: no byte left that is neither a letter or digit nor whitespace
        return kept.decode().split(), not kept.translate(None, _ALNUM_OR_SPACE_BYTES)
    # the same deletion on the UTF-8 bytes: no byte of a character beyond ASCII is an
    # ASCII one, and "surrogatepass" takes a lone surrogate there and back (``str``'s
    # translate looks each character up in a dict: a hundred times slower, issue 27)
    lowered = text.lower().encode("utf-8", "surrogatepass")
    words = lowered.translate(None, _PUNCTUATION_BYTES).decode("utf-8", "surrogatepass").split()
    return words, _plain(words)


def _plain(words: list[str]) -> bool:
    """Whether every word is made of word characters only (``isalnum``: re's ``\\w``,
    the underscore being punctuation). Whitespace is no word character, so the article
    regex's matches and word boundaries lie within single words, and in such a word a
    ``\\b``-bounded "a", "an" or "the" can only be the whole word: the articles can be
    dropped as words (the regex over the text was half the time)."""
    return not words or "".join(words).isalnum()


def _normalized_words(text: str) -> list[str]:
    """``normalize_text(text).split()``, without joining the words only to split them."""
    words, plain = _split_words(text)
    if plain:
        return [w for w in words if w not in _ARTICLE_WORDS]
    out: list[str] = []  # a word with other characters ("•", "’s"): the regex, on it alone
    for word in words:
        if word.isalnum():
            if word not in _ARTICLE_WORDS:
                out.append(word)
        else:
            out.extend(_ARTICLES.sub(" ", word).split())
    return out


def _word_counts(text: str) -> Counter[str]:
    """``Counter(normalize_text(text).split())``: the articles dropped from the counts
    rather than from the words, where ``_plain`` allows."""
    words, plain = _split_words(text)
    if not plain:
        return Counter(_normalized_words(text))
    counts = Counter(words)
    for article in _ARTICLE_WORDS:
        dict.pop(counts, article, None)
    return counts


def token_recall(prediction: str, target: str) -> float:
    target_counts = _word_counts(target)
    words, plain = _split_words(prediction)
    # only the prediction's words that the target has are counted (an article never is
    # one of them); a word the article regex might split counts as before
    counts = Counter(
        filter(target_counts.__contains__, words) if plain else _normalized_words(prediction)
    )
    return _recall(target_counts, counts)


def _recall(target_counts: Counter[str], counts: Counter[str]) -> float:
    """The common word count over the target's (0 when none is common):
    ``sum((counts & target_counts).values())`` without building the intersection, for
    each word of ``counts`` the smaller of its two counts (a target's Counter gives 0
    for a word it lacks), in C."""
    common = sum(map(min, map(target_counts.__getitem__, counts), counts.values()))
    if common == 0:
        return 0.0
    return common / target_counts.total()  # (the number of target words)


def _clean(text: str) -> str:
    """``clean_html(strip_newline_words(text))``: after removing every non-word
    character no markup or entity is left, so the HTML step changes nothing."""
    if text.isascii():  # (the same by one C translate of the bytes)
        return text.encode().translate(_NEWLINE_TO_SPACE, _NON_WORD_BYTES).lower().decode()
    return _NON_WORD.sub("", text.replace("\n", " ")).lower()


def extractiveness(prediction: str, passage: str) -> float:
    """Extractiveness_RougeL: 1 if the passage (spaces removed) is inside the prediction,
    else ROUGE-L of the cleaned texts."""
    return max_extractiveness(prediction, [passage])


def max_extractiveness(prediction: str, passages: list[str]) -> float:
    """The largest ``extractiveness`` of the prediction over the passages (at least
    one): the prediction is cleaned and tokenized once, each passage once per text
    (a conversation's turns share their passages)."""
    text = _clean(prediction)
    joined = text.replace(" ", "")
    cleaned = [_cleaned_passage(passage) for passage in passages]
    if any(target_joined in joined for target_joined, _ in cleaned):
        return 1.0  # no ROUGE-L exceeds 1
    return best_rouge_l(_extractive_tokens(prediction, text), [r for _, r in cleaned])


def _extractive_tokens(prediction: str, cleaned: str) -> list[str]:
    """``tokenize(cleaned)``, ``cleaned`` being ``_clean(prediction)``. For an ASCII text
    without "_" whose words are ``_plain``, those are the same tokens: punctuation ("_"
    aside) is deleted by both, and what is left is letters, digits and whitespace. The
    words token recall split are then taken as they are (one split of the prediction
    fewer per record)."""
    if prediction.isascii() and "_" not in prediction:
        words, plain = _split_words(prediction)
        if plain:
            return words
    return tokenize(cleaned)


@lru_cache(maxsize=1_024)
def _cleaned_passage(passage: str) -> tuple[str, Reference]:
    """A passage cleaned with spaces removed, and its ROUGE-L tokens (both read only:
    they are shared)."""
    target = _clean(passage)
    return target.replace(" ", ""), Reference(tokenize(target))


# a-z and 0-9 to "a", the ASCII bytes that are neither punctuation nor a letter, digit
# or whitespace (control characters: what makes a text's words not ``_plain``) to "x",
# any other to a space: the runs of letters and digits of a lower-cased ASCII text are
# then counted by one search for " a", and whether its words are plain told by one for "x"
_RUN_MARKS = bytes(
    97
    if to != 32
    else 120
    if c < 128 and c not in _PUNCTUATION_BYTES + _ALNUM_OR_SPACE_BYTES
    else 32
    for c, to in enumerate(rouge.TO_SPACE)
)


def text_scores(
    prediction: str, target: str | None, passages: list[str]
) -> tuple[float | None, float | None, float | None]:
    """(``token_recall``, ``rouge_l``, ``max_extractiveness``) of a prediction against
    its first target (None without one: the first two None) and its passages (None
    without any), equal to the three functions (issue 27: each split and numbered the
    prediction's words again; Python word strings were most of an MT-RAG import's cost).
    An ASCII record splits each text once where its two tokenizations agree and
    numbers each word list once for all three; any other record takes the three."""
    if prediction.isascii() and (target is None or target.isascii()):
        scores = _ascii_scores(prediction, target, passages)
        if scores is not None:
            return scores
    if target is None:
        recall = rouge_score = None
    else:
        recall, rouge_score = token_recall(prediction, target), rouge_l(prediction, target)
    return recall, rouge_score, max_extractiveness(prediction, passages) if passages else None


def _ascii_words(text: str) -> tuple[list[str], list[str]] | None:
    """An ASCII text's token recall words (``_split_words``) and rouge_score tokens
    (``tokenize``), the same list where they agree; None unless the words are
    ``_plain`` (the articles are then whole words)."""
    lowered = text.encode().lower()  # (an ASCII text: as text.lower().encode())
    marked = lowered.translate(_RUN_MARKS)
    if b"x" in marked:  # (a byte left once punctuation is deleted that is not plain)
        return None
    # The words are the runs of letters and digits left once punctuation is deleted
    # (what is left is letters, digits and whitespace: each word one run); the tokens
    # the runs of the text itself, one or more per word: the same list when there are
    # as many (no word had punctuation between letters: "don't")
    words = lowered.translate(None, _PUNCTUATION_BYTES).decode().split()
    if len(words) == marked.count(b" a") + marked.startswith(b"a"):
        return words, words
    return words, lowered.translate(rouge.TO_SPACE).decode().split()


def _ascii_scores(
    prediction: str, target: str | None, passages: list[str]
) -> tuple[float | None, float | None, float | None] | None:
    """``text_scores`` of ASCII texts with ``_plain`` words, every word list numbered
    once (rouge's shared numbering); None where that does not apply."""
    ours = _ascii_words(prediction)
    theirs = _ascii_words(target) if target is not None else None
    if ours is None or (target is not None and theirs is None):
        return None
    if passages and "_" in prediction:
        return None  # (extractiveness's tokens are then not the recall words)
    words, tokens = ours
    references = [_cleaned_passage(passage) for passage in passages]
    # (a passage inside the prediction is no longer than it: cleaning an ASCII text
    # only deletes characters, so most records need not clean the prediction)
    extracted = False
    if any(len(target_joined) <= len(prediction) for target_joined, _ in references):
        joined = _clean(prediction).replace(" ", "")
        extracted = any(target_joined in joined for target_joined, _ in references)
    size = len(words) + len(tokens) + sum(len(r.tokens) for _, r in references) + 3
    if theirs is not None:
        size += len(theirs[0]) + len(theirs[1])
    recall = rouge_score = extract = None
    with rouge.LOCK:
        if not rouge.start(size):
            return None
        numbered = rouge.characters
        chars = numbered(words)
        if theirs is not None:
            target_words, target_tokens = theirs
            target_chars = numbered(target_words)
            recall = _char_recall(chars, target_chars)
            rouge_score = 0.0
            if tokens and target_tokens:
                lcs = rouge.lcs_characters(
                    chars if tokens is words else numbered(tokens),
                    target_chars if target_tokens is target_words else numbered(target_tokens),
                )
                rouge_score = rouge.f_measure(lcs, tokens, target_tokens)
        if passages:
            extract = 1.0 if extracted else 0.0  # (no ROUGE-L exceeds 1)
            for _, reference in references if words and not extracted else ():
                if reference.tokens:
                    lcs = rouge.lcs_characters(chars, reference.characters())
                    extract = max(extract, rouge.f_measure(lcs, words, reference.tokens))
    return recall, rouge_score, extract


def _char_recall(chars: str, target_chars: str) -> float:
    """``token_recall`` of words numbered as ``chars`` against ``target_chars`` (one
    numbering; ``_plain`` words, so the articles are whole words): for each distinct
    target word but an article, the smaller of its two counts, over the target's
    words but articles (0 when none is common). The target's counts by one Counter,
    the prediction's by its string's own ``count`` per distinct target word: two
    Counters of the words were a tenth of a record's metrics, a ``count`` for the
    target's too a quarter of ``text_scores`` (issue 27)."""
    known = rouge.NUMBERING
    target_counts = Counter(target_chars)
    total = len(target_chars)
    for article in _ARTICLE_WORDS:
        if article in known:
            total -= target_counts.pop(known[article], 0)
    common = sum(map(min, map(chars.count, target_counts), target_counts.values()))
    if common == 0:
        return 0.0
    return common / total


def texts(record: Record) -> tuple[str | None, list[str], list[str]]:
    """(prediction, targets, passages); the prediction is None when the record has none
    (a task input before any model answered), which leaves the text metrics undefined."""
    src = source_record(record, "mtrag")
    if src is not None:
        try:
            prediction = src["predictions"][0]["text"]
            targets = [t["text"] for t in src.get("targets") or []]
            passages = [c["text"] for c in src.get("contexts") or []]
            if isinstance(prediction, str):
                return prediction, targets, passages
        except (KeyError, IndexError, TypeError):
            pass
    passages = [doc.text for doc in record.documents]
    prediction = record.response_text if record.response else None
    return prediction, list(record.references), passages


def rb_llm(rating: Any) -> float:
    """RAD-Bench rating / 10, never clamped: the rating is a number already (a stored
    ``RB_llm`` × 10, or a reviewer's 1-10), and the scripts use the stored ``RB_llm``
    as it is (judge_wrapper.get_idk_score reads ``metrics["RB_llm"][0]``).
    ``extract_rating``'s "0 or below, or above 1, becomes 0.5" is a rule for the
    judge's raw text, applied once before ``RB_llm`` was stored; only its "no rating
    found" 0.5 is kept, for a label that is not a number."""
    if isinstance(rating, bool) or not isinstance(rating, (int, float)):
        return 0.5
    return rating / 10


def rb_agg(recall: float, rouge: float, extr: float) -> float:
    if recall == 0 or rouge == 0 or extr == 0:
        return 0.0
    return 3 * recall * rouge * extr / (recall * rouge + recall * extr + rouge * extr)


def idk_conditioned(
    metric: float | None, answerability: str | None, idk: Any, underspecified: Any
) -> float | None:
    """MT-RAG's IDK conditioning (scripts/evaluation/judge_wrapper.py).

    With an underspecified verdict on the record the file came from the pipeline that
    runs the underspecified judge, and ``get_idk_underspec_score`` applies:
    UNDERSPECIFIED -> 1 iff underspecified == 1, else 0. Without one it came from the
    older pipeline, and ``get_idk_score`` applies, which has no UNDERSPECIFIED branch
    (such a task keeps its raw metric unless idk == 1). Then, in both:
    UNANSWERABLE/CONVERSATIONAL -> 1 iff idk == 1, 0 if idk is 0 or 0.5 (an absent idk
    falls through to the raw metric, as in MT-RAG); otherwise 0 if idk == 1, else the
    raw metric (None stays None, as NaN does)."""
    if answerability == "UNDERSPECIFIED" and underspecified is not None:
        return 1.0 if underspecified == 1 else 0.0
    if answerability in NO_ANSWER and idk == 1:
        return 1.0
    if answerability in NO_ANSWER and idk in (0, 0.5):
        return 0.0
    if idk == 1:
        return 0.0
    return metric


def metrics(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    into: dict[str, Any] | None = None,
) -> Values:
    """The family's per-record values (``common.MetricFunction``; no setting-dependent
    stats here, so ``judge`` and ``into`` go unread)."""
    scores = record.scores
    prediction, targets, passages = texts(record)
    out: Values = {}
    recall = rouge_value = extract = None
    if prediction is not None:
        recall, rouge_value, extract = text_scores(
            prediction, targets[0] if targets else None, passages
        )
    out["mtrag.recall"] = recall
    out["mtrag.rouge_l"] = rouge_value
    for name in ("mtrag.bertscore_p", "mtrag.bertscore_r", "mtrag.bert_k_prec"):
        out[name] = scores.get(name)
    out["mtrag.extractiveness"] = extract
    out["mtrag.length"] = None if prediction is None else float(len(prediction))

    if rouge_value is None:
        agg = None
    else:
        bert_r = scores.get("mtrag.bertscore_r")
        first = (bert_r + 1) / 2 if bert_r is not None else recall
        if "mtrag.bert_k_prec" in scores:
            # run_algorithmic.rb_agg uses BertKPrec whenever the key is there, also on
            # a turn without contexts (files store [0.0] there: extractiveness 0.5)
            extr = ((scores["mtrag.bert_k_prec"] or 0.0) + 1) / 2
        else:
            # rb_agg: no 'BertKPrec' in the metrics -> extractiveness 0 -> RB_agg 0 (the
            # scripts' per-passage loop never creates it on a turn with no contexts)
            extr = 0.0
        agg = rb_agg(first or 0.0, rouge_value, extr)
    out["mtrag.rb_agg"] = agg

    rating = (labels.get("rb_llm_rating") or {}).get("*")
    if "rb_llm_rating" in labels and "*" in labels["rb_llm_rating"]:
        out["mtrag.rb_llm"] = rb_llm(rating)
    else:
        out["mtrag.rb_llm"] = scores.get("mtrag.rb_llm")
    if record.statements:
        out["mtrag.rl_f"] = faithfulness(record, labels)
    else:
        out["mtrag.rl_f"] = scores.get("mtrag.rl_f")

    answerability = (labels.get("answerability") or {}).get("*", record.answerability)
    idk = (labels.get("idk") or {}).get("*")
    under = (labels.get("underspecified") or {}).get("*")
    for name in ("rb_agg", "rb_llm", "rl_f"):
        out[f"mtrag.{name}_idk"] = idk_conditioned(out[f"mtrag.{name}"], answerability, idk, under)
    out["mtrag.answerability_accuracy"] = answerability_agreement(answerability, idk)
    return out


def answerability_agreement(answerability: str | None, idk: Any) -> float | None:
    """1 when the IDK verdict agrees with the gold answerability (IDK exactly for
    UNANSWERABLE/CONVERSATIONAL), 0 when not; None without both or for UNDERSPECIFIED."""
    if answerability is None or idk is None or answerability == "UNDERSPECIFIED":
        return None
    return 1.0 if (idk == 1) == (answerability in NO_ANSWER) else 0.0
