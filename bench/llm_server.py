"""Baseline C's simulated LLM: the tests' fake OpenAI-compatible server, in its own process,
answering every request after a fixed delay with a valid answer for the schema asked.

The answer is chosen from the schema named in the prompt (the LLM client always writes the
JSON Schema into it): a triage classification from a few keywords, an empty trial extraction
(the rules' values are kept), the reference text for phrasing (so it passes the fact check),
and a FAQ answer that cites nothing (so the FAQ keeps its own answer). What is measured is the
wait, not the model. ``GET /stats`` counts the requests.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
from typing import Any

import uvicorn

from bench.fake_openai import FakeOpenAI, reply

_TRIAL = re.compile(r"agend|aula|marc|terça|terca|\bsim\b|\d", re.IGNORECASE)
_FAQ = re.compile(r"onde|estacion|raquete|horário|horario|\?", re.IGNORECASE)


def _user_text(messages: list[dict[str, Any]]) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    return str(users[-1].get("content", "")) if users else ""


def answer(messages: list[dict[str, Any]]) -> str:
    """A valid JSON answer for the model the prompt asks for (named by its schema's title)."""
    instruction = str(messages[-1].get("content", ""))
    text = _user_text(messages)
    if '"title": "LLMTriage"' in instruction:
        intents = [name for name, rule in (("trial", _TRIAL), ("faq", _FAQ)) if rule.search(text)]
        if intents:
            return json.dumps({"intents": intents})
        return json.dumps({"intents": ["general"], "general_response": "Oi! Como posso ajudar?"})
    if '"title": "FaqLLMAnswer"' in instruction:
        return json.dumps({"answer": "", "ids_used": []})
    if '"title": "PhrasedReply"' in instruction:
        try:
            reference = json.loads(text).get("mensagem_de_referencia", "")
        except (ValueError, AttributeError):
            reference = ""
        return json.dumps({"text": reference})
    return "{}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.llm_server")
    parser.add_argument("--delay-ms", type=int, default=300)
    args = parser.parse_args()
    fake = FakeOpenAI()
    fake.default = reply(answer, delay_ms=args.delay_ms)

    @fake.app.get("/stats")
    def stats() -> dict[str, int]:
        return {"requests": len(fake.requests)}

    # Served here rather than by ``fake.start()``: asyncio sets TCP_NODELAY only on sockets
    # created with IPPROTO_TCP, and without it every keep-alive response would wait ~40 ms
    # for the client's delayed ACK, time a real LLM endpoint does not add.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    print(json.dumps({"base_url": f"http://127.0.0.1:{port}/v1"}), flush=True)
    config = uvicorn.Config(fake.app, log_level="warning", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
