"""``orquestra erase CONVERSATION_ID``: erase a person's data (LGPD) through the gateway.

Calls ``DELETE /v1/conversations/{id}`` (admin token from ``ORQ_ADMIN_TOKEN``): the
conversation's state, history, journal and every other key go, and its bookings are kept
without the person's data. It cannot be undone; ``--yes`` skips the question.
"""

from __future__ import annotations

import argparse
import sys

from orquestra.client import DEFAULT_URL, ApiError, Client


def run(args: argparse.Namespace) -> int:
    if not args.yes:
        answer = input(f"apagar todos os dados da conversa {args.conversation_id}? (sim/não) ")
        if answer.strip().lower() not in ("s", "sim", "y", "yes"):
            print("nada foi apagado")
            return 1
    try:
        with Client(args.url) as client:
            result = client.erase(args.conversation_id)
    except ApiError as exc:
        print(f"orquestra erase: {exc}", file=sys.stderr)
        return 1
    bookings = ", ".join(result["bookings_anonymized"]) or "nenhum"
    print(
        f"conversa {args.conversation_id} apagada: {result['keys_deleted']} chaves removidas; "
        f"agendamentos anonimizados: {bookings}"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("erase", help="erase a conversation's personal data (LGPD)")
    parser.add_argument("conversation_id")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"gateway (default {DEFAULT_URL})")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    parser.set_defaults(func=run)
