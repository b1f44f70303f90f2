"""``X-Chatwoot-Signature``: ``sha256=<hex HMAC-SHA256(secret, "{X-Chatwoot-Timestamp}.{raw
body}")>``, over the exact bytes Chatwoot sent, compared in constant time (pure).

The timestamp is part of what is signed, so a captured delivery cannot be replayed later with
another time; one older than the allowed age is refused as well.
"""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def expected_signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return PREFIX + digest.hexdigest()


def signature_valid(
    secret: str,
    timestamp: str | None,
    signature: str | None,
    body: bytes,
    *,
    now_s: float,
    max_age_s: int,
) -> bool:
    if not timestamp or not signature or not signature.startswith(PREFIX):
        return False
    if not timestamp.strip().isdigit():
        return False
    if max_age_s and abs(now_s - int(timestamp.strip())) > max_age_s:
        return False
    given = signature[len(PREFIX) :].strip().lower().encode()
    wanted = expected_signature(secret, timestamp.strip(), body)[len(PREFIX) :].encode()
    return hmac.compare_digest(given, wanted)
