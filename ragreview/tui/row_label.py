"""What a record list row says about its record: the part of the id that tells it
apart from its neighbours, then the question's first words where the width allows.

Conversation ids (MT-RAG's ``<conversation>::<turn>`` and ``<conversation>::<turn>::
<model>``) share their long conversation hash from row to row, so the row shows the
turn and the model instead (``t3 mixtral where do…``). Other ids lose the prefix every
id of the dataset shares (``ClapNQ::``) and, when still too long, their middle.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

from .text import one_line

CONVERSATION = re.compile(r"^(?P<conversation>.+?)::(?P<turn>\d+)(?:::(?P<model>.+))?$")
SEPARATORS = re.compile(r"(::|/|:|\||#)")
MODEL = re.compile(r"^[A-Za-z][\w.\-]{0,23}$")  # a model name after the id's last /
MIN_WORDS = 6  # fewer cells left than this: no question words (a stub reads as noise)


def shared_prefix(first: str, last: str) -> str:
    """The prefix every id between ``first`` and ``last`` (the dataset's smallest and
    largest id) starts with, ending at a separator so no id is cut mid-token."""
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    common = first[:n]
    cut = max((m.end() for m in SEPARATORS.finditer(common)), default=0)
    return common[:cut]


def label(rid: str, question: str | None, room: int, prefix: str = "") -> str:
    """The row's text in at most ``room`` cells."""
    rid = one_line(rid)
    match = CONVERSATION.match(rid)
    if match:
        head = f"t{match['turn']}" + (f" {match['model']}" if match["model"] else "")
        head = cut_middle(head, room)
    else:
        short = rid[len(prefix) :] if prefix and rid.startswith(prefix) and rid != prefix else rid
        base, _, model = short.rpartition("/")
        if base and MODEL.match(model) and cell_len(short) > room:
            # InspectorRAGet's ``<task>/<model>``: the model first, it is what differs
            # between a task's rows
            head = model + " " + cut_middle(base, max(1, room - cell_len(model) - 1))
            head = cut_middle(head, room)
        else:
            head = cut_middle(short, room)
    left = room - cell_len(head) - 1
    if question and left >= MIN_WORDS:
        return head + " " + cut_end(one_line(question), left)
    if match and left >= MIN_WORDS:  # no question: the conversation's hash tells them apart
        return head + " " + cut_end(match["conversation"], left)
    return head


def cut_end(text: str, room: int) -> str:
    if cell_len(text) <= room:
        return text
    out = ""
    for ch in text:
        if cell_len(out + ch) > room - 1:
            break
        out += ch
    return out.rstrip() + "…"


def cut_middle(rid: str, room: int) -> str:
    """Cut a long id in the middle: its end often tells records apart."""
    if cell_len(rid) <= room:
        return rid
    tail = max(1, (room - 1) // 2)
    head = room - 1 - tail
    while cell_len(rid[:head]) > head:
        head -= 1
    while cell_len(rid[-tail:]) > tail:
        tail -= 1
    return rid[:head] + "…" + (rid[-tail:] if tail > 0 else "")
