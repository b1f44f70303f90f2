"""X-Hub-Signature-256 and the verification handshake, against the corpus' known cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.gateway.whatsapp.signature import (
    expected_signature,
    handshake_challenge,
    signature_valid,
)

CORPUS = Path("/work/shared/conformance/whatsapp")
TRIPLES = json.loads((CORPUS / "cloud_signature_triples.json").read_text())["triples"]


def body_of(triple: dict) -> bytes:
    name = triple.get("body_file") or triple.get("body_bytes_actually_signed_file")
    return (CORPUS / name).read_bytes() if name else triple["body"].encode()


@pytest.mark.parametrize("triple", TRIPLES, ids=lambda t: t["id"])
def test_known_triples(triple: dict) -> None:
    body = body_of(triple)
    accepted = signature_valid(body, triple["app_secret"], triple["x_hub_signature_256"])
    assert accepted is (triple["id"] != "negative_wrong_signature")


def test_the_signed_bytes_are_the_raw_body_not_the_decoded_text() -> None:
    wajs = next(t for t in TRIPLES if t["id"] == "whatsapp_api_js_unicode_escaped")
    decoded = wajs["body_as_unicode_text"].encode()
    assert not signature_valid(decoded, wajs["app_secret"], wajs["x_hub_signature_256"])
    contrast = wajs["hmac_of_plain_utf8_of_unicode_text_for_contrast"]
    assert not signature_valid(body_of(wajs), wajs["app_secret"], contrast)
    assert len(body_of(TRIPLES[0])) == TRIPLES[0]["body_length_bytes"]


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256=",
        "sha1=54edfa1d",
        "54edfa1d7259e0eb13c677cc7d73d1b5c86cfa12433d19156e058ab9251bc441",
    ],
)
def test_missing_or_malformed_headers_fail(header: str | None) -> None:
    pywa = TRIPLES[0]
    assert not signature_valid(body_of(pywa), pywa["app_secret"], header)


def test_one_changed_byte_or_another_secret_fails() -> None:
    pywa = TRIPLES[0]
    body = body_of(pywa)
    assert signature_valid(
        body, pywa["app_secret"], pywa["x_hub_signature_256"].upper().replace("SHA256=", "sha256=")
    )
    assert not signature_valid(body + b" ", pywa["app_secret"], pywa["x_hub_signature_256"])
    assert not signature_valid(body, "another-secret", pywa["x_hub_signature_256"])
    assert expected_signature(body, pywa["app_secret"]) == pywa["x_hub_signature_256"]


HANDSHAKE = json.loads((CORPUS / "cloud_verify_handshake.json").read_text())


def test_meta_docs_sample_echoes_the_challenge() -> None:
    sample = HANDSHAKE["meta_docs_sample"]
    query = sample["request"]["query"]
    echo = handshake_challenge(
        query["hub.mode"], query["hub.verify_token"], query["hub.challenge"], "meatyhamhock"
    )
    assert echo == sample["expected_when_token_matches"]["body"]


@pytest.mark.parametrize("case", HANDSHAKE["whatsapp_api_js_test"]["cases"], ids=str)
def test_whatsapp_api_js_cases(case: dict) -> None:
    token = HANDSHAKE["whatsapp_api_js_test"]["configured_verify_token"]
    q = case["query"]
    echo = handshake_challenge(
        q.get("hub.mode"), q.get("hub.verify_token"), q.get("hub.challenge"), token
    )
    assert echo == ("challenge" if case["expected"] == "return 'challenge'" else None)


@pytest.mark.parametrize("configured", [None, ""])
def test_without_a_verify_token_nobody_subscribes(configured: str | None) -> None:
    assert handshake_challenge("subscribe", "", "123", configured) is None
    assert handshake_challenge("subscribe", "anything", "123", configured) is None
