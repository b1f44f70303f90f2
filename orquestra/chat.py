"""``orquestra chat``: talk to the bot from a terminal, as a WhatsApp user would.

Type a message and the bot's reply appears as bubbles. Commands:

    /new             a fresh conversation (new conversation id)
    /state           the conversation's state slices
    /why             the last turn's journal, explained (as ``orquestra explain`` does)
    /at 2026-02-10T18:00   set the business clock used for ``sent_at``
    /at +2h          move the clock forward (any duration: 30s, 5m, 7d)
    /at now          back to the real clock
    /at              show the clock
    /help, /quit

The clock keeps running: after ``/at T`` a message sent 40 seconds later carries ``T + 40s``.
Real gaps between messages are kept (bursts still merge, cooldowns still count) while the
conversation lives on any business date; ``/at +7d`` skips a week of silence. A time without
an offset is business time (the gateway reads it in the pack's timezone).

Against a running system (``--url``, default http://127.0.0.1:8000) or a private one started
for the session (``--start``).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TextIO

from orquestra.autostart import StartFailed, local_system
from orquestra.client import DEFAULT_URL, ApiError, Client, NotFound
from orquestra.explain import default_lang
from orquestra.scenario_run import await_replies
from orquestra.scenario_schema import parse_duration
from orquestra.style import Style, wants_color
from orquestra.timeline import LANGS, Lang, render_timeline
from services.registry import SLICES

HELP = """commands: /new  /state  /why  /at <time|+duration|now>  /help  /quit"""
BUBBLE_WIDTH = 60


@dataclass(frozen=True)
class Command:
    """A line the person typed: a message (``name`` None) or a slash command."""

    name: str | None
    arg: str = ""


def parse_line(line: str) -> Command | None:
    """None for a blank line; ``/cmd arg`` → Command("cmd", "arg"); anything else a message."""
    text = line.strip()
    if not text:
        return None
    if text.startswith("/") and len(text) > 1 and not text.startswith("//"):
        name, _, arg = text[1:].partition(" ")
        return Command(name.lower(), arg.strip())
    return Command(None, text[1:] if text.startswith("//") else text)


class ChatClock:
    """The business clock of ``sent_at``: real time, or a set time that keeps running.

    ``monotonic`` is injected so the arithmetic is testable without waiting.
    """

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._base: datetime | None = None
        self._set_at = 0.0

    def now(self) -> datetime | None:
        """The clock's time, or None when it follows real time (the gateway stamps it)."""
        if self._base is None:
            return None
        return self._base + timedelta(seconds=self._monotonic() - self._set_at)

    def set(self, moment: datetime | None) -> None:
        self._base = moment
        self._set_at = self._monotonic()

    def apply(self, arg: str) -> datetime | None:
        """``/at``'s argument: an ISO time, ``+duration`` or ``now``. Raises ValueError."""
        value = arg.strip()
        if value == "now":
            self.set(None)
        elif value.startswith("+"):
            current = self.now()
            if current is None:
                raise ValueError("set a time first (/at 2026-02-10T18:00), then move it")
            self.set(current + parse_duration(value[1:]))
        else:
            try:
                self.set(datetime.fromisoformat(value))
            except ValueError as exc:
                raise ValueError(f"not a time: {value!r} (e.g. 2026-02-10T18:00)") from exc
        return self.now()


def display_width(text: str) -> int:
    """Columns a terminal uses for ``text`` (wide characters such as emoji take two)."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or char in "\u200d\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def bubble(text: str, style: Style, *, width: int = BUBBLE_WIDTH, indent: int = 0) -> list[str]:
    """A rounded box around ``text``, wrapped to ``width`` columns."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines += textwrap.wrap(paragraph, width) or [""]
    inner = max(display_width(line) for line in lines)
    pad = " " * indent
    top = f"{pad}╭{'─' * (inner + 2)}╮"
    bottom = f"{pad}╰{'─' * (inner + 2)}╯"
    body = [f"{pad}│ {line}{' ' * (inner - display_width(line))} │" for line in lines]
    return [style.green(line) for line in (top, *body, bottom)]


def user_bubble(text: str, style: Style) -> list[str]:
    return [style.cyan(line) for line in bubble(text, Style(False), indent=12)]


def render_state(state: dict[str, Any], style: Style) -> list[str]:
    lines = [style.bold(f"conversation {state.get('conversation_id', '?')}")]
    for name in SLICES:
        value = state.get(name)
        if value is None:
            lines.append(style.dim(f"{name}: —"))
            continue
        dumped = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
        lines.append(f"{style.yellow(name)}: {dumped}")
    return lines


