// The supervisor dashboard: login, the live table over WS /api/live, the suspension
// workflow, the roads, the shoe's history, the journal and the odds.
// Plain ES modules, no framework: it must stay quick on a modest dealer PC. This file only
// wires them up: the store (store.js) holds what the station said, feed.js brings it in,
// one module per panel draws it, and the station's rules are read, never re-derived.

import { api, token } from "./api.js";
import { mountActions } from "./actions.js";
import { mountBanner } from "./banner.js";
import { $, h } from "./dom.js";
import { createFeed } from "./feed.js";
import { mountHistory } from "./history.js";
import { chosenLanguage, mountLanguageSwitch, t, useLanguage } from "./i18n.js";
import { mountJournal } from "./journal.js";
import { connectLive } from "./live.js";
import { mountOdds } from "./odds.js";
import { mountPace } from "./pace.js";
import { mountProtection } from "./protection.js";
import { mountRoads } from "./roads.js";
import { mountRound } from "./round.js";
import { canRead } from "./rules.js";
import { mountSession } from "./session.js";
import { createStore, Rows } from "./store.js";

const store = createStore();
const feed = createFeed(store);
let live = null;

function stop() {
  if (live) live.close();
  live = null;
}

/** (Re)connect for the token now in use, from an empty journal. */
function start() {
  stop();
  store.set({ rows: new Rows() });
  if (!canRead(store.get().me)) {
    feed.onStatus("refused", t("ui.log_in_to_watch"));
    store.set({ state: null });
    return;
  }
  live = connectLive({ token: token.get(), ...feed });
}

/** The page's language before anything is drawn: the person's, else the browser's, else
 * the station's `[dashboard] language` (/api/explanations says it). */
function language(rules) {
  useLanguage(chosenLanguage(rules.language));
  mountLanguageSwitch($("language"));
}

let session = null;

async function main() {
  const rules = await api("/api/explanations");
  language(rules);
  session = mountSession(store, { start, stop });
  mountBanner(store);
  mountProtection(store);
  mountRound(store);
  mountActions(store, { onUnauthorized: () => session.logout() });
  mountOdds(store);
  mountPace(store);
  mountRoads(store);
  mountHistory(store);
  mountJournal(store);
  store.set({ rules });
  await session.restore();
  start();
}

main().catch((err) => {
  document.body.prepend(h("p", { class: "fatal", role: "alert", text: t("dash.fatal", { error: err.message }) }));
});
