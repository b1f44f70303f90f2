"""The tenants file (``ORQ_TENANTS``): what ``parse_tenants`` accepts, and how it names what it
refuses.

A deployment that serves many businesses trusts this file for who may read whose
conversations, so a mistake in it (two tenants with one token, a token anyone could guess, an
id that could not be part of a key) must stop the deployment with every problem named by
tenant and field, before a request is served. A tenant whose *pack* does not load is not such
a mistake: it is disabled on its own (``tenants_of``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from services.gateway.channels.registry import SECTIONS
from shared.settings import Settings
from shared.tenants import (
    SEPARATOR,
    TenantsError,
    parse_tenants,
    qualified,
    read_tenants,
    tenants_of,
)

SOURCE = "/etc/orquestra/tenants.yaml"
TOKEN_A = "a-admin-0123456789abcdef"
TOKEN_B = "b-admin-0123456789abcdef"
API_A = "a-api-0123456789abcdef"


def tenant(tid: str, admin: str, **more: object) -> dict[str, object]:
    return {"id": tid, "pack": "ctsmash", "admin_token": admin, **more}


def dump(*tenants: dict[str, object]) -> str:
    return yaml.safe_dump({"tenants": list(tenants)})


def refused(text: str, operator_token: str | None = None) -> str:
    """The message of the ``TenantsError`` the text must raise."""
    with pytest.raises(TenantsError) as raised:
        parse_tenants(text, SOURCE, operator_token, SECTIONS)
    return str(raised.value)


def test_a_full_file_gives_each_tenant_its_pack_tokens_and_numbers() -> None:
    """Every field the tenants file documents (docs/operations/tenants.md) is read, in order."""
    text = dump(
        tenant(
            "ctsmash",
            TOKEN_A,
            api_token=API_A,
            whatsapp={
                "phone_number_ids": ["1065403522"],
                "app_secret": "s3cret",
                "access_token": "EAAG-token",
            },
        ),
        {"id": "revoluna", "pack": "staffing", "admin_token": TOKEN_B},
    )
    first, second = parse_tenants(text, SOURCE, None, SECTIONS)
    assert (first.id, first.pack, first.admin_token, first.api_token) == (
        "ctsmash",
        "ctsmash",
        TOKEN_A,
        API_A,
    )
    whatsapp = first.channels["whatsapp"]
    assert whatsapp.phone_number_ids == ["1065403522"]
    assert (whatsapp.app_secret, whatsapp.access_token) == ("s3cret", "EAAG-token")
    assert (second.id, second.pack, second.api_token, second.channels) == (
        "revoluna",
        "staffing",
        None,
        {},
    )


def test_a_process_reading_no_channel_keeps_the_sections_unread() -> None:
    """A worker passes no sections: a channel's section is kept as the file has it (the
    gateway, which reads it, validates it), and a field that is no mapping is still refused."""
    text = dump(tenant("ctsmash", TOKEN_A, whatsapp={"phone_number_ids": []}))
    [parsed] = parse_tenants(text, SOURCE, None)
    assert parsed.channels == {"whatsapp": {"phone_number_ids": []}}
    with pytest.raises(TenantsError, match="tenant 'ctsmash' api_tokn: unknown field"):
        parse_tenants(dump(tenant("ctsmash", TOKEN_A, api_tokn=API_A)), SOURCE, None)


def test_a_section_of_no_registered_channel_is_refused() -> None:
    message = refused(dump(tenant("ctsmash", TOKEN_A, telegram={"token": "x"})))
    assert "tenant 'ctsmash' telegram: unknown field" in message


@pytest.mark.parametrize("tid", ["a", "ct-smash-2", "x" * 32, "0-9"])
def test_ids_of_lowercase_letters_digits_and_dashes_up_to_32_are_valid(tid: str) -> None:
    [parsed] = parse_tenants(dump(tenant(tid, TOKEN_A)), SOURCE, None)
    assert parsed.id == tid


@pytest.mark.parametrize("tid", ["Bad Id", "CTSMASH", "ct_smash", "a~b", "", "x" * 33, "ct.smash"])
def test_an_id_that_could_not_be_part_of_a_key_is_refused(tid: str) -> None:
    """The id goes into every Redis key of the tenant: ``~`` and spaces could make two
    tenants' keys meet, so only ``[a-z0-9-]{1,32}`` is allowed."""
    message = refused(dump(tenant(tid, TOKEN_A)))
    assert message.startswith(SOURCE)
    assert f"tenant {tid!r} id" in message


