// The station's rules as it publishes them, read and never re-derived: the role each event
// needs and the roles in order (/api/explanations), the events the table accepts now
// (the snapshot's `actions`), and the words of each action.

import { eventWords } from "./format.js";

/** Whether this token may read the table at all. */
export function canRead(me) {
  return Boolean(me && (me.name != null || me.public_read));
}

/** Whether this token's role may send an event of this type. */
export function may(me, rules, type) {
  if (!me || !me.acts_as || !rules) return false;
  const { roles, event_roles: needs } = rules;
  return roles.indexOf(me.acts_as) >= roles.indexOf(needs[type]);
}

/** Whether the table accepts an event of this type now (the station says so). */
export function accepts(state, type) {
  return Boolean(state?.actions?.includes(type));
}

/** The words of an action a person confirms ({label, confirm, done}) in the page's
 * language, or null for an event only a reader sends (the station says which). */
export function actionWords(rules, type) {
  return rules?.events?.[type]?.confirm ? eventWords(type) : null;
}
