"""Which metric rows stand for a record's layers, as SQL the writers and readers share.

``record_metrics`` holds a record's ``judge`` rows (plus a hidden ``record._count`` row,
whose sum is the dataset's record count), its ``stored`` rows (the source's own scores)
and, only while the record has human labels, its ``effective`` rows; ``metric_stats``
likewise. Without human labels a record's effective layer is its judge layer less the
hidden row, and every reader falls back to the judge rows there (``HUMAN``): that halves
the metric rows an import writes (issue 27). The running sums (``metric_totals``) still
count every record's effective values. A database written before holds effective rows
for unlabelled records too, equal to their judge rows: readers pick the layer by
``HUMAN``, never by which rows exist, so those rows change nothing (they go when the
record's metrics are next written).
"""

from __future__ import annotations

LAYERS = ("judge", "effective")  # the layers the running sums keep

COUNT = "record._count"  # a hidden row per record: its sum is the dataset's record count

# The records ``r`` whose effective layer is stored: those with human labels.
HUMAN = "EXISTS (SELECT 1 FROM human_labels h WHERE h.record = r.rowid)"

# The running sums of a group of ``summed_rows``: n, total, total_sq, undefined.
SUMS = "count(value), total(value), total(value * value), count(*) - count(value)"


def summed_rows(where: str, keys: str = "") -> str:
    """SQL for the metric values the running sums count, ``(keys…, layer, name, value)``
    over the records ``r`` that pass ``where``, record by record in the order ``r`` is
    scanned (sums added in another order can differ in the last bit): each record's
    judge rows, then its effective rows where it has human labels, else its judge rows
    again, less the hidden count. ``keys``: columns of ``r`` to select first (grouping
    keys)."""
    head = f"SELECT {keys}{', ' if keys else ''}"
    return (
        f"{head}l.layer AS layer, m.name AS name, m.value AS value FROM records r "
        "CROSS JOIN (SELECT 'judge' AS layer UNION ALL SELECT 'effective') l "
        "JOIN record_metrics m ON m.record = r.rowid AND m.layer = "
        f"CASE WHEN l.layer = 'judge' OR {HUMAN} THEN l.layer ELSE 'judge' END "
        f"WHERE {where} AND (l.layer = 'judge' OR m.name <> '{COUNT}')"
    )
