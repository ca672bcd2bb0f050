"""How deep the cut card sits: the simulator deals by these bounds and `[reader.sim]
cut_depth` is checked against them. A module of their own, free of the config models, so
`station simulate` loads no pydantic (the config may not import the simulator)."""

from __future__ import annotations

#: Fewest cards behind the cut card that let a dealer always finish the shoe by the rules:
#: the cut card can come out before the first burn card (up to 10 burns still due), and
#: the round opened next is then the last one (up to 6 cards).
MIN_CUT_DEPTH = 16
#: Cards left behind the cut card when nothing else is asked for.
DEFAULT_CUT_DEPTH = MIN_CUT_DEPTH
