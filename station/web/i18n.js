// The screens' languages: one catalogue per language (i18n/*.js, the same keys in each),
// the language a person chose (remembered in this browser), and numbers, times and dates
// written the locale's way by the browser's Intl. The station's API and journal speak in
// codes; only the screens turn them into words, here.

import en from "./i18n/en.js";
import fr from "./i18n/fr.js";
import zhHans from "./i18n/zh-Hans.js";
import zhHant from "./i18n/zh-Hant.js";

export const CATALOGUES = { en, fr, "zh-Hant": zhHant, "zh-Hans": zhHans };

/** The languages a person may choose, in the switch's order. */
export const LANGUAGES = Object.keys(CATALOGUES);

/** A pseudo-language for the tests (`?lang=qps`): the English words with every piece of
 * the catalogue's text between ⟦ ⟧ and what fills a placeholder outside them, so that
 * a word shown from anywhere else stands out. Never offered in the switch. */
export const PSEUDO = "qps";
const pseudo = Object.fromEntries(Object.entries(en).map(([k, v]) => [k,
  v.split(/(\{\w+\})/).map((part) => (!part || /^\{\w+\}$/.test(part) ? part : `⟦${part}⟧`)).join("")]));

/** How numbers and dates are written in each language (a screen may be told otherwise). */
export const LOCALES = { en: "en-US", fr: "fr-FR", "zh-Hant": "zh-Hant-HK", "zh-Hans": "zh-Hans-CN", [PSEUDO]: "en-US" };

const ALIASES = { "zh-TW": "zh-Hant", "zh-HK": "zh-Hant", "zh-MO": "zh-Hant", "zh-CN": "zh-Hans",
                  "zh-SG": "zh-Hans", zh: "zh-Hans" };

/** A language tag as one of ours ("fr-CA" -> "fr", "zh-HK" -> "zh-Hant"), or null. */
export function known(tag) {
  if (!tag) return null;
  if (tag === PSEUDO || Object.hasOwn(CATALOGUES, tag)) return tag;
  if (ALIASES[tag]) return ALIASES[tag];
  const [base, script] = tag.split("-");
  if (base === "zh") return script === "Hant" ? "zh-Hant" : script === "Hans" ? "zh-Hans" : known(tag.split("-").slice(0, 2).join("-")) || "zh-Hans";
  return Object.hasOwn(CATALOGUES, base) ? base : null;
}

/** The language a screen asked for (`?lang=`, its aliases too), else the station's. */
export function languageOf(asked, station) {
  return known(asked) || known(station) || "en";
}

/** The words of `lang`: t(key, {n: 3}) fills in the placeholders. A key no catalogue has
 * is shown as itself (the tests find it: it is not between ⟦ ⟧ under the pseudo-language). */
export function wordsOf(lang) {
  const table = lang === PSEUDO ? pseudo : CATALOGUES[lang] || en;
  return (key, values = {}) => {
    const word = table[key];
    if (word === undefined) return key;
    return word.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
  };
}

const REMEMBERED = "station-language";

/** The staff screens' language: the page's `?lang=`, else the one this person chose here
 * before, else the browser's first language we have, else the station's `[dashboard]
 * language`, else English. */
export function chosenLanguage(configured) {
  const asked = known(new URLSearchParams(location.search).get("lang"));
  if (asked) return asked;
  let kept = null;
  try { kept = known(localStorage.getItem(REMEMBERED)); } catch { /* storage off: not kept */ }
  if (kept) return kept;
  for (const tag of navigator.languages || [navigator.language]) {
    const lang = known(tag);
    if (lang && lang !== PSEUDO) return lang;
  }
  return known(configured) || "en";
}

/** Remember a person's choice in this browser (localStorage: it outlives the tab). */
export function rememberLanguage(lang) {
  try { localStorage.setItem(REMEMBERED, lang); } catch { /* storage off: this page only */ }
}

// -- the page's language -----------------------------------------------------------------

/** The staff page's words and locale, set once at start by `useLanguage`. Live bindings:
 * every module that imports `t` sees the language in use. */
export let lang = "en";
export let t = wordsOf("en");
export let locale = LOCALES.en;

export function useLanguage(next) {
  lang = next;
  t = wordsOf(next);
  locale = LOCALES[next] || "en-GB";
  document.documentElement.lang = next === PSEUDO ? "en" : next;
  translatePage();
}

/** The page's fixed words: `data-i18n` (text), `data-i18n-aria` (aria-label),
 * `data-i18n-title` (title). */
export function translatePage(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-aria]")) el.setAttribute("aria-label", t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.setAttribute("title", t(el.dataset.i18nTitle));
}

/** The header's language switch: the languages by their own names; choosing one is
 * remembered and the page drawn again in it. */
export function mountLanguageSwitch(select) {
  select.replaceChildren(...LANGUAGES.map((l) => {
    const option = document.createElement("option");
    option.value = l;
    option.lang = l;
    option.textContent = CATALOGUES[l].language_name;
    return option;
  }));
  select.value = LANGUAGES.includes(lang) ? lang : "en";
  select.addEventListener("change", () => {
    rememberLanguage(select.value);
    const url = new URL(location.href);
    url.searchParams.delete("lang");
    location.replace(url); // the whole page again, in the new language (the token stays)
  });
}

// -- numbers, times and dates, the locale's way ------------------------------------------

/** A number as the locale writes it: 1 234,5 in French, 1,234.5 in English. */
export function num(n, digits = null) {
  if (n == null || Number.isNaN(n)) return "–";
  const options = digits == null ? { maximumFractionDigits: 2 } : { minimumFractionDigits: digits, maximumFractionDigits: digits };
  return new Intl.NumberFormat(locale, options).format(n);
}

/** A share (0.0124) as a percentage the locale's way: "1.24%", "1,24 %". */
export function percent(x, digits = 2) {
  return new Intl.NumberFormat(locale, { style: "percent", minimumFractionDigits: digits, maximumFractionDigits: digits }).format(x);
}

/** A list the locale's way: "a, b and c", "a, b et c", "a、b和c". */
export function list(items, type = "conjunction") {
  return new Intl.ListFormat(locale, { style: "long", type }).format(items.map(String));
}

/** The time of a Date on the 24-hour clock: "06:43:32". */
export function timeOf(d) {
  return new Intl.DateTimeFormat(locale, { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }).format(d);
}

/** The day of a Date, short: "2 Dec", "2 déc.", "12月2日". */
export function dayOf(d) {
  return new Intl.DateTimeFormat(locale, { day: "numeric", month: "short" }).format(d);
}

/** A count and its noun as the locale says it: count(1, "dash.n_rounds") -> "1 round",
 * "2 rounds" (the catalogue's `<key>_one`, `<key>_other`, ... by Intl.PluralRules). */
export function count(n, key) {
  const form = new Intl.PluralRules(locale).select(n);
  const word = t(`${key}_${form}`, { n: num(n) });
  return word === `${key}_${form}` ? t(`${key}_other`, { n: num(n) }) : word;
}
