"""The pure half of LLM phrasing: the structured answer, the grounded prompt, the check.

The LLM never decides *what* is true: it only rewrites retrieved entries into one natural
reply, and must say which entries it used. An answer that cites nothing, or cites an entry
that was not retrieved, may contain facts from elsewhere and is thrown away.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import BaseModel, Field

from shared.faq.config import FaqEntry


class FaqLLMAnswer(BaseModel):
    """What the LLM must return (used as the structured-output schema)."""

    answer: str = Field(description="A resposta para a pessoa, em português do Brasil.")
    ids_used: list[str] = Field(description="Ids das entradas usadas na resposta.")


def build_llm_messages(
    question: str, entries: Sequence[FaqEntry], *, instructions: str
) -> list[dict[str, str]]:
    """Chat messages asking the LLM to answer ``question`` from ``entries`` only.

    The knowledge goes in the system message and the person's text alone in the user
    message, so text typed by the person is never read as instructions.
    """
    knowledge = "\n".join(f"[{e.id}] {e.answer.strip()}" for e in entries)
    system = (
        f"{instructions.strip()}\n\n"
        "Entradas da base de conhecimento (a única fonte permitida):\n"
        f"{knowledge}\n\n"
        'Responda em JSON com os campos "answer" (o texto para a pessoa) e "ids_used" '
        "(os ids, entre colchetes acima, das entradas que você usou)."
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": question},
    ]


def accept_llm_answer(answer: FaqLLMAnswer, retrieved_ids: Collection[str]) -> bool:
    """True when the LLM's answer is grounded: non-empty, citing only retrieved entries."""
    cited = set(answer.ids_used)
    return bool(answer.answer.strip()) and bool(cited) and cited <= set(retrieved_ids)
