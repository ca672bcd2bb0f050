// What comes from the station into the store: the live messages (hello, rows, states
// with the reader's status in each, the connection's status), the journal's recent rows,
// and the reads fetched again when a round ends or a shoe changes (history and roads, odds).

import { api } from "./api.js";
import { actionLine, doneWords } from "./format.js";
import { t } from "./i18n.js";
import { actionWords } from "./rules.js";
import { say } from "./store.js";

const JOURNAL_LOAD = 200; // rows loaded on connecting (the journal panel shows as many)

export function createFeed(store) {
  let refreshKey = "";
  let oddsRefreshKey = "";
  let historyDue = false; // a refresh of the history waits in refreshTimer
  let refreshTimer = null;
  let fetchingSeq = null;
  let oddsAsked = 0; // the latest odds request: an older answer that comes late is dropped

  function addRows(rows) {
    const { rows: book } = store.get();
    if (book.add(rows)) store.set({ rows: book });
  }

  function onHello(message, resumed) {
    setState(message.state);
    if (!resumed) loadJournal(message.seq);
    refresh(true);
  }

  function onRow(row) {
    addRows([row]);
    const { rules } = store.get();
    const words = actionWords(rules, row.event.type);
    if (words) showAction(row, doneWords(words.done, row.event, store.get().state?.game));
  }

  function onState(state) {
    setState(state);
    refresh(false);
  }

  function onStatus(status, reason) {
    store.set({ conn: { status, reason: reason || "" } });
  }

  /** The last dealer or supervisor action, with who did it (from its journal row). */
  function showAction(row, done) {
    const { reader } = store.get();
    const { text, bad } = actionLine({ ...row, done, card: row.event.card }, reader?.driver);
    say(store, text, bad);
  }

  /** The state, and the reader's status that comes with it (so the reader field is as live
   * as the table: a fault, a port lost or back each publish a state). */
  function setState(state) {
    store.set({ state, reader: state.reader || null });
    const seq = state.suspension?.since_seq;
    if (seq && !store.get().rows.at(seq) && fetchingSeq !== seq) fetchRow(seq);
  }

  /** The row a suspension started at, for the banner's time (a detail: it stands without). */
  async function fetchRow(seq) {
    fetchingSeq = seq;
    try {
      const { events } = await api(`/api/journal?after=${seq - 1}&limit=1`);
      if (events.length) {
        const { rows } = store.get();
        rows.note(events[0]);
        store.set({ rows });
      }
    } catch {
      /* the banner stands without the time */
    } finally {
      fetchingSeq = null;
    }
  }

  async function loadJournal(seq) {
    const after = Math.max(0, seq - JOURNAL_LOAD);
    try {
      const { events } = await api(`/api/journal?after=${after}&limit=${JOURNAL_LOAD}`);
      addRows(events);
    } catch (err) {
      say(store, t("dash.feed_failed", { what: t("dash.what_journal"), error: err.message }), true);
    }
  }

  /** Fetch the reads again when the shoe, the rounds or the round in progress changed;
   * the odds also with each card out while no round is in progress (the burn), since
   * they are then the next round's from the cards left, which the page shows beside them. */
  function refresh(force) {
    const st = store.get().state;
    const key = [st.shoes_started, st.in_play, st.rounds_complete, st.voided.length, Boolean(st.round)].join(":");
    const oddsKey = `${key}:${st.round ? "" : st.cards_out}`;
    const rounds = force || key !== refreshKey;
    if (!rounds && oddsKey === oddsRefreshKey) return;
    refreshKey = key;
    oddsRefreshKey = oddsKey;
    historyDue ||= rounds;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      if (historyDue) loadHistory();
      historyDue = false;
      loadOdds();
    }, force ? 0 : 100);
  }

  async function loadHistory() {
    try {
      store.set({ history: await api("/api/history") });
    } catch (err) {
      say(store, t("dash.feed_failed", { what: t("dash.what_history"), error: err.message }), true);
    }
  }

  /** The odds take a moment (the first time, seconds): the panel says it is working them
   * out, keeping the last answer on show meanwhile. */
  async function loadOdds() {
    const asked = ++oddsAsked;
    store.set({ odds: { ...store.get().odds, pending: true, error: null } });
    try {
      const answer = await api("/api/odds");
      if (asked === oddsAsked) store.set({ odds: { answer, pending: false, error: null } });
    } catch (err) {
      if (asked === oddsAsked) store.set({ odds: { ...store.get().odds, pending: false, error: err.message } });
    }
  }

  return { onHello, onRow, onState, onStatus };
}
