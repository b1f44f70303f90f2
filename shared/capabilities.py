"""Capabilities by mode: which tools each funnel mode allows (the mode-router seed's
``CAPABILITIES_BY_MODE``), and the record of an attempted violation.

Shared because two services use it: mode_router stamps every decision with the table's version,
and trial's tool gate checks a tool against the conversation's mode before it runs. The table is
pack data (section ``capabilities``). Unknown modes and unknown tools are denied: a tool the pack
never mentions is not allowed anywhere.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The funnel modes every pack shares; the rules that move between them live in packs.
FUNNEL_MODES = ("discovery", "oferta", "followup", "reativacao")

ViolationType = Literal["tool", "claim"]


class CapabilitiesConfig(BaseModel):
    """The ``capabilities`` section: the tools each mode allows.

    ``version`` is a label for people; the decision log pairs it with a hash of the whole table
    so an edit that forgot to bump the label still shows up.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1)
    modes: dict[str, list[str]]
    # Tools no mode may ever allow (a business rule, e.g. "the assistant never reserves").
    never: list[str] = Field(default_factory=list)

    @cached_property
    def tagged_version(self) -> str:
        """``<label>+<hash>``, the hash over a canonical form (sorted modes and tools), so
        reordering a list does not change it while adding or removing a tool does, even when
        the label was not bumped."""
        table = {
            "version": self.version,
            "modes": {mode: sorted(tools) for mode, tools in self.modes.items()},
            "never": sorted(self.never),
        }
        canonical = json.dumps(table, sort_keys=True, ensure_ascii=False)
        digest = hashlib.md5(canonical.encode("utf-8"), usedforsecurity=False).hexdigest()[:8]
        return f"{self.version}+{digest}"

    @model_validator(mode="after")
    def _consistent(self) -> CapabilitiesConfig:
        unknown = self.modes.keys() - set(FUNNEL_MODES)
        if unknown:
            raise ValueError(f"capabilities name unknown modes {sorted(unknown)}")
        missing = set(FUNNEL_MODES) - self.modes.keys()
        if missing:
            raise ValueError(f"capabilities lack modes {sorted(missing)}")
        for mode, tools in self.modes.items():
            banned = set(tools) & set(self.never)
            if banned:
                raise ValueError(f"capabilities: {mode} allows never-allowed tools {banned}")
        return self


def tool_allowed(mode: str, tool: str, capabilities: CapabilitiesConfig) -> bool:
    """Whether ``tool`` may run while the conversation is in ``mode``."""
    if tool in capabilities.never:
        return False
    return tool in capabilities.modes.get(str(mode), [])


def allowed_tools(mode: str, capabilities: CapabilitiesConfig) -> set[str]:
    """Every tool ``mode`` allows."""
    return {t for t in capabilities.modes.get(str(mode), []) if t not in capabilities.never}


def get_capabilities_version(capabilities: CapabilitiesConfig) -> str:
    """``<label>+<hash>``: the pack's label and the first 8 hex digits of the table's MD5
    (``CapabilitiesConfig.tagged_version``, computed once per pack, asked every turn)."""
    return capabilities.tagged_version


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
