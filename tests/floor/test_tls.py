"""A station publishing over TLS (a tls:// url and the CA in `[floor] ca_file`), and one
refused for not trusting the broker's certificate: the rows wait in its journal."""

from __future__ import annotations

import asyncio
import secrets
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.broker import Broker, StationUser, free_port, render_config
from tests.floor.kit import (
    SITE,
    FloorBroker,
    Publisher,
    Running,
    append_rows,
    assert_exactly_once,
    create_stream,
    new_journal,
    station_floor,
    table_count,
    wait_for,
    wait_published,
)

pytestmark = pytest.mark.floor


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(folder: Path) -> None:
    """A CA, and the broker's certificate for 127.0.0.1 signed by it."""
    folder.mkdir(parents=True, exist_ok=True)
    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=floor CA",
        "-keyout", "ca.key", "-out", "ca.crt", cwd=folder,
    )  # fmt: skip
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
        "-keyout", "broker.key", "-out", "broker.csr", cwd=folder,
    )  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName = IP:127.0.0.1\n")
    openssl(
        "x509", "-req", "-in", "broker.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "broker.crt", cwd=folder,
    )  # fmt: skip


@pytest.fixture
def tls_floor(tmp_path: Path) -> Iterator[FloorBroker]:
    certs = tmp_path / "certs"
    make_certificates(certs)
    port = free_port()
    admin = secrets.token_hex(8)
    station = StationUser(SITE, "table-1", "table-1", secrets.token_hex(8))
    tls = {"cert_file": str(certs / "broker.crt"), "key_file": str(certs / "broker.key")}
    config = tmp_path / "nats-server.conf"
    config.write_text(render_config(port, tmp_path / "store", [station], admin, tls=tls))
    broker = Broker(config, port, log=tmp_path / "nats.log")
    broker.start()
    ca = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    floor = FloorBroker(broker, admin, {"table-1": station}, ca)
    try:
        yield floor
    finally:
        broker.stop()


def test_publishing_over_tls(tls_floor: FloorBroker, tmp_path: Path) -> None:
    url = tls_floor.url
    assert url.startswith("tls://")
    ca = tmp_path / "certs" / "ca.crt"
    asyncio.run(create_stream(tls_floor))
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 20)
    # Without the CA the station does not trust the broker: nothing is sent.
    untrusting = station_floor(tls_floor, "table-1")
    with Running(Publisher(untrusting, "table-1", journal.path)) as running:
        wait_for(lambda: "certificate" in running.publisher.status.detail, what="the reason")
        assert running.publisher.status.state == "connecting"
        assert running.publisher.published == 0
    assert asyncio.run(table_count(tls_floor, "table-1")) == 0
    trusting = station_floor(tls_floor, "table-1", ca_file=ca)
    with Running(Publisher(trusting, "table-1", journal.path)):
        wait_published(tls_floor, "table-1", journal.last_seq)
    assert_exactly_once(tls_floor, "table-1", journal.path)
