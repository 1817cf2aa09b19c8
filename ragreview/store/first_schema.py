"""The first schema: migrations m001-m004, the tables every file has had since the first
release (records, labels, metrics, judge runs, agreement). ``migrations.py`` registers
them ahead of its own, in this order; kept apart only to keep that file short.

Never edit a migration that has shipped: add ``m00N_…`` to ``migrations.py`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .migration_runner import run_script

if TYPE_CHECKING:
    from sqlite_utils import Database


def m001_initial(db: Database) -> None:
    run_script(
        db,
        """
        CREATE TABLE datasets (
            name TEXT PRIMARY KEY,
            format TEXT,
            source_path TEXT,
            imported_at TEXT
        );
        CREATE TABLE settings (
            dataset TEXT NOT NULL,
            name TEXT NOT NULL,
            value TEXT NOT NULL,              -- JSON
            PRIMARY KEY (dataset, name)
        );
        -- One row per evaluated example. data is the canonical record without labels
        -- and source; source is the original record's JSON text for the round trip.
        CREATE TABLE records (
            rowid INTEGER PRIMARY KEY,
            dataset TEXT NOT NULL,
            id TEXT NOT NULL,
            position INTEGER NOT NULL,
            task TEXT,
            data TEXT NOT NULL,
            source TEXT,
            content_hash TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'unreviewed',  -- unreviewed | reviewed | stale
            reviewed_by TEXT,
            reviewed_at TEXT,
            note TEXT,
            UNIQUE (dataset, id)
        );
        CREATE INDEX records_dataset_position ON records (dataset, position);
        CREATE INDEX records_status ON records (dataset, status, position);
        -- The judge layer: as imported or as produced by `ragreview judge`.
        CREATE TABLE judge_labels (
            record INTEGER NOT NULL REFERENCES records(rowid),
            name TEXT NOT NULL,
            target TEXT NOT NULL,
            value TEXT NOT NULL,              -- JSON
            run TEXT,                         -- judge run id (model, time) or NULL when imported
            PRIMARY KEY (record, name, target)
        ) WITHOUT ROWID;
        -- Append-only history of every human change. Never updated or deleted.
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            record INTEGER NOT NULL REFERENCES records(rowid),
            kind TEXT NOT NULL,               -- set | revert | undo | redo | status | note
            name TEXT NOT NULL,
            target TEXT NOT NULL,
            old TEXT,                         -- JSON, NULL = no human label
            new TEXT,                         -- JSON, NULL = no human label
            reviewer TEXT NOT NULL,
            at TEXT NOT NULL,
            reason TEXT,
            session TEXT,
            pass TEXT,                        -- 'blind' while judge labels were hidden
            ref INTEGER REFERENCES events(id) -- the event an undo/redo reverses
        );
        CREATE INDEX events_record ON events (record, id);
        CREATE INDEX events_reviewer ON events (reviewer, id);
        CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        -- The human layer: the fold of the events, kept in the same transaction.
        CREATE TABLE human_labels (
            record INTEGER NOT NULL REFERENCES records(rowid),
            name TEXT NOT NULL,
            target TEXT NOT NULL,
            value TEXT NOT NULL,              -- JSON
            reviewer TEXT NOT NULL,
            at TEXT NOT NULL,
            event INTEGER NOT NULL REFERENCES events(id),
            PRIMARY KEY (record, name, target)
        ) WITHOUT ROWID;
        """,
    )


def m002_metrics(db: Database) -> None:
    run_script(
        db,
        """
        -- Per-record metric values, one row per (record, layer, metric). layer is
        -- 'judge' or 'effective' (computed from the labels; value NULL where the metric
        -- applies but is undefined) or 'stored' (the source file's own score for that
        -- metric, to compare with our recomputation). Names with '._' are components
        -- of dataset rates (e.g. rgb._rejection), not metrics in their own right.
        CREATE TABLE record_metrics (
            record INTEGER NOT NULL REFERENCES records(rowid),
            layer TEXT NOT NULL,
            name TEXT NOT NULL,
            value REAL,
            PRIMARY KEY (record, layer, name)
        ) WITHOUT ROWID;
        -- Running sums over the non-NULL record_metrics rows of a dataset, adjusted by
        -- each refresh (old values out, new values in), so dataset aggregates need no
        -- rescan: mean = total / n, population std from total_sq.
        CREATE TABLE metric_totals (
            dataset TEXT NOT NULL,
            layer TEXT NOT NULL,
            name TEXT NOT NULL,
            n INTEGER NOT NULL,
            total REAL NOT NULL,
            total_sq REAL NOT NULL,
            PRIMARY KEY (dataset, layer, name)
        ) WITHOUT ROWID;
        """,
    )


def m003_judge(db: Database) -> None:
    run_script(
        db,
        """
        -- Responses of the judge model, keyed by sha256(model, prompt) so that a rerun
        -- of the same prompts costs no call. Only the model's text and token counts are
        -- kept: never the API key nor request headers.
        CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            response TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            at TEXT NOT NULL
        );
        -- One row per `ragreview judge` invocation (or batch submission).
        CREATE TABLE judge_runs (
            id TEXT PRIMARY KEY,
            dataset TEXT NOT NULL,
            model TEXT NOT NULL,
            base_url TEXT,
            task TEXT NOT NULL,
            mode TEXT NOT NULL DEFAULT 'online',   -- online | batch
            status TEXT NOT NULL DEFAULT 'running', -- running | finished | interrupted | submitted
            started TEXT NOT NULL,
            finished TEXT,
            requests INTEGER NOT NULL DEFAULT 0,
            cached INTEGER NOT NULL DEFAULT 0,
            labelled INTEGER NOT NULL DEFAULT 0,
            errors INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0
        );
        -- Records the judge could not label (retries ran out, output never valid).
        -- resolved is set when a later run labels the record for the same task.
        CREATE TABLE judge_errors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            record INTEGER NOT NULL REFERENCES records(rowid),
            run TEXT NOT NULL REFERENCES judge_runs(id),
            task TEXT NOT NULL,
            message TEXT NOT NULL,
            at TEXT NOT NULL,
            resolved TEXT
        );
        CREATE INDEX judge_errors_record ON judge_errors (record, id);
        -- Batch API jobs: submitted by `judge --batch`, read back by `judge --collect`.
        CREATE TABLE judge_batches (
            id TEXT PRIMARY KEY,                -- the provider's batch id
            run TEXT NOT NULL REFERENCES judge_runs(id),
            input_file TEXT NOT NULL,
            status TEXT NOT NULL,               -- provider status, or 'collected'
            submitted TEXT NOT NULL,
            collected TEXT
        );
        CREATE TABLE judge_batch_items (
            batch TEXT NOT NULL REFERENCES judge_batches(id),
            custom_id TEXT NOT NULL,
            record INTEGER NOT NULL REFERENCES records(rowid),
            task TEXT NOT NULL,
            cache_key TEXT NOT NULL,
            PRIMARY KEY (batch, custom_id)
        ) WITHOUT ROWID;
        """,
    )


def m004_agreement(db: Database) -> None:
    run_script(
        db,
        """
        -- Seeded review samples (`ragreview sample`): how they were drawn, and members.
        CREATE TABLE samples (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            dataset TEXT NOT NULL,
            n INTEGER NOT NULL,               -- records asked for
            by_field TEXT,                    -- stratification field, NULL = simple random
            seed INTEGER NOT NULL,
            population INTEGER NOT NULL,      -- records in the dataset when drawn
            at TEXT NOT NULL
        );
        CREATE TABLE sample_records (
            sample INTEGER NOT NULL REFERENCES samples(id),
            record INTEGER NOT NULL REFERENCES records(rowid),
            stratum TEXT,                     -- JSON value of by_field on the record
            PRIMARY KEY (sample, record)
        ) WITHOUT ROWID;
        -- Merged reviews (`ragreview merge`): each source reviewer's file and labels,
        -- kept so human-vs-human agreement and conflicts stay queryable.
        CREATE TABLE merge_sources (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            reviewer TEXT NOT NULL,           -- unique within the merged DB
            merged_at TEXT NOT NULL
        );
        CREATE TABLE reviewer_records (
            source INTEGER NOT NULL REFERENCES merge_sources(id),
            record INTEGER NOT NULL REFERENCES records(rowid),
            status TEXT NOT NULL,
            reviewed_by TEXT,
            reviewed_at TEXT,
            PRIMARY KEY (source, record)
        ) WITHOUT ROWID;
        CREATE TABLE reviewer_labels (        -- each source's human layer (overrides)
            source INTEGER NOT NULL REFERENCES merge_sources(id),
            record INTEGER NOT NULL REFERENCES records(rowid),
            name TEXT NOT NULL,
            target TEXT NOT NULL,
            value TEXT NOT NULL,              -- JSON
            PRIMARY KEY (source, record, name, target)
        ) WITHOUT ROWID;
        -- Items the reviewers who reviewed a record disagree on, for adjudication.
        CREATE TABLE merge_conflicts (
            record INTEGER NOT NULL REFERENCES records(rowid),
            name TEXT NOT NULL,
            target TEXT NOT NULL,
            PRIMARY KEY (record, name, target)
        ) WITHOUT ROWID;
        """,
    )
