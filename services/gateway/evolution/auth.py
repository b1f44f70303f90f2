"""Who may post to ``/webhooks/evolution`` (pure).

Evolution signs nothing, so the webhook must carry a secret Evolution was configured with,
one of two ways its instance webhook settings allow:

- ``jwt_key`` in the webhook's ``headers``: Evolution sends ``Authorization: Bearer <JWT>``,
  HS256 over ``{iat, exp: iat + 600, app: "evolution", action: "webhook"}`` with that key; the
  token must verify and not be expired (PyJWT checks the algorithm, signature and times);
- a plain header ``X-Webhook-Token: <secret>`` in the webhook's ``headers``, compared in
  constant time.

No secret configured: nothing passes.
"""

from __future__ import annotations

import hmac

import jwt

TOKEN_HEADER = "x-webhook-token"
LEEWAY_S = 30  # clocks of two machines differ a little


def authenticated(headers: dict[str, str], secret: str | None) -> bool:
    """Whether a request with these (lower-case) headers carries ``secret``'s proof."""
    if not secret:
        return False
    given = headers.get(TOKEN_HEADER)
    if given is not None:
        return hmac.compare_digest(given.encode(), secret.encode())
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return False
    try:
        jwt.decode(
            token.strip(),
            secret,
            algorithms=["HS256"],
            options={"require": ["exp"]},
            leeway=LEEWAY_S,
        )
    except jwt.PyJWTError:
        return False
    return True
