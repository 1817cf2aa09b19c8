"""The record families, one module each: a family's labels and value sets, keys,
panels, metric function, variants and stats, and the rule for which records are its
own, all in its module (``core.families.Family``).

``BUILT_IN`` lists them in the order the catalogue, the help screen and the metrics
panel show them; importing this package registers them (``ragreview`` does so on
import, so every entry point sees them). A family of your own: declare a ``Family``
in a module and pass it to ``core.families.register`` (docs/contributing.md).
"""

from __future__ import annotations

from ..core.families import BY_NAME, register
from . import deepeval, longform, mtrag, ragas, ragchecker, rgb, rubric, trace

BUILT_IN = (
    trace.FAMILY,
    rgb.FAMILY,
    mtrag.FAMILY,
    longform.FAMILY,
    ragas.FAMILY,
    rubric.FAMILY,
    deepeval.FAMILY,
    ragchecker.FAMILY,
)
for _family in BUILT_IN:
    if _family.name not in BY_NAME:
        register(_family)
