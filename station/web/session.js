// The header: which table, the live connection's status, and who is logged in (the
// token's login and logout). The token lives in sessionStorage only (see api.js).

import { ApiError, api, token } from "./api.js";
import { $, h } from "./dom.js";
import { gameTitle, roleWords } from "./format.js";
import { t } from "./i18n.js";
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
      $("login-error").textContent = err.status === 401 ? t("ui.token_unknown") : err.message;
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
      t("ui.display_token_before"),
      h("a", { href: link, text: "/display" }),
      t("ui.display_token_after"),
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
      $("login-error").textContent = t("ui.token_expired");
    }
    const kept = token.get();
    if (kept) await refuseDisplayToken(kept);
    $("login-button").disabled = false;
  }

  function renderMe({ me }) {
    $("table-title").textContent = t("dash.title", { name: me.table });
    document.title = t("dash.doc_title", { name: me.table });
    const named = me.name != null;
    $("who").hidden = !named;
    $("login").hidden = named;
    $("who-name").textContent = named ? t("ui.who", { name: me.name, role: roleWords(me.role) }) : "";
    document.body.dataset.role = me.acts_as || "anonymous";
    const readable = canRead(me);
    document.body.classList.toggle("locked", !readable);
    $("main").hidden = !readable;
  }

  /** The game the table plays (from its state), beside the table's name. */
  function renderGame({ state, me }) {
    const game = state?.game ? gameTitle(state.game) : "";
    $("game-name").textContent = game ? `· ${game}` : "";
    if (me?.table) document.title = game ? t("dash.doc_title_game", { name: me.table, game }) : t("dash.doc_title", { name: me.table });
  }

  /** The page's link to the station, and whether the table can be dealt through it: a
   * live page whose card reader is down is not all green ("Live · reader disconnected"). */
  function renderConn({ conn: { status, reason }, reader }) {
    const el = $("conn");
    const readerDown = status === "live" && reader && reader.driver !== "none" && !reader.connected;
    el.className = `conn conn-${status}${readerDown ? " conn-warn" : ""}`;
    el.textContent = status === "live" ? t(readerDown ? "ui.live_reader_down" : "ui.live")
      : status === "refused" ? t("ui.not_allowed", { reason: reason || t("ui.log_in_to_watch") })
      : reason ? t("ui.reconnecting_because", { reason }) : t("ui.reconnecting");
    document.body.classList.toggle("offline", status !== "live");
  }

  $("login").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  store.subscribe(["me"], renderMe);
  store.subscribe(["conn", "reader"], renderConn);
  store.subscribe(["state", "me"], renderGame);
  return { restore, logout };
}
