"""The web chat (/chat) in a real headless Chromium, against the whole running system.

A fresh machine has no browser: the ``chromium`` fixture installs Debian's ``chromium`` and
``chromium-driver`` packages with apt-get when they are missing (the only download this suite
makes; nothing comes from a browser vendor's CDN). Selenium drives it through chromedriver. A
screenshot of the page is kept in ``docs/img/chat.png`` (the docs show it).
"""

from __future__ import annotations

import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import SCREENSHOTS, WAIT_S
from tests.system import System


def texts(driver: WebDriver, css: str) -> list[str]:
    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, css)]


def send(driver: WebDriver, text: str) -> None:
    box = driver.find_element(By.ID, "message")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def test_web_chat_shows_replies_state_and_explanation(system: System, browser: WebDriver) -> None:
    wait = WebDriverWait(browser, WAIT_S)
    browser.get(f"{system.base_url}/chat")
    wait.until(lambda d: d.find_element(By.ID, "cid").text.startswith("web-"))
    conversation = browser.find_element(By.ID, "cid").text

    send(browser, "quero agendar e onde fica a CT?")
    wait.until(lambda d: len(texts(d, ".bubble.in")) >= 1)
    first = " ".join(texts(browser, ".bubble.in"))
    assert "Rua das Palmeiras" in first and "nome" in first
    assert texts(browser, ".bubble.out")[0].startswith("quero agendar e onde fica a CT?")

    # The explanation of the reply's turn: the journal entries of that turn, in order.
    wait.until(lambda d: any("merge.complete" in t for t in texts(d, "#explain li")))
    explained = texts(browser, "#explain li")
    assert "gateway · turn.started" in explained[0]
    assert any("triage.decided" in t and "trial" in t and "faq" in t for t in explained)
    state = browser.find_element(By.ID, "state").text
    assert 'trial · "collect_client_info"' in state and 'triage · ["trial","faq"]' in state

    send(browser, "João")
    wait.until(lambda d: len(texts(d, ".bubble.in")) >= 2)
    assert "João" in texts(browser, ".bubble.in")[-1]
    wait.until(lambda d: "turno 2" in d.find_element(By.ID, "explain-turn").text)

    # Clicking an older reply shows that turn's explanation again.
    browser.find_elements(By.CSS_SELECTOR, ".bubble.in")[0].click()
    wait.until(lambda d: "turno 1" in d.find_element(By.ID, "explain-turn").text)
    assert any("faq.answered" in t for t in texts(browser, "#explain li"))

    SCREENSHOTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOTS / "chat.png"))

    # What the page showed is what the API holds.
    journal = system.journal(conversation)
    assert [e["messages"] for e in journal if e["event"] == "turn.started"] == [
        ["quero agendar e onde fica a CT?"],
        ["João"],
    ]
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_web_chat_files_and_unknown_assets(system: System) -> None:
    page = system.http.get("/chat")
    assert page.status_code == 200 and 'id="messages"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    script = system.http.get("/chat/chat.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert system.http.get("/chat/app.py").status_code == 404
    assert system.http.get("/chat/..%2Fapp.py").status_code == 404


def test_a_visitor_gets_a_session_and_the_admin_token_opens_the_panels(
    redis_url: str, unique_prefix: str, browser: WebDriver
) -> None:
    """With ORQ_WEBCHAT_SECRET the page needs no token; the panels need the admin's."""
    admin = "adm-" + uuid.uuid4().hex
    env = {"ORQ_ADMIN_TOKEN": admin, "ORQ_WEBCHAT_SECRET": uuid.uuid4().hex}
    with System.up(redis_url, unique_prefix, **env) as system:
        wait = WebDriverWait(browser, WAIT_S)
        browser.get(f"{system.base_url}/chat")
        wait.until(lambda d: d.find_element(By.ID, "cid").text.startswith("web:"))
        conversation = browser.find_element(By.ID, "cid").text

        send(browser, "onde fica a CT?")
        wait.until(lambda d: len(texts(d, ".bubble.in")) >= 1)
        assert "Rua das Palmeiras" in texts(browser, ".bubble.in")[0]
        assert "token de admin" in browser.find_element(By.ID, "state").text
        assert texts(browser, "#explain li") == []
        assert browser.find_element(By.ID, "token-box").is_displayed()

        # The admin token shows the same conversation with its state and explanation.
        box = browser.find_element(By.ID, "token")
        box.send_keys(admin)
        box.send_keys(Keys.TAB)
        wait.until(lambda d: any("merge.complete" in t for t in texts(d, "#explain li")))
        assert browser.find_element(By.ID, "cid").text == conversation
        assert "triage ·" in browser.find_element(By.ID, "state").text

        journal = system.journal(conversation)
        assert [e["messages"] for e in journal if e["event"] == "turn.started"] == [
            ["onde fica a CT?"]
        ]
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
