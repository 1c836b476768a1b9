"""A person at the control panel, in real headless Chromium against a live `slowave up`.

One server, one `mcp_serve` (the agent) and one browser for the module, all on one database:
the agent builds memory, the person finds it, reads its evidence, suppresses it, and the agent's
next recall no longer sees it; restoring brings it back.
"""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.admin.live import CHROMEDRIVER, CHROMIUM, chromium, live_server, screenshot
from tests.cli.runner import slowave
from tests.e2e_support import McpClient, spawn_server

pytestmark = pytest.mark.skipif(
    not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)),
    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
)
SCOPE = "project:control-panel"
TARGET = "Production API tokens rotate every 90 days; the rotation job runs on the first Monday."
OTHERS = [
    "The billing database runs PostgreSQL 16 on a dedicated host.",
    "Deploys to staging need the migrations applied first.",
]
QUESTION = "How often do the production API tokens rotate?"
PASSWORD = "correct-horse-battery-9"


@dataclass
class World:
    base: str
    mcp: McpClient
    driver: Any
    memory_id: str


def _ok(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["ok"] is True, envelope
    return envelope["data"]


def _seed(mcp: McpClient) -> str:
    """An agent's first task: remember three facts, then a task that uses the target."""
    first = _ok(
        mcp.call(
            "slowave_activate",
            {"task": "Set up the project notes", "initial_goal": "record facts", "scope": SCOPE},
        )
    )
    stored = _ok(
        mcp.call(
            "slowave_remember",
            {
                "scope": SCOPE,
                "session_id": first["session_id"],
                "memories": [{"content": c, "type": "fact"} for c in [TARGET, *OTHERS]],
            },
        )
    )
    memory_id = stored["results"][0]["data"]["memory_id"]
    _commit(mcp, first["session_id"])
    second = _ok(
        mcp.call(
            "slowave_activate", {"task": QUESTION, "initial_goal": "answer it", "scope": SCOPE}
        )
    )
    assert memory_id in [m["memory_id"] for m in second["memories"]], second
    _ok(
        mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": second["retrieval_id"],
                "coverage": "complete",
                "memory_feedback": [
                    {
                        "memory_id": m["memory_id"],
                        "assessment": "used" if m["memory_id"] == memory_id else "irrelevant",
                    }
                    for m in second["memories"]
                ],
            },
        )
    )
    _commit(mcp, second["session_id"])
    return memory_id


def _commit(mcp: McpClient, session_id: str) -> None:
    _ok(
        mcp.call(
            "slowave_commit",
            {
                "session_id": session_id,
                "final_goal": "done",
                "outcome": "success",
                "outcome_summary": "Finished.",
                "verification": {"status": "verified", "summary": "checked"},
            },
        )
    )


