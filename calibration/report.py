"""How a model does on labelled photos: accuracy, unreadable and wrong counts, and a
confusion matrix by rank and by suit (a 52 x 52 table would not fit a terminal)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from calibration.references import labelled_photos, load
from drivers.recognition import Recogniser
from station.core.cards import RANKS, SUITS


@dataclass
class Report:
    total: int = 0
    right: int = 0
    unreadable: int = 0
    wrong: list[tuple[str, str, float, str]] = field(default_factory=list)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)  # (truth, read or "?")
    confidences: list[float] = field(default_factory=list)  # of the right readings

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def lines(self) -> list[str]:
        out = [
            f"{self.total} photos: {self.right} right ({100 * self.accuracy:.1f}%), "
            f"{self.unreadable} unreadable, {len(self.wrong)} wrong"
        ]
        if self.confidences:
            low = sorted(self.confidences)
            out.append(
                f"confidence of right readings: lowest {low[0]:.3f}, "
                f"median {low[len(low) // 2]:.3f}"
            )
        for truth, read, confidence, name in self.wrong:
            out.append(f"WRONG {name}: {truth} read as {read} (confidence {confidence:.3f})")
        for title, labels, pick in (("rank", RANKS, 0), ("suit", SUITS, 1)):
            out.append(f"confusion by {title} (rows: truth, columns: read, ?: unreadable)")
            columns = [*labels, "?"]
            out.append("     " + "".join(f"{c:>4}" for c in columns))
            for row in labels:
                counts = Counter({c: 0 for c in columns})
                for (truth, read), n in self.pairs.items():
                    if truth[pick] == row:
                        counts[read[pick] if read != "?" else "?"] += n
                out.append(f"  {row}  " + "".join(f"{counts[c] or '.':>4}" for c in columns))
        return out


def evaluate(recogniser: Recogniser, directory: str | Path) -> Report:
    report = Report()
    for truth, path in labelled_photos(directory):
        reading = recogniser.read(load(path))
        report.total += 1
        if reading.card is None:
            report.unreadable += 1
            report.pairs[(truth, "?")] += 1
            continue
        report.pairs[(truth, reading.card)] += 1
        if reading.card == truth:
            report.right += 1
            report.confidences.append(reading.confidence)
        else:
            report.wrong.append((truth, reading.card, reading.confidence, Path(path).name))
    return report
