"""Drive browser sessions of ``ragreview serve`` with Playwright and Debian's Chromium.

xterm.js draws on a canvas, so the test reads what a session shows the way the browser
does: the bytes the app sends over the page's websocket, fed to a terminal emulator
(pyte) of the page's size.
"""

from __future__ import annotations

import json
import shutil
from urllib.parse import parse_qs, urlsplit

import pyte

CHROMIUM = shutil.which("chromium") or ""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Session:
    """One browser tab on the server: sign in, press keys, read the screen."""

    def __init__(self, browser, url: str, reviewer: str, token: str) -> None:
        self.context = browser.new_context(viewport={"width": 1500, "height": 900})
        self.page = self.context.new_page()
        self.screen: pyte.Screen | None = None
        self.stream: pyte.ByteStream | None = None
        self.page.on("websocket", self._attach)
        self.page.goto(f"{url}/?token={token}")  # the link a team member is sent
        self.page.fill("#reviewer", reviewer)
        self.page.click("button[type=submit]")
        self.page.wait_for_selector(".xterm-helper-textarea", state="attached")

    def _attach(self, ws) -> None:
        query = parse_qs(urlsplit(ws.url).query)
        self.screen = pyte.Screen(int(query["width"][0]), int(query["height"][0]))
        self.stream = pyte.ByteStream(self.screen)
        ws.on("framereceived", self._received)
        ws.on("framesent", self._sent)

    def _received(self, payload) -> None:
        if isinstance(payload, bytes) and self.stream is not None:
            self.stream.feed(payload)

    def _sent(self, payload) -> None:
        if isinstance(payload, str) and payload.startswith('["resize"') and self.screen:
            size = json.loads(payload)[1]
            self.screen.resize(size["height"], size["width"])

    def text(self) -> str:
        return "\n".join(self.screen.display) if self.screen else ""

    def wait_for(self, needle: str, timeout_s: float = 20) -> float:
        """Seconds until ``needle`` is on screen (fails after ``timeout_s``)."""
        waited = 0.0
        while needle not in self.text():
            if waited >= timeout_s:
                raise AssertionError(
                    f"{needle!r} not on screen after {timeout_s} s:\n{self.text()}"
                )
            self.page.wait_for_timeout(50)
            waited += 0.05
        return waited

    def press(self, *keys: str) -> None:
        self.page.focus(".xterm-helper-textarea")
        for key in keys:
            self.page.keyboard.press(key)
