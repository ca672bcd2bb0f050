"""The figures a benchmark holds against a reference: each printed as a ratio as it is
measured, and all of them again in one table at the end of `make bench` (the table that
opens docs/BENCHMARKS.md), with the machine's load when each was taken."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Figure:
    measure: str
    value: float
    reference_name: str
    reference: float
    target: float  # the ratio value / reference must stay at or under this
    unit: str
    load: float  # the 1-minute load average when it was taken

    @property
    def ratio(self) -> float:
        return self.value / self.reference

    @property
    def met(self) -> bool:
        return self.ratio <= self.target


FIGURES: list[Figure] = []


def record(
    measure: str, value: float, reference_name: str, reference: float, target: float, unit: str
) -> Figure:
    """Keep a figure for the table and print it as a ratio to its reference."""
    figure = Figure(measure, value, reference_name, reference, target, unit, os.getloadavg()[0])
    FIGURES.append(figure)
    print(
        f"   RATIO {measure}: {value:.3f} {unit} / {reference_name} {reference:.3f} {unit}"
        f" = {figure.ratio:.3f} (target <= {target:g}: {'ok' if figure.met else 'OVER'};"
        f" load {figure.load:.2f})"
    )
    return figure


def table() -> str:
    """The figures of this run as a Markdown table (measure, reference, ratio, target, load)."""
    lines = [
        "| measure | value | reference | ratio | target | load |",
        "|---|---|---|---|---|---|",
    ]
    for f in FIGURES:
        lines.append(
            f"| {f.measure} | {f.value:.3f} {f.unit} | {f.reference_name} {f.reference:.3f}"
            f" {f.unit} | **{f.ratio:.3f}** | <= {f.target:g} {'ok' if f.met else 'OVER'}"
            f" | {f.load:.2f} |"
        )
    return "\n".join(lines)
