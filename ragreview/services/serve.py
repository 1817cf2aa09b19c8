"""``ragreview serve``: the review app in browsers, one app process per connection.

A thin layer over textual-serve's ``Server`` (aiohttp): it adds the token gate, the
sign-in page that asks a browser for its reviewer's name (kept in a cookie), and
starts each connection's app with that name. All sessions write to the one WAL-mode
database, which takes concurrent writers without loss. docs/serve.md has the story.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import logging
import os
import shlex
import sys
from asyncio.subprocess import Process
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from ..core.reviewer_name import MAX_REVIEWER_LENGTH, clean_reviewer
from .serve_hosts import HostRules
from .serve_sessions import SERVER_PID_ENV

log = logging.getLogger("ragreview.serve")

TEMPLATES = Path(__file__).with_name("serve_templates")
REVIEWER_ENV = "RAGREVIEW_REVIEWER"  # read by ragreview.tui.served
REVIEWER_COOKIE = "ragreview_reviewer"
TOKEN_COOKIE = "ragreview_auth"
COOKIE_AGE = 365 * 24 * 3600


def _proof(token: str) -> str:
    """What the token cookie holds: derived from the token, so the browser never
    stores the token itself."""
    return hmac.new(token.encode(), b"ragreview serve session", hashlib.sha256).hexdigest()


class _SessionApp(AppService):
    """One connection's app process, with its reviewer's name in the environment (not
    the command line, which a shell parses and textual-serve may log). Started without
    a shell, so the server is its parent: the process ends when the server does, even
    after SIGKILL (services.serve_sessions)."""

    def __init__(self, argv: list[str], *, reviewer: str, **kwargs: Any) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self.argv = argv
        self.reviewer = reviewer

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        env = super()._build_environment(width, height)
        env[REVIEWER_ENV] = self.reviewer
        env[SERVER_PID_ENV] = str(os.getpid())
        return env

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process


class ReviewServer(Server):
    def __init__(
        self,
        db_path: str,
        dataset: str,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        token: str | None = None,
        blind: bool = False,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        command = [sys.executable, "-m", "ragreview.tui.served", db_path, dataset]
        self.argv = command + (["--blind"] if blind else [])
        super().__init__(
            shlex.join(self.argv),
            host=host,
            port=port,
            title=f"ragreview · {dataset}",
            templates_path=TEMPLATES,
        )
        self.dataset = dataset
        self._token = token
        self._proof = _proof(token) if token else None
        self.rules = HostRules(token=token is not None, host=host, allow=allow_hosts)
        self._sockets: set[web.WebSocketResponse] = set()

    # -- the web app ------------------------------------------------------------------

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._gate)
        app.router.add_get("/reviewer", self.handle_reviewer_form)
        app.router.add_post("/reviewer", self.handle_reviewer_set)
        return app

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """First the Host and Origin rules (serve_hosts: without a token only a
        loopback Host; an Origin only of an allowed host and this server's own page),
        for every request, before any app process starts. Then, with a token, every
        request must carry it: ``?token=`` on the first visit, which sets a cookie and
        reloads the page without it (out of the address bar and history), or the
        cookie afterwards, or ``Authorization: Bearer``. Nothing here logs a URL."""
        host = request.headers.get("Host")
        if not self.rules.host_ok(host):
            raise web.HTTPForbidden(
                text="ragreview: without a token this server answers only loopback "
                "addresses: open http://127.0.0.1:PORT/ or http://localhost:PORT/\n"
            )
        origin = request.headers.get("Origin")
        if origin is not None and not self.rules.origin_ok(origin, host):
            raise web.HTTPForbidden(
                text="ragreview: request from a page of another site (if browsers reach "
                "this server under another name, start it with --token and --allow-host "
                "NAME)\n"
            )
        if self._token is None or self._proof is None:
            return await handler(request)
        given = request.query.get("token")
        if given is not None:
            if not hmac.compare_digest(given.encode(), self._token.encode()):
                raise web.HTTPForbidden(text="ragreview: wrong token\n")
            if (
                request.method == "GET"
                and request.headers.get("Upgrade", "").lower() != "websocket"
            ):
                query = {k: v for k, v in request.query.items() if k != "token"}
                found = web.HTTPFound(request.rel_url.with_query(query))
                # Lax, not Strict: the link followed from a chat or a mail must arrive
                # signed in; another site's websocket or form post still gets no cookie.
                found.set_cookie(
                    TOKEN_COOKIE,
                    self._proof,
                    max_age=COOKIE_AGE,
                    httponly=True,
                    samesite="Lax",
                    secure=_is_https(request),
                )
                raise found
            return await handler(request)
        cookie = request.cookies.get(TOKEN_COOKIE, "")
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if hmac.compare_digest(cookie.encode(), self._proof.encode()) or (
            bearer and hmac.compare_digest(bearer.encode(), self._token.encode())
        ):
            return await handler(request)
        raise web.HTTPUnauthorized(
            text="ragreview: this server needs its token: open the address with ?token=...\n"
        )

    # -- who is reviewing ---------------------------------------------------------------

    @staticmethod
    def _reviewer(request: web.Request) -> str:
        return clean_reviewer(unquote(request.cookies.get(REVIEWER_COOKIE, "")))

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not self._reviewer(request):
            raise web.HTTPFound("/reviewer")
        context = {
            "font_size": _int(request.query.get("fontsize"), 16),
            "app_websocket_url": self._websocket_url(request),
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_reviewer_form(self, request: web.Request) -> web.Response:
        current = html.escape(self._reviewer(request), quote=True)
        title = html.escape(self.title)
        page = SIGN_IN.format(title=title, current=current, max=MAX_REVIEWER_LENGTH)
        return web.Response(text=page, content_type="text/html")

    async def handle_reviewer_set(self, request: web.Request) -> web.Response:
        # (another site's form post is refused by the gate's Origin rule)
        form = await request.post()
        name = clean_reviewer(str(form.get("reviewer", "")))
        if not name:
            raise web.HTTPFound("/reviewer")
        found = web.HTTPFound("/")
        found.set_cookie(
            REVIEWER_COOKIE,
            quote(name),
            max_age=COOKIE_AGE,
            samesite="Lax",
            secure=_is_https(request),
        )
        raise found

    # -- pages and sessions -------------------------------------------------------------

    def _websocket_url(self, request: web.Request) -> str:
        """Where the page connects back to: the address the browser used (behind a
        proxy, the Host it forwards), so it works on 0.0.0.0, via SSH forwarding and
        behind TLS, which textual-serve's fixed public URL does not."""
        scheme = "wss" if _is_https(request) else "ws"
        return f"{scheme}://{request.host}/ws"

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handler, with the reviewer's name handed to the app and a
        check (the gate's Origin rule, already passed) that the page connecting is this
        server's own: another web site open in the reviewer's browser must not drive
        the app."""
        reviewer = self._reviewer(request)
        if not reviewer:
            raise web.HTTPForbidden(text="ragreview: sign in at /reviewer first\n")
        websocket = web.WebSocketResponse(heartbeat=15)
        width = _int(request.query.get("width"), 80)
        height = _int(request.query.get("height"), 24)
        app_service: AppService | None = None
        try:
            await websocket.prepare(request)
            self._sockets.add(websocket)
            app_service = _SessionApp(
                self.argv,
                reviewer=reviewer,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await app_service.start(width, height)
            await self._process_messages(websocket, app_service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # one session's failure must not stop the server
            log.error("session ended with an error: %s", error)
        finally:
            self._sockets.discard(websocket)
            if app_service is not None:
                await app_service.stop()
        return websocket

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(
            f"ragreview: serving {self.dataset!r} on http://{self.host}:{self.port} (Ctrl+C stops)",
            markup=False,
            highlight=False,
        )
        if self._token is not None:  # which addresses a browser may use (--allow-host adds)
            self.console.print(
                f"ragreview: pages accepted from {self.rules.described()}",
                markup=False,
                highlight=False,
            )

    async def on_shutdown(self, app: web.Application) -> None:
        # Close the browsers' connections: each handler then stops its app process
        # (which releases its lease) instead of aiohttp waiting a minute for them.
        for websocket in list(self._sockets):
            await websocket.close()

    def serve(self, debug: bool = False) -> None:
        """textual-serve's ``serve`` without the access log (URLs can carry the token)."""
        self.debug = debug
        self.initialize_logging()
        logging.getLogger("aiohttp.access").disabled = True
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            access_log=None,
            print=lambda *args: None,
            shutdown_timeout=5,
        )


def _is_https(request: web.Request) -> bool:
    return request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


SIGN_IN = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ background: #0c181f; color: #e6edf3; font-family: "Roboto Mono", monospace;
  display: flex; align-items: center; justify-content: center; height: 90vh; }}
form {{ background: #12232d; padding: 32px 40px; }}
input {{ font: inherit; padding: 8px; margin: 12px 0; width: 24em; display: block; }}
button {{ font: inherit; padding: 8px 24px; background: #5e0ba7; color: #fff; border: 0; }}
</style></head>
<body><form method="post" action="/reviewer">
<h2>{title}</h2>
<label for="reviewer">Who is reviewing? Your name goes into the history with each label.</label>
<input id="reviewer" name="reviewer" value="{current}" maxlength="{max}" required autofocus>
<button type="submit">Start reviewing</button>
</form></body></html>
"""
