"""Host and Origin rules of ``ragreview serve`` (services.serve_hosts): without a token
only loopback names get an answer, so DNS rebinding (``Host: evil.example`` with a
matching ``Origin``) gets nothing; an ``Origin`` must name an allowed host and be the
server's own page, never merely match the request's ``Host``."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
import urllib.request

import pytest
from aiohttp import ClientSession, WSServerHandshakeError

from ragreview.services.serve_hosts import HostRules, split_host
from tests.serve.conftest import children

REVIEWER = {"Cookie": "ragreview_reviewer=Ann"}
TOKEN = "hosts-token-3"


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("LocalHost", ("localhost", None)),
        ("[::1]:80", ("::1", 80)),
        ("evil.example:8000", ("evil.example", 8000)),
        ("", None),
        ("127.0.0.1:notaport", None),
        ("a@127.0.0.1", None),
        ("127.0.0.1/x", None),
    ],
)
def test_host_headers_are_split(value, parsed):
    assert split_host(value) == parsed


def test_the_rules_without_a_token():
    rules = HostRules(token=False, host="127.0.0.1")
    for host in ("127.0.0.1", "127.0.0.1:8000", "localhost", "localhost:8000", "[::1]"):
        assert rules.host_ok(host), host
    assert rules.host_ok("[::1]:8000") and rules.host_ok("127.9.8.7:1")
    for host in ("evil.example", "evil.example:8000", "10.0.0.1", "0.0.0.0:8000", None, ""):
        assert not rules.host_ok(host), host
    # Origin: an allowed host and the very page served (same host and port)
    assert rules.origin_ok("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert rules.origin_ok("http://localhost", "localhost:80")
    assert not rules.origin_ok("http://evil.example:8000", "evil.example:8000")  # a pair
    assert not rules.origin_ok("http://evil.example", "127.0.0.1:8000")
    assert not rules.origin_ok("http://localhost:3000", "localhost:8000")  # another app
    assert not rules.origin_ok("null", "127.0.0.1:8000")
    assert not rules.origin_ok("file://", "127.0.0.1:8000")


def test_the_rules_with_a_token():
    rules = HostRules(token=True, host="127.0.0.1", allow=["Review.Example"])
    assert rules.host_ok("evil.example:8000")  # the token gates, the Host may be a proxy's
    assert rules.origin_ok("https://review.example", "review.example")
    assert not rules.origin_ok("http://evil.example:8000", "evil.example:8000")
    assert HostRules(token=True, host="10.1.2.3").origin_ok("http://10.1.2.3:8000", "10.1.2.3:8000")


async def test_a_tokenless_server_answers_only_loopback_hosts(serve):
    served = serve()
    port = served.url.rsplit(":", 1)[1]
    for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", f"localhost:{port}", "[::1]"):
        status, page = served.get("/", headers={"Host": host, **REVIEWER})
        assert status == 200 and "<title>ragreview · demo</title>" in page, host
    for host in (f"[::1]:{port}", f"127.3.2.1:{port}"):
        assert served.get("/reviewer", headers={"Host": host})[0] == 200, host

    # DNS rebinding: the attacker's name, with or without its matching Origin
    rebound = {"Host": f"evil.example:{port}", **REVIEWER}
    for path in ("/", "/reviewer", "/static/js/textual.js"):
        status, text = served.get(path, headers=rebound)
        assert status == 403 and "loopback" in text, path
        status, _ = served.get(path, headers={**rebound, "Origin": f"http://evil.example:{port}"})
        assert status == 403, path
    # the sign-in form cannot be posted from there (no cookie comes back)
    post = urllib.request.Request(
        served.url + "/reviewer",
        data=b"reviewer=Eve",
        headers={"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
    )
    try:
        urllib.request.urlopen(post, timeout=10)
        raise AssertionError("posted")
    except urllib.error.HTTPError as err:
        assert err.code == 403 and "Set-Cookie" not in err.headers

    # another site's page, loopback Host: refused; our own page's Origin: answered
    own = {"Host": f"127.0.0.1:{port}", **REVIEWER}
    status, text = served.get("/", headers={**own, "Origin": "http://evil.example"})
    assert status == 403 and "another site" in text and "--allow-host" in text
    assert served.get("/", headers={**own, "Origin": "http://127.0.0.1:1"})[0] == 403
    assert served.get("/", headers={**own, "Origin": f"http://127.0.0.1:{port}"})[0] == 200

    async with ClientSession() as http:
        ws_url = served.url + "/ws?width=80&height=24"
        for headers in (
            {**rebound, "Origin": f"http://evil.example:{port}"},  # the rebinding attack
            rebound,
            {**own, "Origin": "http://evil.example"},
        ):
            with pytest.raises(WSServerHandshakeError) as refused:
                await http.ws_connect(ws_url, headers=headers)
            assert refused.value.status == 403, headers
        assert children(served.process.pid) == []  # no app process started
        # the page's own websocket, with or without the port in the Host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            headers = {**REVIEWER, "Host": host, "Origin": f"http://{host}"}
            socket = await http.ws_connect(ws_url, headers=headers)
            # (the session process starts just after the handshake: give a busy machine time)
            deadline = time.monotonic() + 15
            while not children(served.process.pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert children(served.process.pid) != []
            await socket.close()


async def test_with_a_token_origin_is_checked_against_the_allowed_hosts(serve):
    served = serve("--token", TOKEN, "--allow-host", "review.example")
    proof = hmac.new(TOKEN.encode(), b"ragreview serve session", hashlib.sha256).hexdigest()
    signed = {"Cookie": f"ragreview_auth={proof}; ragreview_reviewer=Ann"}
    # behind a proxy the Host is the proxy's name: the token gates
    proxied = {**signed, "Host": "review.example", "Origin": "https://review.example"}
    assert served.get("/", headers=proxied)[0] == 200
    # a Host+Origin pair that merely match is not enough, token or not
    pair = {**signed, "Host": "evil.example", "Origin": "http://evil.example"}
    assert served.get("/", headers=pair)[0] == 403
    assert served.get("/", headers={"Host": "evil.example"})[0] == 401  # no token: 401


def test_allow_host_without_a_token_is_refused(run_cli, demo_copy):
    out = run_cli("serve", demo_copy, "--allow-host", "review.example")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "Error: --allow-host needs --token or --token-file: without a token only loopback "
        "addresses are answered"
    ]
