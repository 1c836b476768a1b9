"""The admin retrieval page explains its ranking, in real headless Chromium against a live
`slowave up`: one column per signal, contributions summing to each score, in rank order."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.admin.live import CHROMEDRIVER, CHROMIUM, chromium, live_server, screenshot
from tests.cli.runner import cli_env, run_python, slowave

pytestmark = pytest.mark.skipif(
    not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)),
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)
SCOPE = "project:explain-panel"
PASSWORD = "correct-horse-battery-9"


@dataclass
class Page:
    driver: Any
    seeded: dict[str, Any]


def _seed(home: Path) -> dict[str, Any]:
    """A real-model recall with two pages, page one shown and judged (tests/cli/seeding.py)."""
    code = (
        "import json; from tests.cli.seeding import seed_paged_recall; "
        f"print(json.dumps(seed_paged_recall({SCOPE!r})))"
    )
    env = cli_env(home, SLOWAVE_EMBEDDER="onnx")
    return json.loads(run_python(home, code, env=env, timeout=300).strip().splitlines()[-1])


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    home: Path = tmp_path_factory.mktemp("explain-home")
    with live_server(home) as base:
        made = slowave(
            home, "createadmin", "--username", "ada", "--password-stdin", stdin=PASSWORD + "\n"
        )
        assert made.code == 0, made.err
        seeded = _seed(home)
        with chromium() as driver:
            driver.get(f"{base}/admin/login/")
            driver.find_element(By.NAME, "username").send_keys("ada")
            driver.find_element(By.NAME, "password").send_keys(PASSWORD)
            driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
            WebDriverWait(driver, 15).until(lambda d: "/admin/login/" not in d.current_url)
            driver.get(f"{base}/admin/memory/retrieval/{seeded['retrieval']}/change/")
            # Say what the browser shows if it is not the retrieval's page (a busy machine once
            # gave a page without it, and the bare NoSuchElement said nothing).
            shown = driver.find_elements(By.ID, "retrieval-explanation")
            assert shown, driver.current_url + "\n" + driver.find_element(By.TAG_NAME, "body").text
            yield Page(driver, seeded)


def _label(th: Any) -> str:
    # The admin's stylesheet shows table headers in capitals; the markup keeps the names.
    return str(th.get_attribute("textContent")).strip()


def _rows(driver: Any) -> list[dict[str, Any]]:
    """Each explained row: its ref, shown cell, signal cells by column name, score, feedback."""
    from selenium.webdriver.common.by import By

    section = driver.find_element(By.ID, "retrieval-explanation")
    header = [_label(th) for th in section.find_elements(By.CSS_SELECTOR, "thead th")]
    rows = []
    for tr in section.find_elements(By.CSS_SELECTOR, "tr.sw-explained"):
        cells = [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
        named = dict(zip(header, cells, strict=True))
        rows.append(
            {
                "ref": tr.get_attribute("data-ref"),
                "rank": int(named["rank"]),
                "shown": named["shown"],
                "signals": {h: named[h] for h in header[4:-2] if named[h] != "·"},
                "score": float(named["score"]),
                "feedback": named["feedback"],
            }
        )
    return rows


def test_it_shows_one_column_per_signal_and_the_policy_version(page: Page) -> None:
    from selenium.webdriver.common.by import By

    driver = page.driver
    assert driver.find_element(By.ID, "policy-version").text.startswith("slowave-hybrid-")
    columns = [_label(th) for th in driver.find_elements(By.CSS_SELECTOR, "th.sw-signal")]
    assert columns[:3] == ["topical", "coverage", "rrf"], columns
    legend = driver.find_element(By.CSS_SELECTOR, "#retrieval-explanation .sw-legend").text
    assert all(name in legend for name in columns)
    screenshot(driver, "retrieval_explanation.png")


def test_it_lists_every_catalogued_item_in_rank_order_with_contributions_summing_to_the_score(
    page: Page,
) -> None:
    rows = _rows(page.driver)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert [r["ref"] for r in rows[: len(page.seeded["shown"])]] == page.seeded["shown"]
    assert {r["shown"] for r in rows[: len(page.seeded["shown"])]} == {"page 1"}
    assert {r["shown"] for r in rows[len(page.seeded["shown"]) :]} == {"no"}  # never paged
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    for row in rows:
        total = sum(float(v) for v in row["signals"].values())
        # Each cell is shown to 3 places: the sum may drift by half a unit per cell.
        assert abs(total - row["score"]) <= 0.0005 * (len(row["signals"]) + 1), row
        assert {"topical", "coverage", "rrf"} <= set(row["signals"]), row
    assert rows[0]["feedback"] == "used / helped"
    assert {r["feedback"] for r in rows[1 : len(page.seeded["shown"])]} == {"irrelevant"}
