"""RGB per-record metrics, docs/metrics.md (RGB's own string rules are in ``core.rgb_rules``).

Per record, from labels: ``rgb.rejected``, ``rgb.correct`` (every answer part matched
and not rejected: ``0 not in label and 1 in label`` in RGB's evalue.py, where a
rejection makes ``label == [-1]``), ``rgb.error_detected`` and ``rgb.error_corrected``
(detected and correct). Absent labels mean what RGB's own lists mean by a missing
phrase: false. A record with no prediction and no RGB label (an RGB data file, before
any model answered) has every metric undefined (None), not 0.

The dataset rates (``rgb.accuracy``, ``rgb.rejection_rate``, ``rgb.error_detection_rate``,
``rgb.error_correction_rate``) are not plain means of those; they are built in
``aggregate.py`` from the ``rgb._*`` components computed here, per ``rgb.variant``:

* ``reference`` (RGB's evalue.py, asymmetries kept): at ``noise_rate == 1`` a record
  counts toward the rejection rate when rejected *or* correct (RGB's ``all_rate``);
  correction is ``factlabel == 1 and 0 not in label`` over the detected records, so a
  rejected record (label ``[-1]``) that flagged the error counts as corrected.
* ``simple``: every rate over all n; rejection is just "rejected"; correction is
  correct and not merely repeating the counterfactual answer.

Whatever the variant, the LLM-judge scripts' own rates are reported beside evalue.py's,
named after the script, over the records that carry the script's verdict (its
``evaluation``, the ``not_addressed`` / ``identified`` labels), each computed as the
script computes it: its verdict from ``evaluation``, ``label`` from evalue.py's
``label``. evalue.py's rates never read the scripts' verdicts, nor the other way round.

* reject_evalue.py: ``rgb.reject_evalue.rejection_rate`` (``reject_rate`` =
  #"not addressed" / n) and ``rgb.reject_evalue.accuracy`` (``all_rate`` =
  #(0 not in label and 1 in label) / n);
* fact_evalue.py: ``rgb.fact_evalue.error_detection_rate`` (``reject_rate`` =
  #identified / n), ``rgb.fact_evalue.accuracy`` (``all_rate``) and
  ``rgb.fact_evalue.error_correction_rate`` (``correct_rate`` = #(identified and
  0 not in label and 1 in label) / #identified, 0 when none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..keys import part_key
from ..labels import Layer
from ..record import Record
from .common import Values, flag, has_any, setting

LABELS = ("rejected", "part_matched", "error_detected", "not_addressed", "identified")

# -- metrics -------------------------------------------------------------------------


def is_negative(record: Record) -> bool:
    """A negative-rejection record: every document is noise."""
    if record.noise_rate is not None:
        return record.noise_rate == 1
    return record.task == "rgb-negative"


def is_counterfactual(record: Record) -> bool:
    return record.task == "rgb-counterfactual" or bool(record.counterfactual)


def stats(record: Record, labels: Layer) -> Values:
    """The layer's verdicts and both variants' components (``rgb.*_reference`` /
    ``*_simple``), all None for a record with nothing to score: ``values`` picks a
    variant's from these, so a variant change needs no pass over the records."""
    rejected = flag((labels.get("rejected") or {}).get("*"))
    matched = labels.get("part_matched") or {}
    bits = [flag(matched.get(part_key(i))) for i in range(len(record.answer_parts))]
    # RGB's label list: [-1] when rejected, else one bit per part.
    label = [-1.0] if rejected else bits
    correct = 1.0 if (0.0 not in label and 1.0 in label) else 0.0
    out: Values = {
        "rgb.rejected": rejected,
        "rgb.correct": correct,
        "rgb.negative": 1.0 if is_negative(record) else 0.0,
        "rgb.counterfactual": 1.0 if is_counterfactual(record) else 0.0,
        "rgb.rejection_reference": 1.0 if (rejected or correct) else 0.0,
        "rgb.rejection_simple": rejected,
    }
    if out["rgb.counterfactual"]:
        detected = flag((labels.get("error_detected") or {}).get("*"))
        text = record.response_text.lower()
        repeats = any(alt and alt.lower() in text for alt in record.counterfactual)
        out["rgb.detected"] = detected
        out["rgb.corrected_reference"] = detected * (1.0 if 0.0 not in label else 0.0)
        out["rgb.corrected_simple"] = correct * (0.0 if repeats else 1.0)
    if not record.response and not has_any(labels, LABELS):
        # a data file without predictions: nothing was answered, so nothing to score
        for name in out:
            if name not in ("rgb.negative", "rgb.counterfactual"):
                out[name] = None
    return out


def values(s: Mapping[str, Any], variant: str) -> Values:
    """A variant's per-record values and components from ``stats``."""
    variant = "reference" if variant == "reference" else "simple"
    out: Values = {"rgb.rejected": s["rgb.rejected"], "rgb.correct": s["rgb.correct"]}
    if s["rgb.negative"]:
        out["rgb._rejection"] = s[f"rgb.rejection_{variant}"]
    else:
        out["rgb._accuracy"] = s["rgb.correct"]
    if s["rgb.counterfactual"]:
        detected, correct = s["rgb.detected"], s["rgb.correct"]
        out["rgb.error_detected"] = detected
        out["rgb.error_corrected"] = None if detected is None else detected * correct
        out["rgb._detected"] = detected
        out["rgb._corrected"] = s[f"rgb.corrected_{variant}"]
    return out


def metrics(
    record: Record,
    labels: Layer,
    settings: Mapping[str, Any],
    *,
    judge: Layer | None = None,
    into: dict[str, Any] | None = None,
) -> Values:
    """The variant's values; ``into`` (when given) also receives the layer's ``stats``."""
    variant = setting(settings, "rgb.variant", "reference")
    s = stats(record, labels)
    if into is not None:
        into.update(s)
    return {**values(s, variant), **script_values(labels, s["rgb.correct"])}


def script_values(labels: Layer, correct: float | None) -> Values:
    """The components of reject_evalue.py's and fact_evalue.py's rates on a record
    that carries the script's verdict (no variant decides them: not in ``stats``).
    ``correct`` is evalue.py's "0 not in label and 1 in label", which both scripts'
    ``all_rate`` and fact_evalue.py's ``correct_tt`` read from ``label``."""
    out: Values = {}
    not_addressed = (labels.get("not_addressed") or {}).get("*")
    if not_addressed is not None:
        out["rgb._reject_evalue"] = flag(not_addressed)
        out["rgb._reject_evalue_correct"] = correct
    identified = (labels.get("identified") or {}).get("*")
    if identified is not None:
        out["rgb._fact_identified"] = flag(identified)
        out["rgb._fact_correct"] = correct
        out["rgb._fact_corrected"] = None if correct is None else flag(identified) * correct
    return out
