"""One Brazilian customer is one conversation, whichever form of their number arrives (pure).

Brazil added a ninth digit (a leading 9) to mobile numbers; WhatsApp accounts created before
it still have JIDs without it, and Evolution reports what WhatsApp gives, so the same person may
arrive as ``55 DD 8 digits`` or ``55 DD 9 8 digits``. Mobile numbers start with 6-9 after the
area code (land lines with 2-5 and have no ninth digit), so an eight-digit mobile number gets
the 9 and both forms become one id. Numbers of other countries are kept as they are.
"""

from __future__ import annotations

BRAZIL = "55"


def canonical(number: str) -> str:
    """``number`` (digits only) with the ninth digit of a Brazilian mobile number."""
    if number.startswith(BRAZIL) and len(number) == 12 and number[4] in "6789":
        return number[:4] + "9" + number[4:]
    return number


def number_of_jid(jid: str, server: str = "@s.whatsapp.net") -> str | None:
    """The digits of a phone JID (``5511987654321@s.whatsapp.net``, a device suffix
    ``:12`` dropped); None for any other JID."""
    user, at, domain = jid.partition("@")
    user = user.partition(":")[0]
    if f"{at}{domain}" != server or not user.isdigit():
        return None
    return user
