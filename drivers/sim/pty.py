"""The shoe's end of a pseudo-terminal: a serial port with no hardware behind it.

`station sim-shoe` and the hardware-in-the-loop tests play a shoe into the master side;
the real serial driver opens the slave side (through a stable symlink, as it would open
`/dev/baccarat-shoe`). Closing the master is a pulled USB cable: the reader's next read
fails. A fresh pty behind the same symlink is the port coming back.
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import time
import tty
from pathlib import Path

#: How long after a reader opens the port before bytes are sent (see `wait_reader`).
SETTLE = 0.2
#: How long written bytes may take to reach the reader's side of the pty (see `drain`).
IN_FLIGHT = 0.02


class PtyPort:
    """A pty whose slave path is linked at `link` (if given) while it is plugged in."""

    def __init__(self, link: Path | None = None) -> None:
        self.link = link
        self.master = -1
        self.slave_name = ""
        self._last_write = 0.0
        self.plug()

    @property
    def plugged(self) -> bool:
        return self.master >= 0

    def plug(self) -> None:
        """A new pty, in raw mode (no echo, no CR/LF translation), linked at `link`."""
        if self.plugged:
            return
        master, slave = os.openpty()
        tty.setraw(slave)
        self.slave_name = os.ttyname(slave)
        os.close(slave)  # the reader opens it; while nobody has it open the master sees POLLHUP
        self.master = master
        if self.link is not None:
            tmp = self.link.with_name(self.link.name + ".new")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(self.slave_name)
            tmp.replace(self.link)  # atomic: a reader never sees the link missing or half made

    def unplug(self) -> None:
        """Close the master (the reader's reads fail) and remove the link."""
        if self.link is not None and self.link.is_symlink():
            self.link.unlink()
        if self.plugged:
            os.close(self.master)
            self.master = -1

    def reader_attached(self) -> bool:
        """True while some program has the slave open (the master reports no hang-up)."""
        if not self.plugged:
            return False
        poll = select.poll()
        poll.register(self.master, select.POLLHUP)
        return not any(ev & select.POLLHUP for _, ev in poll.poll(0))

    def wait_reader(self, timeout: float | None = None, settle: float = SETTLE) -> bool:
        """Block until a reader has opened the port (False if `timeout` seconds pass first).

        A serial port's open ends by flushing its input (pyserial does, so that a reader
        never takes stale bytes for a card), and the master cannot see when that is done:
        bytes written in between would be lost. So this waits `settle` seconds more once
        the port is open; a shoe reader plugged in mid-card loses that card the same way.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.reader_attached():
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        time.sleep(settle)
        return True

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until the reader has taken in every byte written (False on timeout).

        Closing the master discards what the reader has not read yet, so a rig that pulls
        the cable right after a card would lose that card. The count of unread bytes is
        only visible from the slave side, so this opens the slave briefly (a second open
        changes nothing for the reader). The kernel moves written bytes to the slave's
        input a moment after the write, so an empty input only counts once it has been
        seen empty `IN_FLIGHT` seconds after the last write, and twice in a row.
        """
        if not self.plugged:
            return True
        deadline = time.monotonic() + timeout
        try:
            fd = os.open(self.slave_name, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            time.sleep(max(0.0, self._last_write + IN_FLIGHT - time.monotonic()))
            empty = 0
            while empty < 2:
                unread = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
                empty = empty + 1 if unread == 0 else 0
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
            return True
        finally:
            os.close(fd)

    def write(self, data: bytes) -> None:
        """Bytes from the shoe to the reader."""
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view) :]
        self._last_write = time.monotonic()

    def read(self, timeout: float = 0.0) -> bytes:
        """What the reader wrote to the shoe (its card-stop command); b"" if nothing yet."""
        if not self.plugged:
            return b""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self.master, 1024)
        except OSError:  # EIO: no reader has the slave open
            return b""

    def close(self) -> None:
        self.unplug()
