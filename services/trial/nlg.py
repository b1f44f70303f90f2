"""Optional LLM phrasing of a trial reply (the seed's ``_fallback_or_nlg``), kept deterministic.

The core always decides the reply and writes its deterministic text. When the service runs
with an LLM, the shell may send ``request.messages`` to it and pass what comes back through
``fallback_or_nlg``: the phrased text is used only if it keeps every fact of the deterministic
one (dates, times, booking codes) and still asks when the fallback asks; anything else — no
answer, an error, an empty or too long text, a dropped fact — means the fallback is said.
"""

from __future__ import annotations

import json
import re
from typing import Any

from services.trial.models import NlgRequest, Stage
from shared.trial.config import NlgConfig

# Facts a rephrasing must keep verbatim: dd/mm dates, HH:MM times and booking codes.
_FACTS = re.compile(r"\b\d{2}/\d{2}\b|\b\d{2}:\d{2}\b|\b[A-Z]{1,4}-[A-Z0-9]{6}\b")


def build_nlg_request(
    *,
    stage: Stage,
    action: str,
    error_code: str | None,
    fallback: str,
    snapshot: dict[str, Any],
    config: NlgConfig,
) -> NlgRequest:
    """The prompt for phrasing ``fallback`` (pure: no call is made here)."""
    user = {
        "etapa": stage,
        "acao": action,
        "codigo_de_erro": error_code,
        "dados_do_agendamento": snapshot,
        "mensagem_de_referencia": fallback,
    }
    return NlgRequest(
        stage=stage,
        action=action,
        error_code=error_code,
        fallback=fallback,
        facts=list(dict.fromkeys(_FACTS.findall(fallback))),
        messages=[
            {"role": "system", "content": config.system_prompt},
            {"role": "user", "content": json.dumps(user, ensure_ascii=False)},
        ],
    )


def fallback_or_nlg(candidate: str | None, request: NlgRequest, config: NlgConfig) -> str:
    """The phrased ``candidate`` when it is safe to say, else the deterministic fallback."""
    text = (candidate or "").strip()
    if not text or len(text) > config.max_chars:
        return request.fallback
    if any(fact not in text for fact in request.facts):
        return request.fallback
    if "?" in request.fallback and "?" not in text:
        return request.fallback
    return text
