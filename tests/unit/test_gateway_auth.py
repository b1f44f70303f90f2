"""Who may use which route (services/gateway/auth.py), decided without a server."""

from __future__ import annotations

import pytest

from services.gateway import auth
from shared.settings import Settings

ADMIN = "admin-secret"
API = "api-secret"
SECRET = "webchat-secret"


def settings(**fields: object) -> Settings:
    return Settings(_env_file=None, **fields)  # type: ignore[call-arg]


def status(refusal: auth.Refusal | None) -> int:
    return 0 if refusal is None else refusal.status


def test_the_api_token_or_the_admin_token_posts_when_the_api_token_is_set() -> None:
    both = settings(api_token=API, admin_token=ADMIN)
    assert status(auth.channel_refusal(both, API, "c1")) == 0
    assert status(auth.channel_refusal(both, ADMIN, "c1")) == 0
    assert status(auth.channel_refusal(both, None, "c1")) == 401
    assert status(auth.channel_refusal(both, API + "x", "c1")) == 401
    only_api = settings(api_token=API)
    assert status(auth.channel_refusal(only_api, None, "c1")) == 401
    assert status(auth.channel_refusal(only_api, "", "c1")) == 401


def test_with_only_the_admin_token_set_posting_needs_it_and_with_none_it_is_open() -> None:
    only_admin = settings(admin_token=ADMIN)
    assert status(auth.channel_refusal(only_admin, None, "c1")) == 401
    assert status(auth.channel_refusal(only_admin, ADMIN, "c1")) == 0
    assert status(auth.channel_refusal(settings(), None, "c1")) == 0
    assert auth.startup_warnings(settings()) and not auth.startup_warnings(only_admin)


def test_a_web_chat_token_reaches_its_own_conversation_only() -> None:
    config = settings(admin_token=ADMIN, webchat_secret=SECRET)
    mine = auth.new_web_conversation()
    other = auth.new_web_conversation()
    token = auth.webchat_token(SECRET, mine)
    assert mine.startswith("web:") and mine != other
    assert status(auth.channel_refusal(config, token, mine)) == 0
    assert status(auth.channel_refusal(config, token, other)) == 403
    assert status(auth.admin_refusal(config, token)) == 403
    # Signed with another secret, or the secret removed: no longer valid.
    assert status(auth.channel_refusal(config, auth.webchat_token("other", mine), mine)) == 403
    without = settings(admin_token=ADMIN)
    assert status(auth.channel_refusal(without, token, mine)) == 403
    # Even on a gateway without any token, a web chat token is held to its conversation.
    assert status(auth.admin_refusal(settings(webchat_secret=SECRET), token)) == 403


def test_a_web_chat_token_never_names_a_conversation_it_was_not_minted_for() -> None:
    config = settings(webchat_secret=SECRET)
    # Only web: conversations take session tokens, even one computed with the real secret.
    forged = auth.webchat_token(SECRET, "wa:1:5511987654321")
    assert status(auth.channel_refusal(config, forged, "wa:1:5511987654321")) == 403


def test_the_http_channel_switched_off_answers_404_except_to_the_admin() -> None:
    config = settings(admin_token=ADMIN, api_token=API, webchat_secret=SECRET, http_channel=False)
    conversation = auth.new_web_conversation()
    session = auth.webchat_token(SECRET, conversation)
    for given in (None, API, session):
        refusal = auth.channel_refusal(config, given, conversation)
        assert refusal is not None and refusal.status == 404
        assert "ORQ_HTTP_CHANNEL" in refusal.reason
    assert auth.channel_refusal(config, ADMIN, conversation) is None
    assert status(auth.sessions_refusal(config)) == 404
    assert status(auth.channel_refusal(settings(http_channel=False), None, "c1")) == 404


def test_sessions_need_the_secret() -> None:
    refusal = auth.sessions_refusal(settings())
    assert refusal is not None and "ORQ_WEBCHAT_SECRET" in refusal.reason
    assert auth.sessions_refusal(settings(webchat_secret=SECRET)) is None


def test_no_http_write_reaches_a_whatsapp_conversation() -> None:
    refusal = auth.write_refusal("wa:123:5511987654321")
    assert refusal is not None and refusal.status == 403 and "agent-messages" in refusal.reason
    assert auth.write_refusal("web:abc") is None and auth.write_refusal("5511987654321") is None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("", False),
        ("::", False),
        ("192.168.1.10", False),
        ("gateway.example", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert auth.is_loopback(host) is loopback


def test_a_gateway_reachable_from_other_machines_needs_the_admin_token() -> None:
    problem = auth.exposure_problem(settings(), "0.0.0.0")
    assert problem is not None and "ORQ_ADMIN_TOKEN" in problem
    assert auth.exposure_problem(settings(api_token=API), "0.0.0.0") is not None
    assert auth.exposure_problem(settings(admin_token=ADMIN), "0.0.0.0") is None
    assert auth.exposure_problem(settings(), "127.0.0.1") is None
