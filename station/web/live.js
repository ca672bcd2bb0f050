// WS /api/live with reconnection: after a drop it reconnects with ?after=SEQ, so the
// rows committed meanwhile are sent first and none is missed. No polling.

export function connectLive({ token, onHello, onRow, onState, onStatus }) {
  let after = -1;
  let ws = null;
  let wait = 500;
  let stopped = false;
  let timer = null;

  function open() {
    const q = new URLSearchParams();
    if (token) q.set("token", token);
    if (after >= 0) q.set("after", String(after));
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(`${proto}//${location.host}/api/live?${q}`);
    ws.onopen = () => { wait = 500; };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.type === "hello") {
        onStatus("live");
        const resumed = after >= 0;
        if (!resumed) after = m.seq;
        onHello(m, resumed);
      } else if (m.type === "row") {
        after = Math.max(after, m.seq);
        onRow(m);
      } else if (m.type === "state") {
        onState(m.state);
      }
    };
    ws.onclose = (ev) => {
      if (stopped) return;
      if (ev.code === 1008) {  // refused: the token is not good for reading
        onStatus("refused", ev.reason);
        return;
      }
      onStatus("down", ev.reason);
      timer = setTimeout(open, wait);
      wait = Math.min(wait * 2, 5000);
    };
  }

  open();
  return {
    close() {
      stopped = true;
      clearTimeout(timer);
      if (ws) ws.close();
    },
  };
}
