"""The screens' words, one catalogue per language (`station/web/i18n/<lang>.js`, written
as JSON), read by what draws a page in Python (`station report`) and by the tests: the
same words as the dashboard, the floor view and the display, from the same files."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

#: Where the catalogues are, in the package.
CATALOGUE_DIR = Path(__file__).resolve().parent.parent / "web" / "i18n"
#: The languages, in the switch's order (the same as the display's `[display] language`).
LANGUAGES = ("en", "fr", "zh-Hant", "zh-Hans")
#: How numbers and dates are written in each language.
LOCALES = {"en": "en-US", "fr": "fr-FR", "zh-Hant": "zh-Hant-HK", "zh-Hans": "zh-Hans-CN"}

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def catalogue(language: str) -> dict[str, str]:
    """Every word of `language`, by key."""
    if language not in LANGUAGES:
        raise ValueError(f"no catalogue for {language!r}: one of {', '.join(LANGUAGES)}")
    text = (CATALOGUE_DIR / f"{language}.js").read_text(encoding="utf-8")
    start = text.index("export default ") + len("export default ")
    end = text.rindex("};") + 1
    words: dict[str, str] = json.loads(text[start:end])
    return words


def words_of(language: str) -> Callable[..., str]:
    """`t(key, n=3)`: the word of `key` in `language`, its placeholders filled in."""
    table = catalogue(language)

    def t(key: str, **values: object) -> str:
        return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), "")), table[key])

    return t
