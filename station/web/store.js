// The page's one store: what the station told us (who I am, its rules, the table's state
// and its reader, journal rows, the history, odds) and the last thing said to the user.
// Panels subscribe to the keys they draw and never keep a copy of their own.

export const JOURNAL_KEEP = 500; // rows kept in the page

export class Store {
  #value;
  #subscribers = new Set();

  constructor(initial) {
    this.#value = Object.freeze({ ...initial });
  }

  /** The current value (frozen: change it with `set`). */
  get() {
    return this.#value;
  }

  /** Replace some keys and tell the subscribers of those keys, in the order they came. */
  set(patch) {
    this.#value = Object.freeze({ ...this.#value, ...patch });
    const changed = Object.keys(patch);
    for (const sub of [...this.#subscribers]) {
      if (sub.keys.some((k) => changed.includes(k))) sub.fn(this.#value);
    }
  }

  /** Call `fn(value)` whenever one of `keys` is set; answers the unsubscribe function. */
  subscribe(keys, fn) {
    const sub = { keys, fn };
    this.#subscribers.add(sub);
    return () => this.#subscribers.delete(sub);
  }
}

/** The journal rows the page keeps, oldest first, found by seq. Mutated in place (a burst
 * of rows must not copy them all each time); `store.set({ rows })` tells the panels. */
export class Rows {
  constructor(keep = JOURNAL_KEEP) {
    this.keep = keep;
    this.list = [];
    this.bySeq = new Map();
    this.noted = new Map(); // single rows fetched for a detail, not shown in the journal
  }

  at(seq) {
    return this.bySeq.get(seq) || this.noted.get(seq);
  }

  /** Add rows in any order, ignoring those already here; keeps the newest `keep`.
   * Answers whether any was new. */
  add(rows) {
    let added = false;
    let sorted = true;
    for (const r of rows) {
      if (this.bySeq.has(r.seq)) continue;
      const last = this.list[this.list.length - 1];
      if (last && r.seq < last.seq) sorted = false;
      this.list.push(r);
      this.bySeq.set(r.seq, r);
      added = true;
    }
    if (!sorted) this.list.sort((a, b) => a.seq - b.seq);
    if (this.list.length > this.keep) {
      for (const old of this.list.splice(0, this.list.length - this.keep)) this.bySeq.delete(old.seq);
    }
    return added;
  }

  /** Keep one row for lookups only (e.g. the row a suspension started at). */
  note(row) {
    this.noted.set(row.seq, row);
  }
}

export function createStore() {
  return new Store({
    me: null, // {name, role, acts_as, public_read, table} from /api/whoami
    rules: null, // {errors, event_roles, roles, events} from /api/explanations
    conn: { status: "down", reason: "" }, // the live connection
    state: null, // the last table snapshot (its `actions`: what the table accepts now)
    rows: new Rows(),
    history: null, // /api/history
    odds: null, // {answer, pending, error}: the last /api/odds answer, one on its way, a failure
    reader: null, // the card reader's status, published with every state
    said: null, // {text, bad}: the last action or failure, for the user
  });
}

/** Tell the user something on the last-action line (`bad` shows it as an error). */
export function say(store, text, bad = false) {
  store.set({ said: { text, bad } });
}
