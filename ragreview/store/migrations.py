"""Schema migrations, applied in order by sqlite-utils' ``Migrations`` (m001-m004, the
first schema, are in ``first_schema.py``).

Never edit a migration that has shipped: add ``m00N_…`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import first_schema
from .migration_runner import Registry, run_script

if TYPE_CHECKING:
    from sqlite_utils import Database


MIGRATIONS = Registry("ragreview")


# m001-m004 live in first_schema.py; registered here, first and in order, because the
# registry runs its migrations in the order they were registered.
for _first in (
    first_schema.m001_initial,
    first_schema.m002_metrics,
    first_schema.m003_judge,
    first_schema.m004_agreement,
):
    MIGRATIONS()(_first)


@MIGRATIONS()
def m005_tui(db: Database) -> None:
    # The review list filters by task; without this a 100,000-record filter reads every
    # record's JSON (about a second), with it a few milliseconds.
    db.execute(
        "CREATE INDEX IF NOT EXISTS records_task ON records (dataset, task, status, position)"
    )


@MIGRATIONS()
def m006_formats(db: Database) -> None:
    # Whole-file source formats (SAFE result JSON, ragas annotation exports, JSON
    # arrays) need the parts of the document that are not records to be written back.
    db.execute("ALTER TABLE datasets ADD COLUMN source_document TEXT")


@MIGRATIONS()
def m007_serve_leases(db: Database) -> None:
    # `ragreview serve`: the record a browser session has open is leased to it, so the
    # other reviewers' queues skip it. One row per leased record; a lease is nobody's
    # once expires_at (unix seconds) has passed. Not history: rows come and go.
    run_script(
        db,
        """
        CREATE TABLE leases (
            record INTEGER PRIMARY KEY REFERENCES records(rowid) ON DELETE CASCADE,
            reviewer TEXT NOT NULL,
            session TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX leases_session ON leases (session);
        """,
    )


@MIGRATIONS()
def m008_formats_reviewer_reasons(db: Database) -> None:
    # Reviewers' layers read from an input file (InspectorRAGet annotators) come with
    # the reason each annotator gave for a label (docs/formats.md).
    db.execute("ALTER TABLE reviewer_labels ADD COLUMN reason TEXT")


@MIGRATIONS()
def m009_metrics_undefined(db: Database) -> None:
    # A metric undefined on a record (NULL row) is counted per dataset, never averaged as
    # 0: metric_totals gains that count. The metric rules changed with it (what has
    # nothing to score is now NULL, not 0), so the sums are dropped: the next read
    # recomputes every record's metrics from its labels (store.metric_writes.ensure).
    db.execute("ALTER TABLE metric_totals ADD COLUMN undefined INTEGER NOT NULL DEFAULT 0")
    db.execute("DELETE FROM metric_totals")


@MIGRATIONS()
def m010_judge_run_layers(db: Database) -> None:
    # Every judge run is kept as its own label layer (docs/agreement.md, Judge runs):
    # run_labels holds each run's labels, judge_labels stays the materialised copy of
    # the dataset's active run (setting judge.run). Runs gain what makes them
    # comparable: the prompt (hash and text) and the parameters (never a key or
    # header). Existing judge labels become their run's layer; labels imported without
    # a run become the dataset's import run.
    import hashlib

    run_script(
        db,
        """
        ALTER TABLE judge_runs ADD COLUMN prompt_hash TEXT;
        ALTER TABLE judge_runs ADD COLUMN prompt TEXT;   -- JSON {task: template}
        ALTER TABLE judge_runs ADD COLUMN params TEXT;   -- JSON {temperature, task, ...}
        CREATE TABLE run_labels (
            run TEXT NOT NULL REFERENCES judge_runs(id),
            record INTEGER NOT NULL REFERENCES records(rowid),
            name TEXT NOT NULL,
            target TEXT NOT NULL,
            value TEXT NOT NULL,          -- JSON
            logprob REAL,                 -- the judge's log-probability of this verdict; NULL when the endpoint gave none
            PRIMARY KEY (run, record, name, target)
        ) WITHOUT ROWID;
        CREATE INDEX run_labels_record ON run_labels (record, run);
        """,
    )
    conn = db.conn
    imported = dict(conn.execute("SELECT name, coalesce(imported_at, '') FROM datasets"))
    for (dataset,) in conn.execute(
        "SELECT DISTINCT r.dataset FROM judge_labels j JOIN records r ON r.rowid = j.record "
        "WHERE j.run IS NULL"
    ).fetchall():
        run = "import-" + hashlib.sha256(dataset.encode()).hexdigest()[:8]
        conn.execute(
            "INSERT OR IGNORE INTO judge_runs (id, dataset, model, task, mode, status, started) "
            "VALUES (?, ?, 'import', 'import', 'import', 'finished', ?)",
            (run, dataset, imported.get(dataset, "")),
        )
        # (judge_labels keeps run NULL for imported labels, as it always had)
        conn.execute(
            "INSERT INTO run_labels (run, record, name, target, value) "
            "SELECT ?, record, name, target, value FROM judge_labels WHERE run IS NULL "
            "AND record IN (SELECT rowid FROM records WHERE dataset = ?)",
            (run, dataset),
        )
    # labels naming a run the DB does not hold (copied from another file): keep them
    conn.execute(
        "INSERT INTO judge_runs (id, dataset, model, task, mode, status, started) "
        "SELECT j.run, min(r.dataset), 'unknown', 'unknown', 'import', 'finished', '' "
        "FROM judge_labels j JOIN records r ON r.rowid = j.record "
        "WHERE j.run NOT IN (SELECT id FROM judge_runs) GROUP BY j.run"
    )
    conn.execute(
        "INSERT INTO run_labels (run, record, name, target, value) "
        "SELECT run, record, name, target, value FROM judge_labels WHERE run IS NOT NULL"
    )
    # the active run: the latest run whose labels are in the judge layer (their labels
    # are disjoint, so making any of them active gives back the same layer)
    conn.execute(
        "INSERT OR IGNORE INTO settings (dataset, name, value) "
        "SELECT dataset, 'judge.run', json_quote(id) FROM ("
        "SELECT j.dataset, j.id, row_number() OVER (PARTITION BY j.dataset "
        "ORDER BY j.started DESC, j.id DESC) AS n FROM judge_runs j "
        "WHERE EXISTS (SELECT 1 FROM run_labels l WHERE l.run = j.id)) WHERE n = 1"
    )


@MIGRATIONS()
def m011_review_draws(db: Database) -> None:
    # `ragreview queue`: weighted draws of records to review, each record's inclusion
    # probability recorded so the corrected estimate can weight it (docs/estimate.md).
    run_script(
        db,
        """
        CREATE TABLE review_draws (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            dataset TEXT NOT NULL,
            strategy TEXT NOT NULL,           -- random | uncertainty | impact | ...
            n INTEGER NOT NULL,               -- expected draw size asked for (Σπ)
            seed INTEGER NOT NULL,
            uniform_share REAL NOT NULL,      -- of the weight spread evenly
            threshold REAL,                   -- key threshold τ; NULL = every record
            population INTEGER NOT NULL,      -- records in the dataset when drawn
            at TEXT NOT NULL
        );
        CREATE TABLE review_draw_records (
            draw INTEGER NOT NULL REFERENCES review_draws(id),
            record INTEGER NOT NULL REFERENCES records(rowid),
            position INTEGER NOT NULL,        -- draw order, from 0
            weight REAL NOT NULL,             -- w_i (the weights of a draw sum to 1)
            key REAL NOT NULL,                -- E_i / w_i; drawn when below τ
            inclusion REAL NOT NULL,          -- π_i = 1 − exp(−τ w_i)
            PRIMARY KEY (draw, record)
        ) WITHOUT ROWID;
        CREATE INDEX review_draw_order ON review_draw_records (draw, position);
        """,
    )


@MIGRATIONS()
def m012_metric_stats(db: Database) -> None:
    # What each setting-dependent metric family needs per record and layer to give any
    # variant's values (store/metric_stats_writes.py), so a variant change is an aggregate
    # over this table, not a pass over every record. Older DBs have no rows here: their
    # next variant change recomputes every record once, which writes them.
    run_script(
        db,
        """
        CREATE TABLE metric_stats (
            record INTEGER NOT NULL REFERENCES records(rowid),
            layer TEXT NOT NULL,
            trace_sentences INTEGER,
            trace_chars INTEGER,
            trace_relevant INTEGER,
            trace_utilized INTEGER,
            trace_both INTEGER,
            trace_relevant_listed INTEGER,
            trace_utilized_listed INTEGER,
            trace_relevant_chars INTEGER,
            trace_utilized_chars INTEGER,
            trace_both_chars INTEGER,
            trace_adherent REAL,
            trace_all_supported REAL,
            trace_stored_relevance REAL,
            trace_stored_utilization REAL,
            trace_stored_completeness REAL,
            trace_stored_adherence REAL,
            rgb_rejected REAL,
            rgb_correct REAL,
            rgb_negative REAL,
            rgb_counterfactual REAL,
            rgb_rejection_reference REAL,
            rgb_rejection_simple REAL,
            rgb_detected REAL,
            rgb_corrected_reference REAL,
            rgb_corrected_simple REAL,
            longform_supported INTEGER,
            longform_not_supported INTEGER,
            longform_irrelevant INTEGER,
            longform_stored_f1 TEXT,
            PRIMARY KEY (record, layer)
        ) WITHOUT ROWID;
        """,
    )


@MIGRATIONS()
def m013_compact_records(db: Database) -> None:
    # A re-import skips, unparsed, each line stored before byte for byte: records keep
    # the hash of their source line (store.importer; NULL where the source is not a
    # line read under the record's own id, and for records of older imports until
    # they are imported again).
    db.execute("ALTER TABLE records ADD COLUMN source_hash BLOB")
    # One copy of each record's text: a source whose lists the canonical data holds is
    # stored without them, and source_refs says where in data each is (store.compact;
    # NULL: the source is stored whole, as every record of an older import is).
    db.execute("ALTER TABLE records ADD COLUMN source_refs TEXT")


@MIGRATIONS()
def m014_guidelines_and_rules(db: Database) -> None:
    # A dataset's guidelines (Markdown, rules with ids such as R3: core.guidelines),
    # and the rule a label event applies (NULL: none named). docs/align.md.
    run_script(
        db,
        """
        CREATE TABLE guidelines (
            dataset TEXT PRIMARY KEY,
            text TEXT NOT NULL,
            source TEXT,
            at TEXT NOT NULL
        );
        ALTER TABLE events ADD COLUMN rule TEXT;
        """,
    )


@MIGRATIONS()
def m015_record_signals(db: Database) -> None:
    # What `queue --strategy impact` scores a record by, kept per record so a draw reads
    # one short row per record instead of every judge label and metric row of the
    # dataset (issue 27): its judge labels' count, its public judge-layer metric values,
    # its stored scores' mismatch and least verdict log-probability where it has them,
    # packed (store/record_signals.py). Written with the metric rows;
    # a record without a row (older imports, after a variant change) gets it from its
    # stored rows when a draw first needs it.
    run_script(
        db,
        """
        CREATE TABLE record_signal_names (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        );
        -- (name id u32, value f64) pairs, little-endian: first (0, its judge_labels
        -- rows), then its public judge-layer metric values (record_signal_names.id),
        -- then the mismatch and least log-probability pairs where it has them
        CREATE TABLE record_signals (
            record INTEGER PRIMARY KEY REFERENCES records(rowid),
            packed BLOB NOT NULL
        );
        """,
    )


@MIGRATIONS()
def m016_record_run_signals(db: Database) -> None:
    # What `queue --strategy runs-disagree` and `uncertainty` without log-probabilities
    # score a record by, kept per record where its run labels are written
    # (store/run_signals.py): (entropy, disagreeing share), f64 little-endian. A record
    # without a row gets it from its run labels when a draw first needs it.
    run_script(
        db,
        """
        CREATE TABLE record_run_signals (
            record INTEGER PRIMARY KEY REFERENCES records(rowid),
            packed BLOB NOT NULL
        );
        """,
    )


@MIGRATIONS()
def m017_record_targets(db: Database) -> None:
    # Each reviewed record's label targets, its task and keys per target kind, so that
    # `agreement` reads them without parsing the record's data (store/target_rows.py;
    # issue 27). Written when a record is marked reviewed; deleted by the triggers
    # when its data changes or it goes, so a row is never out of step with its record;
    # `form` is core.record_targets.FORM (another form is read as missing). The
    # reviewed records of an older file get theirs here.
    from .target_rows import store

    run_script(
        db,
        """
        CREATE TABLE record_targets (
            record INTEGER PRIMARY KEY REFERENCES records(rowid),
            form INTEGER NOT NULL,
            targets TEXT NOT NULL             -- JSON: [task, {kind: targets NUL-joined}]
        );
        CREATE TRIGGER record_targets_follow_data AFTER UPDATE OF data ON records
        BEGIN
            DELETE FROM record_targets WHERE record = old.rowid;
        END;
        CREATE TRIGGER record_targets_follow_delete AFTER DELETE ON records
        BEGIN
            DELETE FROM record_targets WHERE record = old.rowid;
        END;
        """,
    )
    reviewed = [
        r for (r,) in db.conn.execute("SELECT rowid FROM records WHERE status = 'reviewed'")
    ]
    store(db.conn, reviewed)
