"""Receive the dealer station's webhooks: check the signature, drop replays and duplicates.

Standard library only; copy it into a game server. The station signs each POST's exact
body bytes (Stripe's scheme):

    X-Station-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>
    X-Station-Event:     round_result | round_voided | shoe_started | shoe_finished
                         | suspended | resumed
    X-Station-Delivery:  the event's id, "{table}:{journal}:{epoch}:{seq}:{type}" (the
                         same on every retry)

An id is unique for ever: it names the station's journal and the journal's epoch besides
the row. A journal restored from a backup without the rows after it numbers its rows again
from the backup's end; the restore begins a new epoch, so a seq seen before comes with
another id. Deduplicate on the whole id, never on `seq`, nor on `shoe` and `round` alone.

`verify(body, header, secret)` says whether a delivery is genuine and fresh. Run the file
to listen (`STATION_WEBHOOK_SECRET` holds the secret, as the station's `secret =
"env:..."` or the contents of its `secret_file`, surrounding whitespace stripped):

    STATION_WEBHOOK_SECRET=... python examples/verify_webhook.py 127.0.0.1 9000

It answers 204 to a genuine event (a duplicate too: it was handled already), 400 to
anything else; the station retries on anything but a 2xx.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import http.server
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

#: How far a signature's timestamp may be from the receiver's clock (seconds).
TOLERANCE = 300


def verify(body: bytes, header: str, secret: bytes, tolerance: int = TOLERANCE) -> bool:
    """True if `header` (X-Station-Signature) signs exactly `body` with `secret`, and its
    timestamp is within `tolerance` seconds of now (an old delivery replayed is refused)."""
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if sep:
            fields.setdefault(key, []).append(value)
    try:
        timestamp = int(fields["t"][0])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - timestamp) > tolerance:
        return False
    expected = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, given) for given in fields.get("v1", []))


def make_server(
    host: str,
    port: int,
    secret: bytes,
    on_event: Callable[[dict[str, Any]], None],
    tolerance: int = TOLERANCE,
) -> http.server.ThreadingHTTPServer:
    """An HTTP server that hands each genuine, first-seen event to `on_event` (in the order
    received; the station sends one endpoint's events one at a time, in journal order)."""
    seen: set[str] = set()  # whole ids handled; a real game server keeps them durably
    lock = threading.Lock()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            header = self.headers.get("X-Station-Signature", "")
            if not verify(body, header, secret, tolerance):
                self.send_error(400, "bad or stale signature")
                return
            event = json.loads(body)
            with lock:
                first = event["id"] not in seen
                if first:
                    on_event(event)  # settle here, before the id is recorded as handled
                    seen.add(event["id"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return http.server.ThreadingHTTPServer((host, port), Receiver)


def main(argv: list[str]) -> int:
    host = argv[0] if argv else "127.0.0.1"
    port = argv[1] if len(argv) > 1 else "9000"
    secret = os.environ.get("STATION_WEBHOOK_SECRET", "").strip().encode()
    if len(secret) < 32:
        print("set STATION_WEBHOOK_SECRET to the endpoint's secret (32 bytes or more)")
        return 2

    def show(event: dict[str, Any]) -> None:
        print(event["id"], json.dumps(event, sort_keys=True), flush=True)

    server = make_server(host, int(port), secret, show)
    print(f"listening on http://{host}:{port}/", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
