// The header: which table, the live connection's status, and who is logged in (the
// token's login and logout). The token lives in sessionStorage only (see api.js).

import { ApiError, api, token } from "./api.js";
import { $, h } from "./dom.js";
import { gameTitle } from "./format.js";
import { canRead } from "./rules.js";

/** `start` (re)connects the page for the token now in use; `stop` disconnects it. */
export function mountSession(store, { start, stop }) {
  async function whoami() {
    store.set({ me: await api("/api/whoami") });
  }

  async function login(ev) {
    ev.preventDefault();
    const value = $("token").value.trim();
    $("login-error").textContent = "";
    if (!value) return;
    token.set(value);
    try {
      await whoami();
    } catch (err) {
      token.clear();
      $("login-error").textContent = err.status === 401 ? "This token is not known to the station." : err.message;
      return;
    }
    $("token").value = "";
    if (await refuseDisplayToken(value)) return;
    start();
  }

  /** A `display` token reads only the players' display: instead of a dashboard whose every
   * read is refused (403), say where it belongs, with the link that opens it. */
  async function refuseDisplayToken(value) {
    if (store.get().me?.role !== "display") return false;
    token.clear();
    const link = `${location.origin}/display#token=${encodeURIComponent(value)}`;
    const error = $("login-error");
    error.replaceChildren(
      "This is a display token: it opens the players' display, not the dashboard. Open ",
      h("a", { href: link, text: "/display" }),
      " on the table's screen, or log in here with a viewer or supervisor token.",
    );
    await whoami();
    return true;
  }

  async function logout() {
    token.clear();
    stop();
    await whoami().catch(() => {});
    start();
  }

  /** Who this page's token is; a token revoked since the last visit is forgotten. Any other
   * failure is thrown (and the token kept: the station may only be busy). */
  async function restore() {
    try {
      await whoami();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
      token.clear();
      await whoami();
      $("login-error").textContent = "Your token is no longer valid: log in again.";
    }
    const kept = token.get();
    if (kept) await refuseDisplayToken(kept);
    $("login-button").disabled = false;
  }

  function renderMe({ me }) {
    $("table-id").textContent = me.table;
    document.title = `Table ${me.table} · Baccarat station`;
    const named = me.name != null;
    $("who").hidden = !named;
    $("login").hidden = named;
    $("who-name").textContent = named ? `${me.name} (${me.role})` : "";
    document.body.dataset.role = me.acts_as || "anonymous";
    const readable = canRead(me);
    document.body.classList.toggle("locked", !readable);
    $("main").hidden = !readable;
  }

  /** The game the table plays (from its state), beside the table's name. */
  function renderGame({ state, me }) {
    const game = state?.game ? gameTitle(state.game) : "";
    $("game-name").textContent = game ? `· ${game}` : "";
    if (me?.table) document.title = `Table ${me.table}${game ? ` (${game})` : ""} · Baccarat station`;
  }

  /** The page's link to the station, and whether the table can be dealt through it: a
   * live page whose card reader is down is not all green ("Live · reader disconnected"). */
  function renderConn({ conn: { status, reason }, reader }) {
    const el = $("conn");
    const readerDown = status === "live" && reader && reader.driver !== "none" && !reader.connected;
    el.className = `conn conn-${status}${readerDown ? " conn-warn" : ""}`;
    el.textContent = status === "live" ? `Live${readerDown ? " · reader disconnected" : ""}`
      : status === "refused" ? `Not allowed to watch: ${reason || "log in"}`
      : `Disconnected: reconnecting…${reason ? ` (${reason})` : ""}`;
    document.body.classList.toggle("offline", status !== "live");
  }

  $("login").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  store.subscribe(["me"], renderMe);
  store.subscribe(["conn", "reader"], renderConn);
  store.subscribe(["state", "me"], renderGame);
  return { restore, logout };
}
