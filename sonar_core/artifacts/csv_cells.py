"""CSV cells a spreadsheet cannot run: formula neutralisation, as OWASP recommends for CSV export.

Spreadsheet programs read a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula,
and some treat a leading tab or carriage return the same way, so a model's answer such as
``=HYPERLINK("http://evil", "click")`` would run when a reader opens the CSV. Such a text
cell gets a single quote in front (``'=HYPERLINK(...)``), which spreadsheets show as text.
Only text cells are touched: a number such as ``-0.5`` is written as a number. JSON and
``.jay`` files keep the exact text; ``csv_formula_escape: false`` keeps CSV cells verbatim too.

:func:`write_csv_rows` also encloses in quotes a cell that holds a carriage return, which
Python's csv writer (line terminator ``\n``) leaves bare, so that readers do not end the row there.
"""

from __future__ import annotations

from typing import Any, Iterable

__all__ = ["FORMULA_PREFIXES", "neutralise_cell", "neutralise_column", "neutralise_row", "write_csv_rows"]

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


def _csv_text(value: Any) -> str:
    """One CSV cell as Python's csv writer (QUOTE_MINIMAL) writes it, but quoting a lone CR too.

    The csv module quotes a field only for the delimiter, the quote and the characters of its
    line terminator ("\\n" here), so a cell holding "\\r" without "\\n" came out unquoted and
    readers split the row there.
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_csv_rows(handle, writer, rows: list, has_cr: bool | None = None) -> None:
    """Write ``rows`` with ``writer`` (a csv.writer on ``handle``), quoting a lone CR as well.

    ``has_cr``: whether a text cell of ``rows`` holds a carriage return (None: look).
    """
    if has_cr is None:
        has_cr = any(isinstance(v, str) and "\r" in v for cells in rows for v in cells)
    if not has_cr:
        writer.writerows(rows)
        return
    plain: list[tuple] = []
    for cells in rows:
        if any(isinstance(v, str) and "\r" in v for v in cells):
            writer.writerows(plain)
            plain = []
            handle.write(",".join(_csv_text(v) for v in cells) + "\n")
        else:
            plain.append(cells)
    writer.writerows(plain)