def _recalled(mcp: McpClient) -> list[str]:
    """Memory ids an agent sees now for the question, from activate and from recall."""
    opened = _ok(
        mcp.call(
            "slowave_activate", {"task": QUESTION, "initial_goal": "answer it", "scope": SCOPE}
        )
    )
    recalled = _ok(
        mcp.call(
            "slowave_recall",
            {"session_id": opened["session_id"], "scope": SCOPE, "query": QUESTION},
        )
    )
    return [m["memory_id"] for m in [*opened["memories"], *recalled["memories"]]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home: Path = tmp_path_factory.mktemp("panel-home")
    with live_server(home) as base:
        made = slowave(
            home, "createadmin", "--username", "ada", "--password-stdin", stdin=PASSWORD + "\n"
        )
        assert made.code == 0, made.err
        with spawn_server(home=home) as mcp, chromium() as driver:
            yield World(base, mcp, driver, _seed(mcp))


def _login(world: World) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = world.driver
    driver.get(f"{world.base}/admin/")
    assert "/admin/login/" in driver.current_url
    driver.find_element(By.NAME, "username").send_keys("ada")
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # The click only starts the navigation: read the page once the dashboard has arrived.
    WebDriverWait(driver, 15).until(lambda d: "Memory held for your agents" in d.page_source)


def _open_memory_by_search(world: World) -> None:
    from selenium.webdriver.common.by import By

    driver = world.driver
    driver.get(f"{world.base}/admin/memory/memory/")
    box = driver.find_element(By.ID, "searchbar")
    box.send_keys("rotation job")
    box.submit()
    rows = driver.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    assert len(rows) == 1, driver.page_source
    rows[0].find_element(By.LINK_TEXT, world.memory_id).click()


def _message(driver: Any, expected: str, timeout: float = 15.0) -> str:
    """The page's messages once `expected` shows: a click navigates, and until the new page has
    loaded the old one's elements go stale under the reader."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def read(_: Any) -> str | bool:
        text = " ".join(
            el.text for el in driver.find_elements(By.CSS_SELECTOR, "ul.messagelist li")
        )
        return text if expected in text else False

    try:
        return WebDriverWait(
            driver, timeout, ignored_exceptions=(StaleElementReferenceException,)
        ).until(read)
    except TimeoutException:
        return " ".join(
            el.text for el in driver.find_elements(By.CSS_SELECTOR, "ul.messagelist li")
        )


def test_it_finds_suppresses_and_restores_a_memory_seen_by_agents(world: World) -> None:
    from selenium.webdriver.common.by import By

    driver = world.driver
    _login(world)
    _open_memory_by_search(world)
    assert TARGET in driver.find_element(By.ID, "memory-claim").text
    chain = driver.find_element(By.ID, "evidence-chain").text
    assert "source_event" in chain and "source_episode" in chain  # where it came from
    exposures = driver.find_element(By.ID, "exposures").text
    assert (
        "used / helped" in exposures and "activate" in exposures
    )  # shown, and what the agent said
    assert "stage 0" in driver.find_element(By.ID, "generalization").text
    screenshot(driver, "memory_page.png")

    assert world.memory_id in _recalled(world.mcp)
    driver.find_element(By.ID, "suppress-button").click()
    driver.find_element(By.ID, "id_reason").send_keys(
        "Rotation moved to 30 days; this misleads agents."
    )
    driver.find_element(By.ID, "confirm-suppress").click()
    assert f"Suppressed {world.memory_id}" in _message(driver, f"Suppressed {world.memory_id}")
    assert "forgotten" in driver.find_element(By.CSS_SELECTOR, ".sw-facts").text
    assert "Rotation moved to 30 days" in driver.find_element(By.ID, "forget-log").text
    assert world.memory_id not in _recalled(world.mcp)

    driver.find_element(By.ID, "restore-button").click()
    assert f"Restored {world.memory_id} to active" in _message(
        driver, f"Restored {world.memory_id}"
    )
    assert world.memory_id in _recalled(world.mcp)


def test_it_rejects_a_suppression_without_a_reason(world: World) -> None:
    from selenium.webdriver.common.by import By

    driver = world.driver
    driver.get(f"{world.base}/admin/memory/memory/{world.memory_id[4:]}/forget/")
    driver.execute_script("document.getElementById('id_reason').removeAttribute('required')")
    driver.find_element(By.ID, "confirm-suppress").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 15).until(lambda d: "This field is required" in d.page_source)
    assert world.memory_id in _recalled(world.mcp)


def test_it_renders_the_dashboard_charts(world: World) -> None:
    from selenium.webdriver.common.by import By

    driver = world.driver
    driver.get(f"{world.base}/admin/dashboard/")
    charts = driver.find_elements(By.CSS_SELECTOR, "svg.sw-chart")
    assert len(charts) >= 7
    assert all(chart.size["width"] > 200 and chart.size["height"] > 40 for chart in charts)
    drawn = [
        bar
        for bar in driver.find_elements(By.CSS_SELECTOR, "#activity-charts rect.sw-bar")
        if float(bar.get_attribute("height")) > 0
    ]
    assert drawn, "today's sessions, remembers, retrievals and feedback should show as bars"
    assert "wal" in driver.find_element(By.ID, "db-health").text
    # The admin's own stylesheet is served by the app: the page is styled with no network.
    assert (
        driver.execute_script("return getComputedStyle(document.getElementById('header')).display")
        == "flex"
    )
    screenshot(driver, "dashboard.png")


def test_it_serves_static_files_and_keeps_anonymous_people_out(world: World) -> None:
    with urllib.request.urlopen(f"{world.base}/static/admin/css/base.css") as reply:
        assert reply.status == 200 and b"body" in reply.read()
    opener = urllib.request.build_opener(_NoRedirect)
    for path in ("/admin/memory/memory/", "/admin/dashboard/", "/admin/memory/memory/1/forget/"):
        with pytest.raises(urllib.error.HTTPError) as caught:
            opener.open(f"{world.base}{path}")
        assert caught.value.code == 302 and "/admin/login/" in caught.value.headers["Location"]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _open_from_list(world: World, model: str, public_id: str) -> None:
    """Open a record the way a person does: from its list, by the link the admin draws (which
    quotes the id's `_` as `_5F`)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = world.driver
    driver.get(f"{world.base}/admin/memory/{model}/")
    link = driver.find_element(By.LINK_TEXT, public_id)
    assert "_5F" in link.get_attribute("href")
    link.click()
    WebDriverWait(driver, 15).until(lambda d: "/change/" in d.current_url)


def _rows(driver: Any, section: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [
        row.text for row in driver.find_elements(By.CSS_SELECTOR, f"#{section} tbody tr td")
    ]


def test_it_opens_retrievals_sessions_and_procedures_from_the_admin_lists(world: World) -> None:
    from selenium.webdriver.common.by import By

    driver = world.driver
    driver.get(f"{world.base}/admin/")
    if "/admin/login/" in driver.current_url:  # run alone; otherwise an earlier test logged in
        _login(world)
    opened = _ok(
        world.mcp.call(
            "slowave_activate",
            {"task": "Rotate the staging tokens", "initial_goal": "rotate them", "scope": SCOPE},
        )
    )
    session_id = opened["session_id"]
    assert opened["memories"], opened
    _ok(
        world.mcp.call(
            "slowave_feedback",
            {
                "retrieval_id": opened["retrieval_id"],
                "coverage": "complete",
                "memory_feedback": [
                    {"memory_id": m["memory_id"], "assessment": "irrelevant"}
                    for m in opened["memories"]
                ],
            },
        )
    )
    _ok(
        world.mcp.call(
            "slowave_commit",
            {
                "session_id": session_id,
                "final_goal": "rotate them",
                "outcome": "success",
                "outcome_summary": "Rotated.",
                "verification": {"status": "verified", "summary": "checked"},
                "procedure": {
                    "summary": "Rotate API tokens with the rotation job",
                    "steps": [{"summary": "run the rotation job"}, {"summary": "check the log"}],
                },
            },
        )
    )
    procedure_id = f"proc_{session_id}"

    _open_from_list(world, "retrieval", opened["retrieval_id"])
    exposed = " ".join(_rows(driver, "retrieval-exposures"))
    assert opened["memories"][0]["memory_id"] in exposed and "Nothing was exposed" not in exposed

    _open_from_list(world, "session", session_id)
    events = " ".join(_rows(driver, "session-events"))
    assert "Rotate the staging tokens" in events or "Rotated." in events, events

    _open_from_list(world, "procedure", procedure_id)
    assert "run the rotation job" in driver.page_source
    driver.find_element(By.ID, "suppress-button").click()
    driver.find_element(By.ID, "id_reason").send_keys("The rotation job was retired.")
    driver.find_element(By.ID, "confirm-suppress").click()
    assert f"Suppressed {procedure_id}" in _message(driver, f"Suppressed {procedure_id}")
    driver.find_element(By.ID, "restore-button").click()
    assert f"Restored {procedure_id} to active" in _message(driver, f"Restored {procedure_id}")
    screenshot(driver, "procedure_page.png")
