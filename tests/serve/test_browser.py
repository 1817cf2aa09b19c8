"""Two reviewers in Chromium on one ``ragreview serve``: each sees the other's commits
within 2 s, both land in the log under their names, and ``n`` passes by the record the
other has open. Skipped where Debian's chromium is not installed (.ci/run installs it)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ragreview.store import metric_summary_reads, open_database
from ragreview.store import records as store_records
from ragreview.tui.widgets.metrics_panel import fmt
from tests.conftest import subprocess_env
from tests.serve.browser import CHROMIUM, CHROMIUM_ARGS, Session
from tests.serve.conftest import holders

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)"),
]
sync_api = pytest.importorskip("playwright.sync_api")

TOKEN = "team-token-7"


def test_two_reviewers_in_chromium(serve, tmp_path):
    served = serve("--token", TOKEN)
    status, page = served.get(
        "/", headers={"Cookie": "ragreview_reviewer=Ann", "Authorization": f"Bearer {TOKEN}"}
    )
    assert status == 200 and "<title>ragreview · demo</title>" in page

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # Bea comes first and gets covid-1; Ann's queue passes it by: covid-2
            bea = Session(browser, served.url, "Bea", TOKEN)
            bea.wait_for("Bea")
            bea.wait_for("covid-1 · trace")
            ann = Session(browser, served.url, "Ann", TOKEN)
            ann.wait_for("covid-2 · trace")
            assert holders(served.db) == {"covid-1": "Bea", "covid-2": "Ann"}
            bea.wait_for("·  @covid-2")  # Ann's lease, marked in Bea's list
            bea.press("M")  # the full metrics panel (compact shows one headline a family)
            bea.wait_for("utilization")

            # Ann overrides a label; Bea's dataset metrics follow within 2 s
            db = open_database(served.db)
            before = metric_summary_reads.dataset_summary(db, "demo")["effective"]
            ann.press("r")  # covid-2's first document sentence: relevant toggled
            deadline = time.monotonic() + 10
            while not db.conn.execute("SELECT count(*) FROM human_labels").fetchone()[0]:
                assert time.monotonic() < deadline, ann.text()
                time.sleep(0.02)
            committed = time.monotonic()
            summary = metric_summary_reads.dataset_summary(db, "demo")
            moved = [n for n in summary["effective"] if summary["effective"][n] != before[n]]
            assert "trace.relevance" in moved
            judge, now = (
                summary["judge"]["trace.relevance"],
                summary["effective"]["trace.relevance"],
            )
            shown = f"{fmt(judge)}→{fmt(now)}"
            assert shown not in bea.text()
            bea.wait_for(shown, timeout_s=2)
            assert time.monotonic() - committed <= 2.5  # polling slack on the test's side

            # Bea's `n` (next record) and `p` pass covid-2 by: Ann has it open
            bea.press("n")
            bea.wait_for("markup-1 · trace")
            assert holders(served.db) == {"markup-1": "Bea", "covid-2": "Ann"}
            bea.press("p")
            bea.wait_for("covid-1 · trace")
            # and so does space (reviewed, next unreviewed)
            bea.press("Space")
            bea.wait_for("markup-1 · trace")
            bea.wait_for("1/5 reviewed")
            bea.page.wait_for_timeout(300)
            bea.page.screenshot(path=str(tmp_path / "review-bea.png"))

            # export: the file lands beside the DB and downloads in Ann's browser
            with ann.page.expect_download(timeout=20_000) as download:
                ann.press("Control+e")
            saved = tmp_path / "download.jsonl"
            download.value.save_as(saved)
            assert download.value.suggested_filename.endswith(".jsonl")
            assert len(saved.read_text().splitlines()) == 5

            # the command palette opens in the browser too
            ann.press("Control+p")
            ann.wait_for("Search for commands")
            ann.press("Escape")
            covid_1 = store_records.find(db, "covid-1")
            assert covid_1.status == "reviewed" and covid_1.reviewed_by == "Bea"
            db.conn.close()
        finally:
            browser.close()

    log = subprocess.run(
        [sys.executable, "-m", "ragreview", "log", str(served.db)],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(tmp_path),
    )
    assert log.returncode == 0, log.stderr
    lines = log.stdout.splitlines()
    assert any("Ann" in line and "relevant" in line and "covid-2" in line for line in lines)
    assert any("Bea" in line and "covid-1" in line for line in lines)
    # the sessions ended with their pages: their leases went with them
    deadline = time.monotonic() + 10
    while holders(served.db) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert holders(served.db) == {}
    assert TOKEN not in served.log.read_text()