def test_invalid_yaml_names_the_file() -> None:
    message = refused("tenants:\n  - id: [unclosed\n")
    assert message.startswith(f"{SOURCE}: invalid YAML")


@pytest.mark.parametrize(
    "text",
    ["", "tenants: []\n", "tenants:\n", "- id: a\n", "businesses: []\n"],
    ids=["empty", "no-tenants", "null-tenants", "a-list", "another-key"],
)
def test_a_file_without_a_list_of_tenants_is_refused(text: str) -> None:
    """An empty or misnamed file would otherwise start a deployment that serves nobody."""
    assert refused(text).startswith(SOURCE)


@pytest.mark.parametrize("field", ["id", "pack", "admin_token"])
def test_a_missing_required_field_is_named(field: str) -> None:
    row = tenant("ctsmash", TOKEN_A)
    del row[field]
    message = refused(dump(row))
    # Without an id the tenant is named by its place in the list.
    who = "tenant #1" if field == "id" else "tenant 'ctsmash'"
    assert f"{who} {field}" in message


def test_an_unknown_field_is_refused_not_ignored() -> None:
    """A misspelt ``api_tokn`` silently ignored would leave the tenant without its token."""
    message = refused(dump(tenant("ctsmash", TOKEN_A, api_tokn=API_A)))
    assert "tenant 'ctsmash' api_tokn" in message


@pytest.mark.parametrize("field", ["admin_token", "api_token"])
def test_a_token_shorter_than_16_characters_is_refused(field: str) -> None:
    """A short token can be guessed; the message names the tenant and the field."""
    row = tenant("ctsmash", TOKEN_A)
    row[field] = "x" * 15
    message = refused(dump(row))
    assert f"tenant 'ctsmash' {field}" in message
    assert "16" in message
    # Exactly 16 is enough.
    row[field] = "x" * 16
    assert parse_tenants(dump(row), SOURCE, None)[0].id == "ctsmash"


def test_a_whatsapp_section_needs_at_least_one_number() -> None:
    message = refused(dump(tenant("ctsmash", TOKEN_A, whatsapp={"phone_number_ids": []})))
    assert "tenant 'ctsmash' whatsapp.phone_number_ids" in message


def test_a_duplicate_id_is_refused() -> None:
    message = refused(dump(tenant("ctsmash", TOKEN_A), tenant("ctsmash", TOKEN_B)))
    assert "tenant 'ctsmash' is listed twice" in message


@pytest.mark.parametrize("field", ["admin_token", "api_token"])
def test_a_token_of_two_tenants_is_refused(field: str) -> None:
    """The token picks the tenant: one token of two tenants would pick either."""
    second = tenant("revoluna", TOKEN_B)
    second[field] = TOKEN_A
    message = refused(dump(tenant("ctsmash", TOKEN_A), second))
    assert f"tenant 'revoluna': {field} is also the token of tenant 'ctsmash'" in message


def test_a_tenants_api_token_must_differ_from_its_admin_token() -> None:
    """Otherwise the client holding the API token could use every admin route."""
    message = refused(dump(tenant("ctsmash", TOKEN_A, api_token=TOKEN_A)))
    assert "tenant 'ctsmash': api_token is also the token of tenant 'ctsmash'" in message


