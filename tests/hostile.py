"""What a hostile probe sends to either service (the station and the floor), and how their
answers and logs are judged: never a 500, never a traceback, a line of the log each at
most, and HEAD answered wherever GET is."""

from __future__ import annotations

import re
import socket

import httpx

#: Requests no route serves, or serves with a 4xx: (method, path and query).
CORPUS: list[tuple[str, str]] = [
    ("GET", "/web/" + "a" * 300),  # a name too long for the file system
    ("GET", "/web/" + "b" * 300 + ".js"),
    ("GET", "/web/" + "c/" * 2100),  # a path over 4,096 bytes
    ("GET", "/web/" + "d" * 255 + "/" + "e" * 255 + ".css"),
    ("GET", "/" + "f" * 5000),
    ("GET", "/api/" + "g" * 5000),
    ("GET", "/web/%00"),
    ("GET", "/web/%ff%fe.js"),
    ("GET", "/web/..%2f..%2f..%2fetc%2fpasswd"),
    ("GET", "/web/%2e%2e/%2e%2e/pyproject.toml"),
    ("GET", "/web/index.html%0AWARNING%20station.table:%20forged"),
    ("HEAD", "/web/" + "i" * 300),
    ("POST", "/web/app.js"),
    ("DELETE", "/"),
    ("OPTIONS", "/api/health"),
]
#: Queries no route reads: answered as without them (never a 500).
ODD_QUERIES = [
    "/api/health?" + "q=" + "h" * 5000,
    "/api/health?%00=%ff&a=%zz",
    "/?" + "&".join(f"k{i}=v" for i in range(1000)),
]
#: A text line of either service's log (outside journald): time, level, logger, words.
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [A-Z]+ [\w.]+: ")


def send(url: str, method: str, target: str, headers: dict[str, str] | None = None) -> int:
    """`method target` sent as is (no client normalising the path), its status."""
    host, port = url.removeprefix("http://").split(":")
    head = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if method == "POST":
        head.append("Content-Length: 0")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def refused_without_500(url: str, corpus: list[tuple[str, str]] = CORPUS) -> list[int]:
    """Send the corpus; every status, each asserted a 4xx."""
    statuses = []
    for method, target in corpus:
        status = send(url, method, target)
        assert 400 <= status < 500, (method, target[:80], status)
        statuses.append(status)
    return statuses


def head_is_get(url: str, path: str, headers: dict[str, str] | None = None) -> None:
    """HEAD `path` is answered as GET is: the same status and type, no body, and the
    same length when GET's is fixed."""
    got = httpx.get(f"{url}{path}", headers=headers)
    head = httpx.head(f"{url}{path}", headers=headers)
    assert head.status_code == got.status_code, (path, head.status_code, got.status_code)
    assert head.content == b""
    assert head.headers.get("content-type") == got.headers.get("content-type"), path
    if path == "/" or path.startswith("/web/"):  # a file: the same length
        assert head.headers["content-length"] == got.headers["content-length"], path


def assert_quiet(log: str, requests: int) -> None:
    """The log of a corpus: no traceback, lines of the log's own format only, at most
    one a request (beside a few of the start)."""
    lines = log.splitlines()
    assert "Traceback" not in log and "Exception in ASGI" not in log, log[-4000:]
    assert all(LINE.match(line) for line in lines), [x[:200] for x in lines if not LINE.match(x)]
    assert len(lines) <= requests + 4, "\n".join(x[:200] for x in lines)
