"""ANSI colors for the developer commands' terminal output (plain text when off)."""

from __future__ import annotations

import os
import sys
from typing import TextIO


def wants_color(choice: str, stream: TextIO = sys.stdout) -> bool:
    """``always``/``never``, or ``auto``: a terminal, unless ``NO_COLOR`` is set."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return stream.isatty() and not os.environ.get("NO_COLOR")


class Style:
    """Wraps text in ANSI codes when ``color`` is on; the plain instance leaves text alone."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def red(self, text: str) -> str:
        return self.wrap("31", text)

    def green(self, text: str) -> str:
        return self.wrap("32", text)

    def cyan(self, text: str) -> str:
        return self.wrap("36", text)

    def yellow(self, text: str) -> str:
        return self.wrap("33", text)

    def dim(self, text: str) -> str:
        return self.wrap("2", text)

    def bold(self, text: str) -> str:
        return self.wrap("1", text)
