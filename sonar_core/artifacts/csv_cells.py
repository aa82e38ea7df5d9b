"""CSV cells a spreadsheet cannot run: formula neutralisation, as OWASP recommends for CSV export.

Spreadsheet programs read a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula,
and some treat a leading tab or carriage return the same way, so a model's answer such as
``=HYPERLINK("http://evil", "click")`` would run when a reader opens the CSV. Such a text
cell gets a single quote in front (``'=HYPERLINK(...)``), which spreadsheets show as text.
Only text cells are touched: a number such as ``-0.5`` is written as a number. JSON and
``.jay`` files keep the exact text; ``csv_formula_escape: false`` keeps CSV cells verbatim too.
"""

from __future__ import annotations

from typing import Any, Iterable

__all__ = ["FORMULA_PREFIXES", "neutralise_cell", "neutralise_column", "neutralise_row"]

#: First characters that make a spreadsheet evaluate a cell (OWASP "CSV Injection").
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text a spreadsheet would run; anything else as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def neutralise_column(values: list[Any]) -> list[Any]:
    """A column of cells, neutralised; the same list object when no cell needed it."""
    if not any(isinstance(v, str) and v.startswith(FORMULA_PREFIXES) for v in values):
        return values
    return [neutralise_cell(v) for v in values]


def neutralise_row(values: Iterable[Any]) -> list[Any]:
    return [neutralise_cell(v) for v in values]
