"""``orquestra unanswered``: the questions the FAQ could not answer, most frequent first."""

from __future__ import annotations

import argparse
import os

import redis
from faststream.redis.parser.binary import BinaryMessageFormatV1

from services.faq.unanswered import top_unanswered
from shared.connections import connect_sync
from shared.contracts import Unanswered
from shared.keys import Keys
from shared.settings import get_settings


def read_questions(client: redis.Redis, keys: Keys, limit: int) -> list[str]:
    entries = client.xrevrange(keys.unanswered, count=limit)
    questions = []
    for _, fields in entries:
        body, _ = BinaryMessageFormatV1.parse(fields[b"__data__"])
        questions.append(Unanswered.model_validate_json(body).question)
    return questions


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    client = connect_sync(settings)
    keys = Keys(settings.prefix, tenant=args.tenant or "")
    questions = read_questions(client, keys, args.scan)
    if not questions:
        print("nenhuma pergunta sem resposta registrada")
        return 0
    print(f"{'vezes':>5}  pergunta")
    for question, count in top_unanswered(questions, args.top):
        print(f"{count:>5}  {question}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("unanswered", help="most frequent questions the FAQ could not answer")
    parser.add_argument("--top", type=int, default=20, help="how many to list")
    parser.add_argument("--scan", type=int, default=10_000, help="latest records to read")
    parser.add_argument(
        "--tenant",
        default=os.environ.get("ORQ_TENANT"),
        help="with ORQ_TENANTS: whose questions (default: ORQ_TENANT)",
    )
    parser.set_defaults(func=run)
