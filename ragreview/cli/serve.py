"""``ragreview serve``: the review UI in browsers, for a team on one machine."""

from __future__ import annotations

import os
from pathlib import Path

import click

from . import cli
from .common import user_errors
from .options import dataset_option, db_option
from .session import open_target


def _token(token: str | None, token_file: str | None) -> str | None:
    if token_file is not None:
        try:
            lines = Path(token_file).read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise click.ClickException(f"{token_file}: {err.strerror}") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise click.ClickException(f"{token_file}: the first line holds no token")
    return token or None


@cli.command()
@click.argument("path")
@db_option
@dataset_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to listen on.")
@click.option("--token", metavar="TOKEN", help="Secret every browser must present.")
@click.option(
    "--token-file",
    metavar="FILE",
    help="Read the token from FILE's first line (keeps it out of the process list).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name browsers use to reach the server (a proxy's, the machine's "
    "address); pages from it may connect. Needs a token. Repeatable.",
)
@click.option("--blind", is_flag=True, help="Hide the judge's labels until revealed.")
def serve(
    path: str,
    db: str | None,
    dataset: str | None,
    host: str,
    port: int,
    token: str | None,
    token_file: str | None,
    allow_hosts: tuple[str, ...],
    blind: bool,
) -> None:
    """Serve the review UI of PATH to browsers; each browser is one reviewer.

    Open http://HOST:PORT/ (with ?token=TOKEN the first time when there is a token).
    Listening anywhere but on loopback needs a token; without one, only requests
    addressed to a loopback name (127.0.0.1, localhost, [::1]) are answered.
    """
    from ..services.serve import ReviewServer
    from ..services.serve_hosts import is_loopback

    secret = _token(token, token_file)
    if secret is None and not is_loopback(host):
        raise click.ClickException(
            f"serving on {host} needs --token or --token-file (anyone who reaches it "
            "could change labels); use 127.0.0.1 behind SSH forwarding instead"
        )
    if secret is None and allow_hosts:
        raise click.ClickException(
            "--allow-host needs --token or --token-file: without a token only loopback "
            "addresses are answered"
        )
    with user_errors():
        opened = open_target(path, db, dataset)
    from ..services.serve_sessions import release_dead_leases
    from ..store import browse

    freed = release_dead_leases(opened.db)  # sessions killed with an earlier server
    if freed:
        click.echo(
            f"released {freed} lease(s) of sessions that ended with an earlier server", err=True
        )
    db_path = browse.database_path(opened.db)
    opened.db.conn.close()
    server = ReviewServer(
        db_path,
        opened.dataset,
        host=host,
        port=port,
        token=secret,
        blind=blind,
        allow_hosts=allow_hosts,
    )
    try:
        server.serve()
    except OSError as err:  # the port is taken, the address is not this machine's, …
        reason = os.strerror(err.errno) if err.errno else str(err)
        raise click.ClickException(f"cannot listen on {host}:{port}: {reason}") from None
