"""Who may talk to the webhook: the GET verification handshake and X-Hub-Signature-256.

Meta signs the exact bytes it sends (``sha256=<lowercase hex HMAC-SHA256(app secret, body)>``),
so the check runs over the raw request body, before any JSON parsing, and compares in constant
time so the comparison leaks nothing about the expected digest.
"""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def expected_signature(body: bytes, secret: str) -> str:
    """The header value Meta would send for ``body``."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return PREFIX + digest


def signature_valid(body: bytes, secret: str, header: str | None) -> bool:
    """True when ``header`` is the signature of ``body`` under ``secret``."""
    if not header or not header.startswith(PREFIX):
        return False
    given = header[len(PREFIX) :].strip().lower().encode()
    return hmac.compare_digest(given, expected_signature(body, secret)[len(PREFIX) :].encode())


def handshake_challenge(
    mode: str | None, token: str | None, challenge: str | None, verify_token: str | None
) -> str | None:
    """The challenge to echo when the handshake is valid; None means refuse (403).

    Without a configured verify token nobody can subscribe, so a half-configured deployment
    cannot be hijacked by whoever calls the handshake first.
    """
    if not verify_token or mode != "subscribe" or token is None or not challenge:
        return None
    if not hmac.compare_digest(token.encode(), verify_token.encode()):
        return None
    return challenge
