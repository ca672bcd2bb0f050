"""A network cable between a browser and a station that a test can pull: a TCP relay on
127.0.0.1 whose `silence()` stops every byte both ways while keeping the connections open
(a cable pulled: no one hears of it), and `restore()` puts it back."""

from __future__ import annotations

import select
import socket
import threading
from types import TracebackType


class Cable:
    """Relay connections to `127.0.0.1:upstream` from `self.port`."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.flowing = threading.Event()
        self.flowing.set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def silence(self) -> None:
        self.flowing.clear()

    def restore(self) -> None:
        self.flowing.set()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            client.close()
            return
        ends = {client: server, server: client}
        try:
            while not self._closed:
                self.flowing.wait()
                readable, _, _ = select.select(list(ends), [], [], 0.1)
                for sock in readable:
                    if not self.flowing.is_set():
                        break  # pulled between the select and the read: hold the bytes
                    data = sock.recv(65536)
                    if not data:
                        return
                    ends[sock].sendall(data)
        except OSError:
            return
        finally:
            client.close()
            server.close()

    def close(self) -> None:
        self._closed = True
        self.flowing.set()
        self._listener.close()

    def __enter__(self) -> Cable:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
