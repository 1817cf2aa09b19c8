"""Every review action once: its key, binding id, palette title and help text.

Bindings, the command palette, the ``?`` help screen and the footer are all generated
from this table (and, for label keys, from the record's family) so they cannot drift
apart. A label key's letter is declared once, by the families that use it
(``KeyUse.key`` in ragreview/families/); this table gives its title and help.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

from ..core.families import FAMILIES


@dataclass(frozen=True, kw_only=True)
class ReviewAction:
    """One action of the review screen: its keys, help text and footer word."""

    id: str  # kebab-case binding id (a keymap can rebind by id)
    keys: str  # Textual key names, comma-separated
    action: str  # action on the review screen
    namespace: str  # palette namespace: label actions are offered only where they apply
    title: str
    help: str
    display: str = ""  # how the key is written in help and the footer (default: keys)
    footer: str = ""  # footer word; empty: not in the footer

    @property
    def palette_title(self) -> str:
        return f"{self.namespace}: {self.title}"

    @property
    def shown(self) -> str:
        return self.display or self.keys

    @property
    def is_label(self) -> bool:
        return self.action.startswith("label(")


# How a key letter of a family's declaration is typed, in Textual's key names; an
# upper-case letter is also bound as shift+letter (terminals with the kitty keyboard
# protocol send that).
_KEY_NAMES = {"+": "plus,equals_sign", "-": "minus"}


def _typed(letter: str) -> str:
    if letter in _KEY_NAMES:
        return _KEY_NAMES[letter]
    return f"{letter},shift+{letter.lower()}" if letter.isupper() else letter


def family_key(id: str) -> str:
    """The one letter the families declare for label action ``id`` (``KeyUse.key`` in
    ragreview/families/): every family that uses the action gives it the same letter."""
    letters = {use.key for family in FAMILIES for use in family.keys if use.action == id}
    if len(letters) != 1:
        raise ValueError(f"label action {id!r}: the families declare keys {sorted(letters)}")
    return letters.pop()


def _label(id: str, title: str, help: str) -> ReviewAction:
    """A label key: what it sets depends on the record's family and the item under the
    cursor (``core.families``); elsewhere it changes nothing and says so. Its letter is
    the families' (``family_key``), written there only."""
    letter = family_key(id)
    keys = _typed(letter)
    return ReviewAction(
        id=id, keys=keys, action=f"label({id!r})", namespace="label", title=title, help=help,
        display=letter if keys != letter else "",
    )  # fmt: skip


