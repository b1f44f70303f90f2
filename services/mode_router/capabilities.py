"""Capabilities by mode: which tools a mode allows, and the records of attempted violations.

The table is pack data (section ``capabilities``); these functions only read it. Unknown modes
and unknown tools are denied: a tool the pack never mentions is not allowed anywhere.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from services.mode_router.config import CapabilitiesConfig
from services.mode_router.types import ConversationMode

ViolationType = Literal["tool", "claim"]


def tool_allowed(mode: ConversationMode | str, tool: str, capabilities: CapabilitiesConfig) -> bool:
    """Whether ``tool`` may run while the conversation is in ``mode``."""
    try:
        known = ConversationMode(mode)
    except ValueError:
        return False
    if tool in capabilities.never:
        return False
    return tool in capabilities.modes.get(known, [])


def get_capabilities_version(capabilities: CapabilitiesConfig) -> str:
    """``<label>+<hash>``: the pack's label and the first 8 hex digits of the table's MD5.

    The hash is over a canonical form (sorted modes and tools), so reordering a list does not
    change it while adding or removing a tool does, even when the label was not bumped.
    """
    table = {
        "version": capabilities.version,
        "modes": {mode.value: sorted(tools) for mode, tools in capabilities.modes.items()},
        "never": sorted(capabilities.never),
    }
    canonical = json.dumps(table, sort_keys=True, ensure_ascii=False)
    digest = hashlib.md5(canonical.encode("utf-8"), usedforsecurity=False).hexdigest()[:8]
    return f"{capabilities.version}+{digest}"


def violation_record(
    conversa_id: str, mode: str, violation_type: ViolationType, attempted: str
) -> dict[str, Any]:
    """The seed's ``log_violation_attempt`` as data: an attempt to use a tool or make a claim
    the mode does not allow. The caller writes it to the journal and the logs.
    """
    if violation_type not in ("tool", "claim"):
        raise ValueError(f"violation_type must be 'tool' or 'claim', not {violation_type!r}")
    return {
        "event": "violation_attempt",
        "conversa_id": conversa_id,
        "mode": mode,
        "violation_type": violation_type,
        "attempted": attempted,
    }
