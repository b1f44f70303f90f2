"""``orquestra chat`` as a person uses it: lines typed in, bubbles and answers out.

Driven three ways: lines on stdin (every command, checked against the API afterwards), a
pseudo-terminal (the interactive prompt and colors), and ``--start`` (a private system of its
own, gone when the chat ends).
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time

import redis as redis_sync

from tests.system import ROOT, System


def chat(*args: str, stdin: str, env: dict[str, str] | None = None, timeout: float = 120):
    command = [sys.executable, "-m", "orquestra.cli", "chat", *args]
    return subprocess.run(
        command,
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )


def conversation_of(output: str) -> str:
    match = re.search(r"conversation (chat-\w+)", output)
    assert match, output
    return match.group(1)


LINES = """\
/at 2026-02-05T10:00:00-03:00
quero agendar e onde fica a CT?
/state
/why
/at +8d
/at
/nope
Maria
/new
oi
/quit
this line is never read
"""


def test_chat_from_stdin_lines(system: System) -> None:
    english = {"ORQ_EXPLAIN_LANG": "en"}
    done = chat("--url", system.base_url, "--color", "never", stdin=LINES, env=english)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    first = conversation_of(out)
    assert "│ quero agendar e onde fica a CT? │" in out  # the person's bubble (stdin is no tty)
    assert "Rua das Palmeiras" in out
    # /state: every slice, as stored
    assert re.search(r'trial: \{\n  "_v": 1,(.|\n)*"stage": "collect_client_info"', out)
    # /why: the last turn explained, in the language of ORQ_EXPLAIN_LANG
    assert "intents: trial, faq (source: rules)" in out and "merge.complete" in out
    assert "clock: 2026-02-13T10:00:0" in out  # /at +8d moved the running clock
    assert "unknown command /nope" in out
    second = re.search(r"new conversation (chat-\w+)", out)
    assert second and second.group(1) != first
    assert "this line is never read" not in out

    started = [e for e in system.journal(first) if e["event"] == "turn.started"]
    assert [e["messages"] for e in started] == [["quero agendar e onde fica a CT?"], ["Maria"]]
    assert started[0]["now"].startswith("2026-02-05T10:00:0")
    assert started[1]["now"].startswith("2026-02-13T10:00:0")
    assert system.conversation(first)["trial"]["nome"] == "Maria"
    (greeting,) = [e for e in system.journal(second.group(1)) if e["event"] == "turn.started"]
    assert greeting["messages"] == ["oi"]


class Terminal:
    """The leader side of a pseudo-terminal: what the program printed, read up to a needle."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def read_until(self, needle: bytes, timeout_s: float = 30) -> bytes:
        """Everything up to and including ``needle``; the rest stays for the next read."""
        deadline = time.monotonic() + timeout_s
        while needle not in self.buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{needle!r} not seen in {self.buffer!r}"
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                chunk = os.read(self.fd, 4096)
                assert chunk, f"terminal closed before {needle!r}: {self.buffer!r}"
                self.buffer += chunk
        end = self.buffer.index(needle) + len(needle)
        seen, self.buffer = self.buffer[:end], self.buffer[end:]
        return seen


def test_chat_in_a_terminal_has_a_prompt_and_colors(system: System) -> None:
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "orquestra.cli", "chat", "--url", system.base_url],
        cwd=ROOT,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm", "NO_COLOR": "", "PYTHONUNBUFFERED": "1"},
    )
    os.close(follower)
    terminal = Terminal(leader)
    try:
        terminal.read_until("você › ".encode())
        os.write(leader, b"onde fica a CT?\r")
        screen = terminal.read_until("╯".encode())
        assert b"\x1b[32m" in screen and b"Rua das Palmeiras" in screen
        # Typed at a terminal, the message is not echoed again as a bubble.
        assert "│ onde fica a CT? │".encode() not in screen
        terminal.read_until("você › ".encode())
        os.write(leader, b"/quit\r")
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)


def test_chat_start_runs_a_private_system_and_cleans_up(redis_url: str) -> None:
    client = redis_sync.Redis.from_url(redis_url)
    before = set(client.scan_iter(match="orqdev-*", count=1000))
    env = {"REDIS_URL": redis_url}
    done = chat("--start", "--color", "never", stdin="oi\n", env=env, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "starting a private system" in done.stderr
    assert re.search(r"╭─+╮\n│ (Olá|Oi)", done.stdout), done.stdout
    # The private system used its own key prefix on the shared Redis and removed it.
    assert set(client.scan_iter(match="orqdev-*", count=1000)) <= before
    client.close()
