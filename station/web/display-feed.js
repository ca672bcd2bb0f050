// The display's data: WS /api/display/live, kept open for as long as the screen is on.
// The token is given once in the URL's fragment (/display#token=TOKEN: a fragment never
// leaves the browser) and kept in localStorage; the fragment is then wiped from the
// address. After a station restart or a network drop the socket reconnects by itself,
// waiting longer between tries up to RETRY_MAX. The station says how often it speaks at
// the least (`alive` seconds: station/api/display.py KEEPALIVE); a socket silent for
// three times that is dropped and opened again, so a cable pulled and put back needs no
// one to touch the screen.

const KEY = "baccarat-display-token";
const RETRY_FIRST = 500;
const RETRY_MAX = 5000;
const SILENCES = 3; // keepalives missed before the socket is given up

/** The token of this screen: the URL fragment's (then kept), or the kept one. */
export function screenToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.has("token")) {
    const given = fragment.get("token").trim();
    try {
      if (given) localStorage.setItem(KEY, given);
      else localStorage.removeItem(KEY);  // "#token=" forgets it
    } catch {
      // no storage (a private window): the token lives as long as the page
    }
    history.replaceState(null, "", location.pathname + location.search);
    if (given) return given;
  }
  try {
    return localStorage.getItem(KEY) || "";
  } catch {
    return "";
  }
}

/** Open the feed: `onDisplay(payload)` for each payload, `onStatus(status, reason)` with
 * "live", "connecting" or "refused" (the token is not accepted: tried again slowly). */
export function connectDisplay({ token, onDisplay, onStatus }) {
  let wait = RETRY_FIRST;
  let ws = null;
  let stale = null;
  let retry = null;
  let alive = 10; // seconds, until the station says

  /** The socket is gone (closed, refused, or silent too long): say so, try again. */
  function lost(refused, reason) {
    clearTimeout(stale);
    clearTimeout(retry);
    onStatus(refused ? "refused" : "connecting", reason);
    retry = setTimeout(open, refused ? RETRY_MAX * 2 : wait);
    wait = Math.min(wait * 2, RETRY_MAX);
  }

  function heard() {
    clearTimeout(stale);
    stale = setTimeout(() => {
      // Silent: a cable is out. A close would wait for an answer that cannot come, so
      // the socket is left to itself and a new one opened.
      const silent = ws;
      silent.onclose = null;
      silent.onmessage = null;
      silent.close();
      lost(false, "silent");
    }, SILENCES * alive * 1000);
  }

  function open() {
    const q = token ? `?${new URLSearchParams({ token })}` : "";
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(`${proto}//${location.host}/api/display/live${q}`);
    heard();
    ws.onmessage = (ev) => {
      const message = JSON.parse(ev.data);
      if (message.alive > 0) alive = message.alive;
      heard();
      if (message.type !== "display") return;  // "alive"
      wait = RETRY_FIRST;
      onStatus("live");
      onDisplay(message.display);
    };
    ws.onclose = (ev) => lost(ev.code === 1008, ev.reason);
  }

  // A screen that wakes (the PC resumed, the tab shown again) reconnects at once.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && ws?.readyState === WebSocket.CLOSED) {
      clearTimeout(retry);
      wait = RETRY_FIRST;
      open();
    }
  });
  open();
}
