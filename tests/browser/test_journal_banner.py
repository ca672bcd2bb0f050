"""A journal that cannot be written, on a real full disk, as the pit sees it: no row can
say so, so the station's state does, and the dashboard shows it at once; once the disk
has room again the banner goes and the table is suspended for a supervisor."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.pit import action, login, send, start_round
from tests.diskkit import fill, padded_void, small_disk, until_refused
from tests.service.kit import make_config, serve


def test_a_full_disk_is_shown_until_the_journal_is_written_again(
    page: Page, tmp_path: Path
) -> None:
    with small_disk(tmp_path, "4m") as disk:
        config, tokens = make_config(tmp_path, allow_rig=True)
        journal = config.journal.model_copy(update={"path": disk / "journal.db"})
        with serve(config.model_copy(update={"journal": journal}), tokens) as live:
            start_round(live)
            login(page, live, "supervisor")
            journal_banner = page.locator("#journal-banner")
            expect(journal_banner).to_be_hidden()
            void = action(page, "void")
            expect(void).to_be_enabled()
            filler = fill(disk)
            r = until_refused(lambda: live.post(padded_void(), "supervisor"))
            assert r.status_code == 503, r.text
            expect(journal_banner).to_be_visible()
            assert journal_banner.get_attribute("role") == "alert"
            expect(page.locator("#journal-reason")).to_contain_text("disk full; free space on")
            expect(page.locator("#journal-since")).to_contain_text("since ")
            expect(journal_banner).to_contain_text("Stop the deal")
            expect(page.locator("#banner")).to_be_hidden()  # not a suspension (yet)

            expect(page.locator("#journal-reason")).not_to_contain_text("cannot be written")
            expect(page.locator("#journal-reason")).not_to_contain_text(" — ")
            expect(void).to_be_disabled()  # every event would be refused

            filler.unlink()  # the writer tries again within 5 s (its backoff), then replays
            expect(journal_banner).to_be_hidden(timeout=20_000)
            expect(page.locator("#banner")).to_be_visible()
            expect(page.locator("#banner-detail")).to_contain_text("SCANNER_FAULT")
            expect(page.locator("#banner-detail")).to_contain_text(
                "the journal could not be written from"
            )
            assert send(live, {"type": "resume"})["ok"]
            expect(page.locator("#banner")).to_be_hidden()
