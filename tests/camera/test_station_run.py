"""`station run` with the camera driver on a video file: the cards it sees are judged
and journaled like a shoe's."""

from __future__ import annotations

import signal
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from calibration.synthetic import make_clip, shuffled
from station.live.journal import Journal
from station.shared.tokens import new_token, token_hash
from tests.camera.kit import TEST_SCENE, model_file
from tests.conftest import spawn_run
from tests.netkit import free_port


@pytest.mark.slow
def test_station_run_reads_a_video_file(tmp_path: Path) -> None:
    cards = shuffled(31, 8)
    # 1.5 s of empty felt first, played at the clip's own pace: time to open a shoe.
    clip, _truth = make_clip("anglo", cards, replace(TEST_SCENE, lead_frames=45))
    port = free_port()
    token = new_token()
    config = tmp_path / "station.toml"
    config.write_text(f"""
[table]
id = "camera-1"
gated = false
[reader]
driver = "camera"
[reader.camera]
source = "{clip}"
model = "{model_file("anglo")}"
realtime = true
[journal]
path = "{tmp_path / "journal.db"}"
[api]
bind = "127.0.0.1:{port}"
public_read = true
token_file = "{tmp_path / "tokens.toml"}"
tokens = [{{name = "dealer", role = "dealer", sha256 = "{token_hash(token)}"}}]
""")
    proc = spawn_run(config)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                if httpx.get(f"{url}/api/state").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the station did not start"
            time.sleep(0.05)
        shoe = httpx.post(
            f"{url}/api/events", json={"type": "shoe"}, headers={"Authorization": f"Bearer {token}"}
        )
        assert shoe.json()["ok"]
        deadline = time.monotonic() + 60
        while True:
            reader = httpx.get(f"{url}/api/state").json()["reader"]
            if reader["passages"] == len(cards) and "ended" in reader["detail"]:
                break
            assert time.monotonic() < deadline, str(reader)
            time.sleep(0.1)
        assert reader["driver"] == "camera" and reader["unreadable"] == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    with Journal(tmp_path / "journal.db") as journal:
        assert journal.verify().ok
        rows = list(journal.rows())
    shoe_seq = next(r.seq for r in rows if r.kind == "event" and r.event["type"] == "shoe")
    read = [r for r in rows if r.source == "reader" and r.kind == "event"]
    assert [r.event["card"] for r in read] == cards
    assert all({"frame", "confidence"} <= set(r.event) for r in read)
    assert [r.event["frame"] for r in read] == sorted(r.event["frame"] for r in read)
    late = [r.event["card"] for r in read if r.seq < shoe_seq]
    assert not late, f"cards before the shoe opened: {late}"  # the lead gives time enough
    assert all(r.verdict is not None and r.verdict["ok"] for r in read)
    notices = [r.event["message"] for r in rows if r.kind == "notice"]
    assert any("ended after" in m for m in notices)
