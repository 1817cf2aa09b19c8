"""A browser session of ``ragreview serve`` without a browser: textual-serve's websocket
protocol spoken directly (``["stdin", keys]`` up, the terminal's bytes down), the screen
read through a terminal emulator (pyte) of the session's size."""

from __future__ import annotations

import json
import time

import aiohttp
import pyte


class TerminalSession:
    def __init__(self, socket: aiohttp.ClientWebSocketResponse, width: int, height: int):
        self.socket = socket
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.ByteStream(self.screen)

    @classmethod
    async def open(
        cls,
        http: aiohttp.ClientSession,
        url: str,
        reviewer: str,
        width: int = 160,
        height: int = 48,
    ) -> TerminalSession:
        socket = await http.ws_connect(
            f"{url}/ws?width={width}&height={height}",
            headers={"Cookie": f"ragreview_reviewer={reviewer}"},
        )
        return cls(socket, width, height)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    async def _pump(self, seconds: float) -> None:
        try:
            message = await self.socket.receive(timeout=seconds)
        except TimeoutError:
            return
        if message.type == aiohttp.WSMsgType.BINARY:
            self.stream.feed(message.data)
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
            raise AssertionError(f"the session closed:\n{self.text()}")

    async def wait_for(self, needle: str, timeout_s: float = 60) -> None:
        """Until ``needle`` (case-insensitive) is on screen; fails after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while needle.lower() not in self.text().lower():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{needle!r} not on screen after {timeout_s} s:\n{self.text()}"
                )
            await self._pump(0.1)

    async def press(self, keys: str) -> None:
        await self.socket.send_str(json.dumps(["stdin", keys]))

    async def settle(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await self._pump(0.05)
