"""`[display]` of the station's config: the table's scoreboard that players see (`GET
/display`): who may read it, its language, and the limits it prints for each bet.

What the screen shows of the table is not configured here: it is the table's own results,
roads and status (`station.core.display`). These keys only say what the casino prints
beside them and how: the table's name, the limits in its currency and number format, the
language, and how long a round's result stays announced large.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from station.shared.sections import Problem, Section, bounds

#: The screen's languages: English, French, Chinese in traditional and simplified script.
LANGUAGES = ("en", "fr", "zh-Hant", "zh-Hans")
#: The bets whose names the screen knows in every language (the shipped paytables' bets;
#: a numbered variant such as `lucky_six_2` is its bet's: `lucky_six`). Another bet needs
#: a `label`, printed as written.
BETS = (
    "banker",
    "player",
    "tie",
    "player_pair",
    "banker_pair",
    "either_pair",
    "perfect_pair",
    "player_natural",
    "banker_natural",
    "player_bonus",
    "banker_bonus",
    "lucky_six",
    "lucky_seven",
    "super_lucky_seven",
    "tableau1",
    "tableau2",
    "a_cheval",
)
_CURRENCY = re.compile(r"[A-Z]{3}")
_LOCALE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*")
#: The most limits a screen prints (a row each: more would not be read from 3 m).
MAX_LIMITS = 6


class BetLimit(Section):
    """One line of the limits: a bet, its minimum and maximum stake."""

    bet: str = Field(description=f"the bet, one of {', '.join(BETS)} (or any name with a label)")
    min: int = Field(ge=0, description="the least stake, in the currency's units")
    max: int = Field(ge=1, description="the largest stake, in the currency's units")
    label: str = Field(
        "",
        max_length=24,
        description="the bet's name as printed, in every language (empty: the bet's own words)",
    )

    @model_validator(mode="after")
    def _known_or_labelled(self) -> BetLimit:
        if self.bet not in BETS and not self.label.strip():
            raise Problem(
                "bet",
                f"{self.bet!r} has no words on the screen: use one of {', '.join(BETS)}, "
                "or give it a label",
            )
        if self.min > self.max:
            raise Problem("max", f"must be at least min ({self.min}), got {self.max}")
        return self


class DisplayConfig(Section):
    """`[display]`: the table's scoreboard for players (`GET /display`)."""

    public: bool = Field(
        False,
        description="true: GET /api/display and WS /api/display/live need no token (any "
        "screen on the network may show the table); false: a display token (or any higher)",
    )
    name: str = Field(
        "",
        max_length=40,
        description="the table's name as players see it; empty: [table] id",
    )
    language: str = Field(
        "en",
        description=f"the screen's language, one of {', '.join(LANGUAGES)} (a screen's "
        "URL may choose another: /display?lang=fr)",
    )
    locale: str = Field(
        "",
        description='how numbers are written (a BCP 47 tag, e.g. "en-US", "fr-FR", '
        '"zh-HK"); empty: the language\'s',
    )
    currency: str = Field(
        "",
        description='the limits\' currency, an ISO 4217 code (e.g. "EUR", "HKD"); empty: '
        "numbers alone",
    )
    limits: tuple[BetLimit, ...] = Field(
        (),
        strict=False,
        description="the limits printed, in order: [{bet, min, max}] (empty: none printed)",
    )
    announce: float = Field(
        4.0,
        ge=0,
        le=30,
        json_schema_extra=bounds("second"),
        description="seconds a round's result is shown large after the round (0: never)",
    )

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError(f"must be one of {', '.join(LANGUAGES)}, got {value!r}")
        return value

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str) -> str:
        if value and not _LOCALE.fullmatch(value):
            raise ValueError(f'must be a BCP 47 tag such as "en-US" or "fr-FR", got {value!r}')
        return value

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        if value and not _CURRENCY.fullmatch(value):
            raise ValueError(f'must be an ISO 4217 code such as "EUR" or "HKD", got {value!r}')
        return value

    @field_validator("limits")
    @classmethod
    def _limits(cls, value: tuple[BetLimit, ...]) -> tuple[BetLimit, ...]:
        if len(value) > MAX_LIMITS:
            raise ValueError(f"at most {MAX_LIMITS} limits fit the screen, got {len(value)}")
        return value


class DashboardConfig(Section):
    """`[dashboard]`: the supervisor dashboard's default language, for a person whose
    browser asks for none of the station's languages and who has not chosen one (each
    person's choice, in the header's switch, is remembered by their browser)."""

    language: str = Field(
        "en",
        description=f"the dashboard's default language, one of {', '.join(LANGUAGES)}",
    )

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError(f"must be one of {', '.join(LANGUAGES)}, got {value!r}")
        return value