def test_a_tenant_token_equal_to_the_operators_is_refused() -> None:
    """The operator's token opens every tenant; a tenant holding it could too."""
    message = refused(dump(tenant("ctsmash", TOKEN_A)), operator_token=TOKEN_A)
    assert "tenant 'ctsmash': admin_token" in message
    assert "ORQ_ADMIN_TOKEN" in message


def test_a_whatsapp_number_of_two_tenants_is_refused() -> None:
    """An inbound webhook is routed by its number: one number, one tenant."""
    number = {"phone_number_ids": ["1065403522"]}
    message = refused(
        dump(
            tenant("ctsmash", TOKEN_A, whatsapp=number),
            tenant("revoluna", TOKEN_B, whatsapp=number),
        )
    )
    assert "tenant 'revoluna': WhatsApp number 1065403522" in message
    assert "'ctsmash'" in message


def test_every_problem_is_reported_at_once() -> None:
    """Fixing a file one error per start would take as many restarts as errors."""
    message = refused(dump(tenant("Bad Id", "short"), tenant("revoluna", TOKEN_B, api_token="x")))
    assert "tenant 'Bad Id' id" in message
    assert "tenant 'Bad Id' admin_token" in message
    assert "tenant 'revoluna' api_token" in message


def test_read_tenants_is_none_without_orq_tenants() -> None:
    """Without the file a deployment serves one business from its settings, as before."""
    assert read_tenants(Settings(tenants=None)) is None
    [only] = tenants_of(Settings(tenants=None, pack="staffing"))
    assert (only.id, only.problem) == ("", None)
    assert only.pack is not None and only.pack.name == "staffing"


def test_a_missing_file_names_orq_tenants_and_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(TenantsError, match=f"ORQ_TENANTS={missing}"):
        read_tenants(Settings(tenants=str(missing)))


def test_read_tenants_checks_tokens_against_the_operators(tmp_path: Path) -> None:
    path = tmp_path / "tenants.yaml"
    path.write_text(dump(tenant("ctsmash", TOKEN_A)), encoding="utf-8")
    assert [t.id for t in read_tenants(Settings(tenants=str(path), admin_token=None)) or []] == [
        "ctsmash"
    ]
    with pytest.raises(TenantsError, match=str(path)):
        read_tenants(Settings(tenants=str(path), admin_token=TOKEN_A))


def test_a_tenant_whose_pack_does_not_load_is_disabled_and_the_others_kept(
    tmp_path: Path,
) -> None:
    """A broken pack is that tenant's problem, not the deployment's."""
    broken = tmp_path / "broken-pack"
    broken.mkdir()
    (broken / "business.yaml").write_text("business: [unclosed\n", encoding="utf-8")
    path = tmp_path / "tenants.yaml"
    path.write_text(
        dump(
            tenant("ctsmash", TOKEN_A, api_token=API_A),
            {"id": "broken", "pack": str(broken), "admin_token": TOKEN_B},
        ),
        encoding="utf-8",
    )
    served, disabled = tenants_of(Settings(tenants=str(path), admin_token=None))
    assert served.id == "ctsmash" and served.problem is None
    assert served.pack is not None and served.pack.name == "ctsmash"
    # Each tenant's settings carry its own pack and tokens.
    assert (served.settings.admin_token, served.settings.api_token) == (TOKEN_A, API_A)
    assert disabled.id == "broken" and disabled.pack is None
    assert disabled.problem is not None and "disabled" in disabled.problem
    assert "'broken'" in disabled.problem
    assert disabled.settings.admin_token == TOKEN_B


def test_a_conversation_id_is_qualified_by_its_tenant_only_when_there_is_one() -> None:
    """The single business keeps today's keys (no migration); tenants never share one."""
    assert qualified("", "c1") == "c1"
    assert qualified("ctsmash", "c1") == f"ctsmash{SEPARATOR}c1"
    assert qualified("ctsmash", "c1") != qualified("revoluna", "c1")
