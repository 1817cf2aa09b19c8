"""Every review action once: its key, binding id, palette title and help text.

Bindings, the command palette and the ``?`` help screen are all generated from this
table so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class ReviewAction:
    id: str  # kebab-case binding id (a keymap can rebind by id)
    keys: str  # Textual key names, comma-separated
    display: str  # how the key is written in help and the footer
    action: str  # action on the review screen
    namespace: str  # palette namespace
    title: str
    help: str
    footer: bool = False

    @property
    def palette_title(self) -> str:
        return f"{self.namespace}: {self.title}"


ACTIONS: tuple[ReviewAction, ...] = (
    ReviewAction(
        "cursor-down",
        "j,down",
        "j/↓",
        "cursor(1)",
        "nav",
        "Next sentence",
        "Move the cursor to the next sentence, fact or statement.",
    ),
    ReviewAction(
        "cursor-up",
        "k,up",
        "k/↑",
        "cursor(-1)",
        "nav",
        "Previous sentence",
        "Move the cursor to the previous item.",
    ),
    ReviewAction(
        "toggle-relevant",
        "r",
        "r",
        "label('relevant')",
        "label",
        "Toggle relevant",
        "Document sentence is useful to answer the question (R).",
        True,
    ),
    ReviewAction(
        "toggle-utilized",
        "u",
        "u",
        "label('utilized')",
        "label",
        "Toggle utilized",
        "The response used the document sentence (U).",
        True,
    ),
    ReviewAction(
        "toggle-supported",
        "s",
        "s",
        "label('supported')",
        "label",
        "Toggle supported",
        "Response sentence fully supported (✓/✗); also a statement's or "
        "reference statement's verdict and an answer part's match.",
        True,
    ),
    ReviewAction(
        "edit-support-keys",
        "l",
        "l",
        "support_keys",
        "label",
        "Edit supporting keys",
        "Document sentence keys (or general, well_known_fact, …) supporting the "
        "response sentence (← 0a 0b).",
    ),
    ReviewAction(
        "cycle-fact",
        "f",
        "f",
        "label('fact')",
        "label",
        "Cycle fact label",
        "Atomic fact: S supported, NS not supported, IR irrelevant.",
    ),
    ReviewAction(
        "toggle-rejected",
        "x",
        "x",
        "verdict('rejected')",
        "label",
        "Toggle rejected",
        "The response refuses for lack of information (RGB).",
    ),
    ReviewAction(
        "toggle-error-detected",
        "e",
        "e",
        "verdict('error_detected')",
        "label",
        "Toggle error detected",
        "The response flags the factual error planted in the documents (RGB).",
    ),
    ReviewAction(
        "cycle-idk",
        "i",
        "i",
        "verdict('idk')",
        "label",
        "Cycle idk",
        "'I don't know' verdict: 0 no, 0.5 partial, 1 yes (MT-RAG).",
    ),
    ReviewAction(
        "cycle-answerability",
        "a",
        "a",
        "verdict('answerability')",
        "label",
        "Cycle answerability",
        "Gold answerability: ANSWERABLE, UNANSWERABLE, PARTIAL, CONVERSATIONAL, UNDERSPECIFIED.",
    ),
    ReviewAction(
        "revert-label",
        "backspace",
        "⌫",
        "revert",
        "label",
        "Revert to judge",
        "Drop your labels on the sentence under the cursor (the judge's show again).",
    ),
    ReviewAction(
        "review-next",
        "space",
        "space",
        "review_next",
        "record",
        "Mark reviewed and next",
        "Mark the record reviewed and open the next unreviewed one.",
        True,
    ),
    ReviewAction(
        "next-record",
        "n",
        "n",
        "record(1)",
        "record",
        "Next record",
        "Open the next record in the list.",
    ),
    ReviewAction(
        "previous-record",
        "p",
        "p",
        "record(-1)",
        "record",
        "Previous record",
        "Open the previous record in the list.",
    ),
    ReviewAction(
        "next-disagreement",
        "right_square_bracket",
        "]",
        "next_disagreement",
        "record",
        "Next disagreement",
        "Jump to the next label where you and the judge disagree (≠).",
    ),
    ReviewAction(
        "search",
        "slash",
        "/",
        "search",
        "filter",
        "Search",
        "Show only records whose id or text contains a string.",
    ),
    ReviewAction(
        "filter-all", "1", "1", "filter('all')", "filter", "All records", "Show every record."
    ),
    ReviewAction(
        "filter-unreviewed",
        "2",
        "2",
        "filter('unreviewed')",
        "filter",
        "Unreviewed",
        "Show records not reviewed yet.",
    ),
    ReviewAction(
        "filter-reviewed",
        "3",
        "3",
        "filter('reviewed')",
        "filter",
        "Reviewed",
        "Show reviewed records.",
    ),
    ReviewAction(
        "filter-stale",
        "4",
        "4",
        "filter('stale')",
        "filter",
        "Stale",
        "Show records whose content changed since they were reviewed.",
    ),
    ReviewAction(
        "filter-disagreement",
        "5",
        "5",
        "filter('disagreement')",
        "filter",
        "Disagreements",
        "Show records where a human label differs from the judge's.",
    ),
    ReviewAction(
        "filter-task",
        "t",
        "t",
        "next_task",
        "filter",
        "Next task",
        "Cycle the task filter through the dataset's tasks.",
    ),
    ReviewAction(
        "sort-delta",
        "d",
        "d",
        "sort_delta",
        "filter",
        "Sort by metric delta",
        "Toggle ordering by the largest judge→reviewed metric change.",
    ),
    ReviewAction(
        "undo",
        "ctrl+z",
        "^z",
        "undo",
        "edit",
        "Undo",
        "Undo your latest label change in this session.",
    ),
    ReviewAction("redo", "ctrl+y", "^y", "redo", "edit", "Redo", "Redo the change undone."),
    ReviewAction(
        "add-note",
        "m",
        "m",
        "note",
        "edit",
        "Add note",
        "Write a note on the record (empty clears it).",
    ),
    ReviewAction(
        "toggle-blind",
        "b",
        "b",
        "blind",
        "view",
        "Reveal / hide judge",
        "Blind mode: judge labels stay hidden until you reveal them; your blind "
        "labels and your final ones are both recorded.",
        True,
    ),
    ReviewAction(
        "export",
        "ctrl+e",
        "^e",
        "export",
        "data",
        "Export",
        "Write the dataset with your labels to <dataset>.reviewed.jsonl beside the DB.",
    ),
    ReviewAction(
        "quit",
        "q",
        "q",
        "app.quit",
        "app",
        "Quit",
        "Leave ragreview (every label is already saved).",
    ),
    ReviewAction(
        "help", "question_mark", "?", "help", "app", "Help", "Keys and label meanings.", True
    ),
)


# Footer words kept short so the footer fits in 80 columns.
FOOTER_TEXT = {
    "toggle-relevant": "relevant",
    "toggle-utilized": "utilized",
    "toggle-supported": "supported",
    "review-next": "done",
    "toggle-blind": "blind",
    "help": "help",
}


def bindings() -> list[Binding]:
    return [
        Binding(
            a.keys,
            a.action,
            FOOTER_TEXT.get(a.id, a.title),
            show=a.footer,
            key_display=a.display,
            id=a.id,
        )
        for a in ACTIONS
    ]
