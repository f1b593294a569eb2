"""The served site in a real headless Chromium (Debian's chromium and chromium-driver, via Selenium):
search, open a product, pick options, buy, and read the same score the env pays for those actions.

With ``TOOLBENCH_SCREENSHOTS=<folder>`` it also saves a screenshot of each page type there (the
README's pictures in docs/webshop were made so)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import toolbench
from toolbench.core.transport import ServedApp
from toolbench.mock_services.webshop import create_demo_app

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (a dev dependency) drives the browser")
By = pytest.importorskip("selenium.webdriver.common.by").By
WebDriverWait = pytest.importorskip("selenium.webdriver.support.ui").WebDriverWait
exceptions = pytest.importorskip("selenium.common.exceptions")


@pytest.fixture(scope="module")
def browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("Chromium is not installed (Debian packages chromium and chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1200,900"):  # fmt: skip
        options.add_argument(flag)
    session = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver))
    session.set_page_load_timeout(30)
    yield session
    session.quit()


def navigate(browser, act) -> None:
    """Do ``act`` (a click or submit that loads a page) and wait until the new page replaced the old."""
    page = browser.find_element(By.TAG_NAME, "html")
    act()
    WebDriverWait(browser, 20).until(lambda _: _gone(page))


def _gone(element) -> bool:
    """Whether ``element``'s page was replaced. Selenium's ``staleness_of`` waits for a stale-element
    error; while the new page loads, Chromium may answer "does not belong to the document" instead."""
    try:
        element.is_enabled()
    except exceptions.StaleElementReferenceException:
        return True
    except exceptions.WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False


def shot(browser, name: str) -> None:
    folder = os.environ.get("TOOLBENCH_SCREENSHOTS")
    if folder and "expert" in os.environ.get("PYTEST_CURRENT_TEST", ""):
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / f"{name}.png"))


@pytest.mark.parametrize("choose_options", [True, False], ids=["expert", "no-options"])
def test_a_purchase_in_chromium_scores_what_the_env_pays(browser, choose_options):
    task = next(t for t in toolbench.load_tasks("WebShop") if len(t.get("goal")["goal_options"]) >= 2)
    actions = gym.make("toolbench/WebShop-v0").unwrapped.oracle_actions(task)
    if not choose_options:  # the same product bought without choosing its options: a partial score
        actions = [a for a in actions if a.startswith("search[") or a in ("click[next >]", "click[buy now]")
                   or a == f"click[{task.get('goal')['asin'].lower()}]"]  # fmt: skip
    env = gym.make("toolbench/WebShop-v0")
    env.reset(options={"task_id": task.id})
    for action in actions:
        *_, info = env.step(action)
    goal = task.get("goal")
    with ServedApp(create_demo_app()) as served:
        browser.get(f"{served.url}/fixed_{task.get('session')}")
        assert goal["instruction_text"] in browser.find_element(By.ID, "instruction-text").text
        shot(browser, "search")
        query = actions[0].removeprefix("search[").removesuffix("]")
        box = browser.find_element(By.ID, "search_input")
        box.send_keys(query)
        navigate(browser, box.submit)
        for action in actions[1:]:
            target = action.removeprefix("click[").removesuffix("]")
            if target == "next >":
                navigate(browser, browser.find_element(By.XPATH, "//button[text()='Next >']").click)
            elif target == goal["asin"].lower():
                shot(browser, "results")
                navigate(browser, browser.find_element(By.LINK_TEXT, goal["asin"]).click)
            elif target == "buy now":
                shot(browser, "item")
                navigate(browser, browser.find_element(By.XPATH, "//button[text()='Description']").click)
                shot(browser, "description")
                navigate(browser, browser.find_element(By.XPATH, "//button[text()='< Prev']").click)
                navigate(browser, browser.find_element(By.XPATH, "//button[text()='Buy Now']").click)
            else:  # an option: its label, as a person clicks it; the page reloads with the choice
                navigate(browser, browser.find_element(By.XPATH, f"//label[text()='{target}']").click)
                assert browser.find_element(By.XPATH, f"//input[@value='{target}']").is_selected()
        shot(browser, "done")
        assert browser.find_element(By.TAG_NAME, "h1").text == "Thank you for shopping with us!"
        assert float(browser.find_element(By.ID, "reward").text) == info["reward"]
        assert (info["reward"] == 1.0) == choose_options
