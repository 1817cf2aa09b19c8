"""Who may reach ``ragreview serve``: a token off loopback, checked before any app
process starts and never written to the database or the server's output."""

from __future__ import annotations

import hashlib
import hmac
import socket
import subprocess
import sys

import pytest
from aiohttp import ClientSession, CookieJar, WSServerHandshakeError

from ragreview.core.reviewer_name import clean_reviewer
from ragreview.services.serve_hosts import is_loopback
from tests.conftest import subprocess_env
from tests.serve.conftest import children

TOKEN = "s3cret-Token-9f"


def test_serving_beyond_loopback_without_a_token_is_refused_in_one_line(tmp_path, demo_copy):
    out = subprocess.run(
        [sys.executable, "-m", "ragreview", "serve", str(demo_copy), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
    )
    assert out.returncode == 1
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "--token" in out.stderr and "Traceback" not in out.stderr
    assert not demo_copy.with_name("demo.ragreview.db").exists()  # refused before the import


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("box.example", False),
    ],
)
def test_which_hosts_are_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_reviewer_names_are_cleaned():
    assert clean_reviewer("  Ann\x1b[31m  Lee\n") == "Ann[31m Lee"
    assert clean_reviewer("\u202eevil\u200b") == "evil"
    assert clean_reviewer("x" * 100) == "x" * 64
    assert clean_reviewer("\x00\x07 ") == ""


async def test_without_the_token_nothing_gets_in_and_no_app_starts(serve, tmp_path):
    # 0.0.0.0 with a token: the test still talks to it on 127.0.0.1
    served = serve("--host", "0.0.0.0", "--token", TOKEN)
    base = served.url
    proof = hmac.new(TOKEN.encode(), b"ragreview serve session", hashlib.sha256).hexdigest()
    async with ClientSession(cookie_jar=CookieJar(unsafe=True)) as http:  # IP hosts too
        for path in ("/", "/reviewer", "/static/js/textual.js", "/download/x"):
            async with http.get(base + path, allow_redirects=False) as response:
                assert response.status == 401, path
        async with http.get(base + "/?token=wrong", allow_redirects=False) as response:
            assert response.status == 403
        for headers in ({}, {"Cookie": "ragreview_auth=forged; ragreview_reviewer=Eve"}):
            with pytest.raises(WSServerHandshakeError) as refused:
                await http.ws_connect(base + "/ws?width=80&height=24", headers=headers)
            assert refused.value.status == 401
        assert children(served.process.pid) == []  # no app process was started
        # the right token: a cookie (not the token) and a redirect that drops it
        async with http.get(base + f"/?token={TOKEN}", allow_redirects=False) as response:
            assert response.status == 302 and response.headers["Location"] == "/"
            assert response.cookies["ragreview_auth"].value == proof
        async with http.get(base + "/", allow_redirects=False) as response:
            assert response.status == 302 and response.headers["Location"] == "/reviewer"
        async with http.get(base + "/reviewer") as response:
            assert response.status == 200 and "Who is reviewing?" in await response.text()
    # a page of another site may not open a session even with the browser's cookies
    cookies = {
        "Cookie": f"ragreview_auth={proof}; ragreview_reviewer=Ann",
        "Origin": "http://evil.example",
    }
    async with ClientSession() as http:
        with pytest.raises(WSServerHandshakeError) as refused:
            await http.ws_connect(base + "/ws", headers=cookies)
        assert refused.value.status == 403
    assert children(served.process.pid) == []
    served.process.terminate()
    served.process.wait(timeout=15)
    output = served.log.read_text()
    assert TOKEN not in output and "serving 'demo'" in output
    raw = served.db.read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("demo.ragreview.db*")
    )
    assert TOKEN.encode() not in raw and proof.encode() not in raw


def test_a_taken_port_is_one_line(tmp_path, demo_copy):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "ragreview", "serve", str(demo_copy), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env=subprocess_env(tmp_path),
        )
    assert out.returncode == 1, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]
