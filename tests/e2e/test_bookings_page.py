"""The week's trial classes page (/bookings) in a real headless Chromium, against the whole
running system: every class of the week with its seats and names, and attendance marked from
the page reaching the trial service's booking."""

from __future__ import annotations

from datetime import timedelta

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.journey import PACK, Chat, assert_said
from tests.support.browser import SCREENSHOTS, WAIT_S
from tests.system import System


def status_of(system: System, booking_id: str, day: str) -> str:
    classes = system.http.get("/v1/bookings", params={"from": day, "to": day}).json()["classes"]
    [found] = [b for c in classes for b in c["bookings"] if b["booking_id"] == booking_id]
    return str(found["status"])


def test_staff_see_the_week_and_mark_attendance(system: System, browser: WebDriver) -> None:
    chat = Chat(system, "page", "2026-11-26T10:00:00-03:00")
    chat.say(
        "quero agendar uma aula experimental: sou a Fernanda, 31 anos, iniciante, 01/12 às 19h"
    )
    code = assert_said(chat.say("sim", after=timedelta(minutes=1)), "trial_booked")["codigo"]

    # The page redraws the week while a mark is applied: an element read mid-redraw is stale.
    wait = WebDriverWait(browser, WAIT_S, ignored_exceptions=[StaleElementReferenceException])
    browser.get(f"{system.base_url}/bookings?week=2026-12-01")
    item = f'li[data-id="{code}"]'
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, item))
    assert "30/11 a 06/12" in browser.find_element(By.ID, "week").text
    # This gateway has no admin token: the page needs no login.
    assert not browser.find_element(By.ID, "login").is_displayed()

    cards = browser.find_elements(By.CSS_SELECTOR, "article.class")
    times = PACK.sections["trial"]["times"]
    seats = PACK.sections["trial"]["seats_per_slot"]
    assert [(c.get_attribute("data-date"), c.get_attribute("data-time")) for c in cards] == [
        ("2026-12-01", t) for t in times
    ]
    booked = browser.find_element(By.CSS_SELECTOR, 'article.class[data-time="19:00"]')
    assert f"{seats - 1} de {seats} vagas livres" in booked.text
    row = booked.find_element(By.CSS_SELECTOR, item)
    assert "Fernanda" in row.text and "31 anos" in row.text and "marcada" in row.text
    empty = browser.find_element(By.CSS_SELECTOR, 'article.class[data-time="07:00"]')
    assert "Ninguém marcado." in empty.text

    browser.find_element(By.CSS_SELECTOR, f"{item} button.attended").click()
    wait.until(lambda d: "veio" in d.find_element(By.CSS_SELECTOR, f"{item} .status").text)
    assert status_of(system, code, "2026-12-01") == "attended"
    assert browser.find_element(By.CSS_SELECTOR, f"{item} button.attended").get_attribute(
        "disabled"
    )

    browser.find_element(By.CSS_SELECTOR, f"{item} button.no-show").click()
    wait.until(lambda d: "faltou" in d.find_element(By.CSS_SELECTOR, f"{item} .status").text)
    assert status_of(system, code, "2026-12-01") == "no_show"
    assert [e for e in chat.journal("booking.attendance")][-1]["status"] == "no_show"

    SCREENSHOTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOTS / "bookings.png"))
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_bookings_page_files_and_unknown_assets(system: System) -> None:
    page = system.http.get("/bookings")
    assert page.status_code == 200 and 'id="classes"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    script = system.http.get("/bookings/bookings.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert system.http.get("/bookings/inbox.js").status_code == 404
    assert system.http.get("/bookings/bookings.py").status_code == 404


def test_with_an_admin_token_the_page_asks_for_it(
    redis_url: str, prefix: str, browser: WebDriver
) -> None:
    token = "bookings-page-admin"
    with System.up(redis_url, f"{prefix}bookings-page:", ORQ_ADMIN_TOKEN=token) as secured:
        wait = WebDriverWait(browser, WAIT_S)
        browser.get(f"{secured.base_url}/bookings?week=2026-12-08")
        wait.until(lambda d: d.find_element(By.ID, "login").is_displayed())
        assert not browser.find_element(By.ID, "app").is_displayed()
        browser.find_element(By.ID, "token").send_keys("wrong")
        browser.find_element(By.CSS_SELECTOR, "#login button").click()
        wait.until(lambda d: "inválido" in d.find_element(By.ID, "login-error").text)
        browser.find_element(By.ID, "token").clear()
        browser.find_element(By.ID, "token").send_keys(token)
        browser.find_element(By.CSS_SELECTOR, "#login button").click()
        wait.until(lambda d: d.find_element(By.ID, "app").is_displayed())
        assert not browser.find_element(By.ID, "login").is_displayed()
        assert "07/12 a 13/12" in browser.find_element(By.ID, "week").text
        assert len(browser.find_elements(By.CSS_SELECTOR, "article.class")) == len(
            PACK.sections["trial"]["times"]
        )
        errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        # Refused twice: the first load without a token, then the wrong one.
        assert len(errors) == 2 and all("status of 401" in m for m in errors), errors