class ChatSession:
    """The loop: read lines, send messages, print replies; commands act on the session."""

    def __init__(
        self,
        client: Client,
        *,
        out: TextIO,
        style: Style,
        lang: Lang,
        timeout_s: float,
        echo: bool,
        conversation_id: str | None = None,
        clock: ChatClock | None = None,
    ) -> None:
        self.client = client
        self.out = out
        self.style = style
        self.lang = lang
        self.timeout_s = timeout_s
        self.echo = echo
        self.clock = clock or ChatClock()
        self.conversation_id = conversation_id or self._new_id()
        self.cursor = "0-0"
        self.last_turns: list[str] = []

    @staticmethod
    def _new_id() -> str:
        return f"chat-{uuid.uuid4().hex[:10]}"

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out, flush=True)

    def banner(self) -> None:
        self.say(
            self.style.bold(f"orquestra chat · {self.client.base_url}"),
            self.style.dim(f"conversation {self.conversation_id} · {HELP}"),
        )

    def handle(self, command: Command) -> bool:
        """Act on one line; False when the session should end."""
        if command.name is None:
            self.send(command.arg)
            return True
        actions: dict[str, Callable[[str], None]] = {
            "new": self.new,
            "state": self.show_state,
            "why": self.why,
            "at": self.at,
            "help": lambda _: self.say(HELP),
        }
        if command.name in ("quit", "exit", "q"):
            return False
        action = actions.get(command.name)
        if action is None:
            self.say(self.style.red(f"unknown command /{command.name}"), HELP)
        else:
            action(command.arg)
        return True

    def send(self, text: str) -> None:
        if self.echo:
            self.say(*user_bubble(text, self.style))
        sent_at = self.clock.now()
        message_id, _ = self.client.post(self.conversation_id, text, sent_at=sent_at)
        replies, self.cursor, answered = await_replies(
            self.client, self.conversation_id, self.cursor, {message_id}, self.timeout_s
        )
        for reply in replies:
            for text_bubble in reply.get("bubbles") or [reply.get("text", "")]:
                self.say(*bubble(str(text_bubble), self.style))
        if replies:
            self.last_turns = [str(r["turn_id"]) for r in replies]
        if not answered:
            self.say(self.style.red(f"(no reply within {self.timeout_s:.0f}s)"))

    def new(self, _: str) -> None:
        self.conversation_id = self._new_id()
        self.cursor = "0-0"
        self.last_turns = []
        self.say(self.style.dim(f"new conversation {self.conversation_id}"))

    def show_state(self, _: str) -> None:
        try:
            state = self.client.conversation(self.conversation_id)
        except NotFound:
            self.say(self.style.dim("no state yet: send a message first"))
            return
        self.say(*render_state(state, self.style))

    def why(self, _: str) -> None:
        if not self.last_turns:
            self.say(self.style.dim("no turn yet: send a message first"))
            return
        journal = self.client.journal(self.conversation_id)
        entries = [e for e in journal if e.get("turn_id") in self.last_turns]
        self.say(render_timeline(self.conversation_id, entries, self.lang))

    def at(self, arg: str) -> None:
        if arg:
            try:
                self.clock.apply(arg)
            except ValueError as exc:
                self.say(self.style.red(str(exc)))
                return
        current = self.clock.now()
        shown = current.isoformat(timespec="seconds") if current else "real time"
        self.say(self.style.dim(f"clock: {shown}"))

    def loop(self, read: Callable[[], str]) -> None:
        """Until EOF or /quit; an API error is reported and the session goes on."""
        while True:
            try:
                line = read()
            except EOFError:
                return
            command = parse_line(line)
            if command is None:
                continue
            try:
                if not self.handle(command):
                    return
            except ApiError as exc:
                self.say(self.style.red(str(exc)))


@contextmanager
def gateway(args: argparse.Namespace) -> Iterator[str]:
    if not args.start:
        yield args.url
        return
    print("orquestra chat: starting a private system…", file=sys.stderr, flush=True)
    with local_system() as url:
        yield url


def run(args: argparse.Namespace) -> int:
    interactive = sys.stdin.isatty()
    style = Style(wants_color(args.color))
    prompt = ""
    if interactive:
        import readline  # noqa: F401  (line editing and history for input())

        # \001 and \002 tell readline the color codes take no room on the line.
        prompt = "\001\033[1m\002você › \001\033[0m\002" if style.color else "você › "

    try:
        with gateway(args) as url, Client(url) as client:
            health = client.health()
            if health is None:
                hint = "start one with `orquestra up`, or use --start"
                print(f"orquestra chat: no gateway at {url} ({hint})", file=sys.stderr)
                return 1
            if health[0] != 200:
                missing = ", ".join(health[1].get("missing") or []) or "?"
                print(f"orquestra chat: degraded, no live {missing}", file=sys.stderr)
            session = ChatSession(
                client,
                out=sys.stdout,
                style=style,
                lang=args.lang or default_lang(),
                timeout_s=args.timeout,
                echo=not interactive,
                conversation_id=args.conversation,
            )
            if args.at:
                session.at(args.at)
            session.banner()
            session.loop(lambda: input(prompt))
    except StartFailed as exc:
        print(f"orquestra chat: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("chat", help="chat with the bot in the terminal")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"gateway (default {DEFAULT_URL})")
    parser.add_argument("--start", action="store_true", help="start a private system to chat with")
    parser.add_argument("--conversation", help="conversation id (default: a new one)")
    parser.add_argument("--at", help="initial business clock, e.g. 2026-02-10T18:00")
    parser.add_argument("--lang", choices=LANGS, default=None, help="language of /why")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a reply")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    parser.set_defaults(func=run)
