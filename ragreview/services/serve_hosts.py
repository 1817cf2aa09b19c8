"""Which requests ``ragreview serve`` answers, by their ``Host`` and ``Origin`` headers.

Without a token nothing but loopback may reach the server, and a browser is the only
client that matters: a page of another site can make it send requests to 127.0.0.1,
directly or through DNS rebinding (the attacker's name resolving to 127.0.0.1, so the
browser sends ``Host: evil.example`` and ``Origin: http://evil.example``). So:

- without a token, the ``Host`` must be a loopback name or address (``localhost``,
  ``127.x.y.z``, ``[::1]``, any port): a rebound name is refused;
- with a token, the token gates every request and the ``Host`` may be any name (a
  proxy's, the machine's);
- an ``Origin``, when a request carries one, must name an allowed host (loopback, the
  ``--host`` served on unless it is 0.0.0.0 or ::, the machine's name then, and each
  ``--allow-host``), never merely match the request's own ``Host`` (a rebinding page
  sends a matching pair); and it must be this server's own page (same host and port as
  the request), so another local web app's page cannot drive it either.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback(host: str) -> bool:
    """``localhost``, any 127.x.y.z, ``::1`` (with or without brackets)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def _is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def split_host(value: str | None) -> tuple[str, int | None] | None:
    """A ``Host`` header (``[::1]:8000``, ``LocalHost``) as (lower-case name without
    brackets, port or None); None when it is not a host[:port] at all."""
    if not value or any(c in value for c in "/?#@ \\"):
        return None
    try:
        parts = urlsplit("//" + value)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname.rstrip("."), port


class HostRules:
    """The Host and Origin rules of one server (see the module's docstring)."""

    def __init__(self, *, token: bool, host: str, allow: Iterable[str] = ()) -> None:
        self.token = token
        names = {name.lower().strip("[]").rstrip(".") for name in allow}
        if _is_unspecified(host):  # 0.0.0.0: browsers may use the machine's name
            names.add(socket.gethostname().lower())
        elif not is_loopback(host):
            names.add(host.lower().strip("[]"))
        self.names = frozenset(n for n in names if n)

    def allowed_name(self, name: str) -> bool:
        return is_loopback(name) or name in self.names

    def host_ok(self, host: str | None) -> bool:
        """Without a token only a loopback ``Host``; with one, any well-formed one."""
        parsed = split_host(host)
        if parsed is None:
            return False
        return self.token or is_loopback(parsed[0])

    def origin_ok(self, origin: str, host: str | None) -> bool:
        """An ``Origin`` of an allowed host that is this server's own page."""
        try:
            parts = urlsplit(origin)
            origin_port = parts.port
        except ValueError:
            return False
        name = (parts.hostname or "").rstrip(".")
        if parts.scheme not in DEFAULT_PORTS or not name or not self.allowed_name(name):
            return False
        served = split_host(host)
        if served is None:
            return False
        default = DEFAULT_PORTS[parts.scheme]
        return (name, origin_port or default) == (served[0], served[1] or default)

    def described(self) -> str:
        """The hosts pages may come from, for the startup line."""
        return ", ".join(["localhost", "127.0.0.1", "[::1]", *sorted(self.names)])
