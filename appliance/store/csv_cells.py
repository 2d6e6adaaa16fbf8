"""CSV that a spreadsheet opens as data, never as formulas: one writer for every export of the box (the battle
protocol, ``svoyak protocol --format csv``, and the director's tournament export).

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula (or becomes one)
in Excel and LibreOffice: a player named ``=HYPERLINK("http://...")`` or ``@SUM(...)`` would run when the organiser
opens the file. Such text is written with a leading ``'`` (the spreadsheets' own "this is text" mark). Numbers
stay numbers: ``-380`` (an int, or text that is exactly a number) is a score, not a formula.

>>> [escape_cell(cell) for cell in ("=1+1", "+1+1", "-2+3", "@SUM(A1)", "\\tx", "\\rx", "Аня", -380, "-380", "+7")]
["'=1+1", "'+1+1", "'-2+3", "'@SUM(A1)", "'\\tx", "'\\rx", 'Аня', -380, '-380', '+7']
"""

from __future__ import annotations

import csv
import math
from typing import IO, Any, Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: Any) -> Any:
    """``value`` itself, or its text with a leading ``'`` when a spreadsheet would read it as a formula."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS) or _is_number(value):
        return value
    return "'" + value


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text)) and text.strip() == text
    except ValueError:
        return False


class Writer:
    """``csv.writer`` whose every cell goes through :func:`escape_cell`."""

    def __init__(self, out: IO[str]) -> None:
        self._writer = csv.writer(out)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([escape_cell(cell) for cell in row])


def writer(out: IO[str]) -> Writer:
    """A formula-safe CSV writer over ``out``."""
    return Writer(out)
