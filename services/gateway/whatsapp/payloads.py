"""Request bodies of the Graph API's ``/{phone-number-id}/messages`` endpoint (pure).

Shapes follow Meta's documented requests (see the conformance corpus). A person is addressed by
phone number (``to``) or, when they hid it behind a username, by their business-scoped user id
(``recipient``), which is never all digits.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

PRODUCT = "whatsapp"
_PHONE = re.compile(r"^\+?\d{5,20}$")


class Template(BaseModel):
    """An approved message template (pack section ``whatsapp.reengagement_template``)."""

    name: str
    language: str = "pt_BR"
    # Body parameters ({{1}}, {{2}}...), e.g. a reminder's name, date and time.
    parameters: list[str] = Field(default_factory=list)


def addressee(recipient: str) -> dict[str, str]:
    if _PHONE.match(recipient):
        return {"to": recipient}
    return {"recipient": recipient}


def text_message(recipient: str, body: str) -> dict[str, Any]:
    return {
        "messaging_product": PRODUCT,
        "recipient_type": "individual",
        **addressee(recipient),
        "type": "text",
        "text": {"preview_url": False, "body": body},
    }


def template_message(recipient: str, template: Template) -> dict[str, Any]:
    return {
        "messaging_product": PRODUCT,
        "recipient_type": "individual",
        **addressee(recipient),
        "type": "template",
        "template": {
            "name": template.name,
            "language": {"code": template.language},
            **(
                {
                    "components": [
                        {
                            "type": "body",
                            "parameters": [
                                {"type": "text", "text": value} for value in template.parameters
                            ],
                        }
                    ]
                }
                if template.parameters
                else {}
            ),
        },
    }


def read_receipt(message_id: str, *, typing: bool) -> dict[str, Any]:
    """Mark an inbound message (and those before it) read; optionally show "typing..."."""
    body: dict[str, Any] = {
        "messaging_product": PRODUCT,
        "recipient_type": "individual",
        "status": "read",
        "message_id": message_id,
    }
    if typing:
        body["typing_indicator"] = {"type": "text"}
    return body


def sent_message_id(body: Any) -> str | None:
    """The wamid of a successful send response."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        wamid = messages[0].get("id")
        return wamid if isinstance(wamid, str) else None
    return None