ACTIONS: tuple[ReviewAction, ...] = (
    ReviewAction(
        id="cursor-down", keys="j,down", display="j/↓", action="cursor(1)", namespace="nav",
        title="Next item", help="Move the cursor to the next sentence, fact or statement.",
    ),
    ReviewAction(
        id="cursor-up", keys="k,up", display="k/↑", action="cursor(-1)", namespace="nav",
        title="Previous item",
        help="Move the cursor to the previous item; on the first one, show the record's top.",
    ),
    ReviewAction(
        id="cell-left", keys="left", display="←", action="cell(-1)", namespace="nav",
        title="Previous cell",
        help="RAGChecker: the previous claim x chunk cell on the claim's row; from its "
        "first cell, the claim itself.",
    ),
    ReviewAction(
        id="cell-right", keys="right", display="→", action="cell(1)", namespace="nav",
        title="Next cell",
        help="RAGChecker: the next claim x chunk cell on the claim's row (from the claim: "
        "its first cell).",
    ),
    ReviewAction(
        id="record-top", keys="home", display="Home", action="edge(False)", namespace="nav",
        title="Top of the record", help="Id line, question and conversation; cursor on the first item.",
    ),
    ReviewAction(
        id="record-bottom", keys="end,G,shift+g", display="End/G", action="edge(True)",
        namespace="nav", title="Bottom of the record", help="The record's end; cursor on the last item.",
    ),
    ReviewAction(
        id="page-up", keys="pageup", display="PgUp", action="page(-1)", namespace="nav",
        title="Page up", help="Scroll the record view up a page.",
    ),
    ReviewAction(
        id="page-down", keys="pagedown", display="PgDn", action="page(1)", namespace="nav",
        title="Page down", help="Scroll the record view down a page.",
    ),
    _label("toggle-relevant", "Toggle relevant", "Document sentence is useful to answer the question (R; TRACe)."),
    _label("toggle-utilized", "Toggle utilized", "The response used the document sentence (U; TRACe)."),
    _label("toggle-supported", "Toggle supported",
        "Response sentence supported (TRACe); a statement's or reference statement's "
        "verdict (ragas); an answer part found in the response (RGB).",
    ),
    _label("edit-support-keys", "Edit supporting keys",
           "Document sentence keys (or general, well_known_fact, …) supporting the response sentence (TRACe)."),
    _label("cycle-fact", "Cycle fact label", "Atomic fact: S supported, NS not supported, IR irrelevant."),
    _label("toggle-context-useful", "Toggle context useful",
           "The retrieved context the cursor is in is useful (ragas context precision; C on its sentences)."),
    _label("toggle-verdict", "Toggle ragas verdict", "The ragas metric's pass/fail verdict on the sample (MetricAnnotation)."),
    _label("toggle-rejected", "Toggle rejected", "The response refuses for lack of information (RGB)."),
    _label("toggle-error-detected", "Toggle error detected",
           "The response flags the factual error planted in the documents (RGB counterfactual)."),
    _label("toggle-not-addressed", "Toggle not addressed (reject_evalue.py)",
           "reject_evalue.py's LLM verdict: the question is not addressed by the documents (RGB)."),
    _label("toggle-identified", "Toggle identified (fact_evalue.py)",
           "fact_evalue.py's LLM verdict: the model identified the factual errors (RGB)."),
    _label("cycle-idk", "Cycle idk", "'I don't know' verdict: 0 no, 0.5 partial, 1 yes (MT-RAG)."),
    _label("cycle-underspecified", "Cycle underspecified",
           "Underspecified-question verdict: 0 no, 0.5 unsure, 1 yes (MT-RAG)."),
    _label("cycle-answerability", "Cycle answerability",
           "Gold answerability: ANSWERABLE, UNANSWERABLE, PARTIAL, CONVERSATIONAL, UNDERSPECIFIED (MT-RAG)."),
    _label("set-rating", "Set rating", "RAD-Bench rating of the response, 1–10 (MT-RAG); empty goes back to the judge's."),
    _label("next-metric", "Next human metric",
           "Make the record's next declared human metric the one + and - step (InspectorRAGet rubric)."),
    _label("step-up", "Step human metric up",
           "The active human metric's next declared value; from none, the first (InspectorRAGet rubric)."),
    _label("step-down", "Step human metric down",
           "The active human metric's previous declared value; from none, the last (InspectorRAGet rubric)."),
    _label("verdict-yes", "DeepEval verdict yes",
           "The claim, statement, node or expected-output sentence under the cursor: yes (DeepEval)."),
    # N is no (DeepEval) and Neutral (RAGChecker): one action, the value from the family
    _label("verdict-no", "Verdict no / Neutral",
           "The item under the cursor: no (DeepEval); Neutral, neither follows nor is "
           "contradicted (RAGChecker, on a claim or one of its chunk rows)."),
    _label("verdict-idk", "DeepEval verdict idk",
           "The item under the cursor: idk, DeepEval's ambiguous verdict ('borderline' in newer "
           "releases)."),
    # RAGChecker: one key per checker verdict
    _label("set-entailment", "Set Entailment",
           "The claim follows (RAGChecker): a response claim from the ground truth, a "
           "ground-truth claim from the response; on a claim's chunk row, from that chunk."),
    _label("set-contradiction", "Set Contradiction",
           "The claim is contradicted (RAGChecker), on a claim or one of its chunk rows."),
    ReviewAction(
        id="add-item", keys="A,shift+a", display="A", action="items('add')", namespace="edit",
        title="Add fact / statement",
        help="A new atomic fact or statement after the one under the cursor (FActScore, ragas).",
    ),
    ReviewAction(
        id="delete-item", keys="D,shift+d", display="D", action="items('delete')",
        namespace="edit", title="Delete fact / statement",
        help="Remove the fact or statement under the cursor (^z brings it back).",
    ),
    ReviewAction(
        id="edit-item", keys="E,shift+e", display="E", action="items('edit')", namespace="edit",
        title="Edit fact / statement", help="Rewrite the text of the fact or statement under the cursor.",
    ),
    ReviewAction(
        # `|`, the character the prompt cuts at (not `S`: the fact labels read S/NS/IR)
        id="split-item", keys="vertical_line", display="|", action="items('split')",
        namespace="edit", title="Split fact / statement",
        help="Cut the fact or statement under the cursor in two or more at each | you type.",
    ),
    ReviewAction(
        id="revert-label", keys="backspace", display="⌫", action="revert", namespace="edit",
        title="Revert to judge",
        help="Drop your labels on the item under the cursor, else your verdict under the "
        "verdict cursor (▸: the last one you set; w on a rubric); the judge's show again.",
    ),
    ReviewAction(
        id="revert-record", keys="X,shift+x", display="X", action="revert_record",
        namespace="edit", title="Revert the whole record",
        help="Drop every label of yours on the record (asks first); one ^z brings them back.",
    ),
    ReviewAction(
        id="add-reason", keys="R,shift+r", display="R", action="reason", namespace="edit",
        title="Reason for an override",
        help="Attach a reason to your label on the item under the cursor (else on a verdict).",
    ),
    ReviewAction(
        # T: tag (terminals with the kitty protocol send shift+t; t cycles the task)
        id="pick-rule", keys="T,shift+t", display="T", action="pick_rule", namespace="edit",
        title="Name the guideline rule",
        help="Pick the guideline rule your label on the item under the cursor (else on a "
        "verdict) applies; kept on its event, ^z undoes (docs/align.md).",
    ),
    ReviewAction(
        id="guidelines", keys="H,shift+h", display="H", action="guidelines", namespace="view",
        title="Show the guidelines",
        help="The dataset's guidelines (ragreview guidelines PATH FILE) and their rule ids.",
    ),
    ReviewAction(
        id="toggle-reasons", keys="z", action="toggle_reasons", namespace="view",
        title="Show / hide judge reasoning",
        help="The judge's explanations and reasons, under the label they explain.",
    ),
    ReviewAction(
        id="review-next", keys="space", display="␣", action="review_next", namespace="record",
        title="Mark reviewed and next",
        help="Mark the record reviewed and open the next unreviewed one.", footer="done",
    ),
    ReviewAction(
        id="next-record", keys="n", action="record(1)", namespace="record",
        title="Next record", help="Open the next record in the list.",
    ),
    ReviewAction(
        id="previous-record", keys="p", action="record(-1)", namespace="record",
        title="Previous record", help="Open the previous record in the list.",
    ),
    ReviewAction(
        id="next-disagreement", keys="right_square_bracket", display="]",
        action="next_disagreement", namespace="record", title="Next disagreement",
        help="Jump to the next label where you and the judge disagree (≠).",
    ),
    ReviewAction(
        id="search", keys="slash", display="/", action="search", namespace="filter",
        title="Search", help="Show only records whose id or text contains a string.",
    ),
    ReviewAction(
        id="filter-all", keys="1", action="filter('all')", namespace="filter",
        title="All records", help="Show every record (clears every filter).",
    ),
    ReviewAction(
        id="filter-unreviewed", keys="2", action="filter('unreviewed')", namespace="filter",
        title="Unreviewed", help="Show records not reviewed yet.",
    ),
    ReviewAction(
        id="filter-reviewed", keys="3", action="filter('reviewed')", namespace="filter",
        title="Reviewed", help="Show reviewed records.",
    ),
    ReviewAction(
        id="filter-stale", keys="4", action="filter('stale')", namespace="filter",
        title="Stale", help="Show records whose content changed since they were reviewed.",
    ),
    ReviewAction(
        id="filter-disagreement", keys="5", action="filter('disagreement')", namespace="filter",
        title="Disagreements", help="Toggle: records where a human label differs from the judge's.",
    ),
    ReviewAction(
        id="filter-conflicts", keys="6", action="filter('conflicts')", namespace="filter",
        title="Reviewer conflicts",
        help="Toggle: records where merged reviewers disagree (ragreview merge).",
    ),
    ReviewAction(
        id="filter-sample", keys="7", action="filter('sample')", namespace="filter",
        title="Drawn sample", help="Toggle: only the records of the latest `ragreview sample`.",
    ),
    ReviewAction(
        id="draw-queue", keys="8", action="queue", namespace="filter",
        title="Review queue",
        help="Draw records to review (strategy, n, seed: `ragreview queue`) and show only "
        "them, in draw order; empty: show the latest draw.",
    ),
    ReviewAction(
        id="filter-runs-disagree", keys="9", action="filter('runs_disagree')",
        namespace="filter", title="Judge runs disagree",
        help="Toggle: records where two judge runs gave an item different values (≈).",
    ),
    ReviewAction(
        id="filter-task", keys="t", action="next_task", namespace="filter",
        title="Next task", help="Cycle the task filter through the dataset's tasks.",
    ),
    ReviewAction(
        id="sort-delta", keys="d", action="sort_delta", namespace="filter",
        title="Sort by metric delta", help="Toggle ordering by the largest judge→reviewed metric change.",
    ),
    ReviewAction(
        id="undo", keys="ctrl+z", display="^z", action="undo", namespace="edit",
        title="Undo", help="Undo your latest change in this session.",
    ),
    ReviewAction(
        id="redo", keys="ctrl+y", display="^y", action="redo", namespace="edit",
        title="Redo", help="Redo the change undone.",
    ),
    ReviewAction(
        id="add-note", keys="m", action="note", namespace="edit",
        title="Add note", help="Write a note on the record (empty clears it).",
    ),
    ReviewAction(
        id="toggle-blind", keys="b", action="blind", namespace="view", title="Reveal / hide judge",
        help="Blind mode: judge labels stay hidden until you reveal them; your blind "
        "labels and your final ones are both recorded.", footer="blind",
    ),
    ReviewAction(
        # terminals with the kitty protocol send shift+m
        id="metrics-panel", keys="M,shift+m", display="M", action="metrics_cycle",
        namespace="view", title="Metrics panel: compact / full / hidden",
        help="Step the metrics panel: compact (one headline per family), full (every "
        "metric, up to a third of the screen), hidden.",
    ),
    ReviewAction(
        id="toggle-turns", keys="o", action="toggle_turns", namespace="view",
        title="Unfold / fold earlier turns",
        help="Earlier conversation turns in full, or one line each (the judged turn and "
        "its response come first).",
    ),
    ReviewAction(
        id="metrics-scroll-up", keys="left_curly_bracket", display="{",
        action="metrics_scroll(-3)", namespace="view", title="Scroll metrics up",
        help="Scroll the metrics panel up when it has more rows than fit.",
    ),
    ReviewAction(
        id="metrics-scroll-down", keys="right_curly_bracket", display="}",
        action="metrics_scroll(3)", namespace="view", title="Scroll metrics down",
        help="Scroll the metrics panel down when it has more rows than fit.",
    ),
    ReviewAction(
        # terminals with the kitty protocol send shift+j
        id="rejudge", keys="J,shift+j", display="J", action="rejudge", namespace="judge",
        title="Re-judge this record",
        help="Ask the judge model again about this record (prompts for the model; the last "
        "run's endpoint and task). Replaces its judge labels; yours stay.",
    ),
    ReviewAction(
        id="export", keys="ctrl+e", display="^e", action="export", namespace="data",
        title="Export",
        help="Write the dataset with your labels, in its source format, to "
        "<dataset>.reviewed.<ext> beside the DB (in the background).",
    ),
    ReviewAction(
        id="quit", keys="q", action="app.quit", namespace="app", title="Quit",
        help="Leave ragreview (every label is already saved).",
    ),
    ReviewAction(
        id="help", keys="question_mark", display="?", action="help", namespace="app",
        title="Help", help="Keys and label meanings.", footer="help",
    ),
)  # fmt: skip

BY_ID = {a.id: a for a in ACTIONS}


def bindings() -> list[Binding]:
    # The footer is drawn by the screen from the record's family, not from bindings.
    return [
        Binding(a.keys, a.action, a.title, show=False, key_display=a.shown, id=a.id)
        for a in ACTIONS
    ]
