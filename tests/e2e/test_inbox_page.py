"""The staff inbox page (/inbox) in a real headless Chromium, against the whole system: the
customer asks for a person, the conversation appears as pending, staff answer from the page,
the customer receives it, staff hand back and the bot answers the next message in context."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import SCREENSHOTS, WAIT_S
from tests.system import System

TOKEN = "inbox-page-admin"


@pytest.fixture(scope="module")
def staffed(redis_url: str, prefix: str) -> Iterator[System]:
    with System.up(redis_url, f"{prefix}inbox-page:", ORQ_ADMIN_TOKEN=TOKEN) as system:
        system.http.headers["authorization"] = f"Bearer {TOKEN}"
        yield system


def texts(driver: WebDriver, css: str) -> list[str]:
    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, css)]


def test_staff_answer_from_the_inbox_page(staffed: System, browser: WebDriver) -> None:
    wait = WebDriverWait(browser, WAIT_S)
    cid = f"page-{uuid.uuid4().hex[:8]}"
    opened = staffed.say(cid, "oi, me chamo Marina e quero agendar uma aula experimental")
    asked = staffed.say(cid, "quero falar com um atendente", after=opened["cursor"])

    browser.get(f"{staffed.base_url}/inbox")
    wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
    browser.find_element(By.ID, "token").send_keys("wrong")
    browser.find_element(By.ID, "agent").send_keys("maria")
    browser.find_element(By.CSS_SELECTOR, "#login button").click()
    wait.until(lambda d: "inválido" in d.find_element(By.ID, "login-error").text)
    browser.find_element(By.ID, "token").clear()
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    browser.find_element(By.CSS_SELECTOR, "#login button").click()

    # Pending conversations first, with how long they have waited.
    item = f'#conversations li[data-id="{cid}"]'
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, item))
    row = browser.find_element(By.CSS_SELECTOR, item).text
    assert "Marina" in row and "aguardando há" in row
    browser.find_element(By.CSS_SELECTOR, item).click()
    wait.until(lambda d: len(texts(d, "#messages .msg")) >= 4)
    assert "Marina" in browser.find_element(By.ID, "summary").text
    assert texts(browser, "#messages .msg.customer")[0].endswith(
        "oi, me chamo Marina e quero agendar uma aula experimental"
    )

    box = browser.find_element(By.ID, "text")
    box.send_keys("Oi Marina! Aqui é a Maria, posso te ajudar com o horário.")
    browser.find_element(By.ID, "send").click()
    received = staffed.next_reply(cid, after=asked["cursor"])
    assert received["author"] == "agent" and received["agent"] == "maria"
    assert received["text"] == "Oi Marina! Aqui é a Maria, posso te ajudar com o horário."
    wait.until(lambda d: texts(d, "#messages .msg.agent"))
    wait.until(lambda d: "com atendente" in d.find_element(By.ID, "owner").text)

    # The customer's answer appears without a reload.
    assert staffed.post(cid, "que ótimo, obrigada!").status_code == 202
    wait.until(lambda d: any("que ótimo, obrigada!" in t for t in texts(d, "#messages .msg")))
    browser.find_element(By.CSS_SELECTOR, '.filters button[data-owner=""]').click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, item))
    SCREENSHOTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOTS / "inbox.png"))

    browser.find_element(By.ID, "back").click()
    wait.until(lambda d: "com o bot" in d.find_element(By.ID, "owner").text)
    resumed = staffed.say(cid, "tenho 29 anos", after=received["cursor"])
    assert resumed["author"] == "bot"
    trial = staffed.conversation(cid)["trial"]
    assert trial["nome"] == "Marina" and trial["idade"] == 29
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    refused = [m for m in errors if "status of 401" in m]
    assert len(refused) == 1, "only the wrong token was refused"
    assert [m for m in errors if m not in refused] == []


def test_inbox_files_and_unknown_assets(staffed: System) -> None:
    page = staffed.http.get("/inbox")
    assert page.status_code == 200 and 'id="conversations"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert staffed.http.get("/inbox/inbox.js").headers["content-type"].startswith("text/javascript")
    assert staffed.http.get("/inbox/chat.js").status_code == 404
    assert staffed.http.get("/inbox/app.py").status_code == 404
