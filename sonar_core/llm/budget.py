"""The ``--max-cost`` budget's arithmetic: what was spent, what calls in flight reserved, and waits that end.

The run's :class:`~.ledger.CostLedger` holds one :class:`Budget`; the ledger estimates a call's cost
and asks :meth:`Budget.reserve`, then gives the reservation back when the call settles or fails.
docs/costs.md (*Budgets*) says it for users.

* **Whole numbers.** Spent, reserved and the budget itself are integer nano-dollars
  (:data:`UNITS_PER_USD`); a reservation keeps the exact number it added, and giving it back takes
  that number off, once. So when no call is in flight, exactly 0 is reserved. (With floats,
  reserving 0.038 and 0.0285 USD and giving both back left 3.5e-18 "in flight", and a call that
  did not fit waited for calls that did not exist, for ever: issue 34.)
* **Waits that end.** A call that does not fit while calls are in flight waits for one of them to
  settle (it may cost less than it reserved), then is estimated again. It never waits longer than
  ``max_wait`` seconds without any call settling; then, or when nothing is in flight, the budget
  stops the run (:class:`~sonar_core.errors.BudgetExceeded`, and every later call is refused).
* **Cancel.** :meth:`Budget.cancel` (Ctrl-C) wakes every waiting call; it and every later one is
  refused at once (a ``cancelled`` reservation), budget or not.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import BudgetExceeded

__all__ = ["Budget", "Reservation", "UNITS_PER_USD", "units_of"]

#: The budget's unit: one nano-dollar (USD 1e-9), far below any call's cost and run.json's 6 decimals.
UNITS_PER_USD = 10**9
#: Longest single sleep of a waiting call (seconds): a settling call wakes it; this is a safety net.
_POLL = 1.0


def units_of(usd: float | None) -> int:
    """``usd`` in whole nano-dollars (the nearest), 0 for None or a number that is not finite."""
    return round(usd * UNITS_PER_USD) if usd is not None and math.isfinite(usd) else 0


@dataclass
class Reservation:
    """What :meth:`~.ledger.CostLedger.begin` hands back: the estimate reserved against the budget, and
    in a dry run the placeholder answers (None in a real run)."""

    kind: str
    key: str
    evaluator: str | None
    amount: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    answers: list[Any] | None = None
    #: Why the call was refused (nothing reserved), or None.
    refused: str | None = None
    #: Refused because the run was cancelled (Ctrl-C), not by the budget.
    cancelled: bool = False
    #: ``amount`` in nano-dollars: exactly what :meth:`Budget.reserve` added to the reserved total.
    units: int = 0
    #: Still reserved: not yet settled or released (a second give-back takes nothing off).
    open: bool = True


class Budget:
    """See the module docstring. Thread-safe."""

    def __init__(self, max_wait: float = 120.0) -> None:
        #: Longest a call that does not fit waits while no call in flight settles (seconds). A call in
        #: flight is bounded by its own timeout: this ends only a wait that nothing else would end.
        self.max_wait = max_wait
        #: Why the budget stopped the run (its one-line message), or None.
        self.stopped: str | None = None
        #: Why the run was cancelled (Ctrl-C), or None.
        self.cancelled: str | None = None
        self._settled = threading.Condition()
        self._spent = 0
        self._reserved = 0
        self._last_settled = float("-inf")  # time.monotonic() of the last give-back

    @property
    def spent(self) -> float:
        """USD spent (priced calls answered, by this run and the runs it resumes)."""
        return self._spent / UNITS_PER_USD

    @spent.setter
    def spent(self, usd: float) -> None:
        with self._settled:
            self._spent = units_of(usd)

    @property
    def reserved(self) -> float:
        """USD reserved by the calls in flight: exactly 0 when none is."""
        return self._reserved / UNITS_PER_USD

    def add_spent(self, units: int) -> None:
        with self._settled:
            self._spent += units

    def reserve(self, max_cost: float, estimate: Callable[[], Reservation], call: str) -> Reservation:
        """Reserve ``estimate()`` against ``max_cost`` USD and return it, waiting (module docstring) while it
        does not fit and calls are in flight; a ``cancelled`` refusal once the run is cancelled.
        BudgetExceeded when it cannot fit (``call`` names the call in its message: ``host 'm'``)."""
        reservation = estimate()
        waiting_since = time.monotonic()
        while True:
            with self._settled:
                if self.cancelled is not None:
                    return Reservation(reservation.kind, reservation.key, reservation.evaluator,
                                       refused=self.cancelled, cancelled=True)
                if self.stopped is None and self._spent + self._reserved + reservation.units <= units_of(max_cost):
                    self._reserved += reservation.units
                    return reservation
                quiet = time.monotonic() - max(waiting_since, self._last_settled)
                if self.stopped is None and self._reserved > 0 and quiet < self.max_wait:
                    self._settled.wait(timeout=min(_POLL, self.max_wait - quiet))
                else:
                    if self.stopped is None:
                        self.stopped = (f"budget reached: spent ${self.spent:.4f} of --max-cost ${max_cost:.4f}; "
                                        f"the next call ({call}, about ${reservation.amount:.4f}) "
                                        f"would exceed it" + (f" with the calls in flight, none of which settled "
                                                              f"within {self.max_wait:g} s" if self._reserved else ""))
                    raise BudgetExceeded(self.stopped)
            reservation = estimate()  # with what the calls that settled answered

    def give_back(self, reservation: Reservation, spent_units: int = 0) -> None:
        """Take ``reservation`` off what is reserved (once) and add ``spent_units`` to what was spent."""
        with self._settled:
            if reservation.open:
                reservation.open = False
                self._reserved -= reservation.units
                self._last_settled = time.monotonic()
            self._spent += spent_units
            self._settled.notify_all()

    def cancel(self, reason: str) -> None:
        """Refuse every call from now on with ``reason`` (Ctrl-C); waiting calls wake up. Calls in flight
        go on to their end."""
        with self._settled:
            if self.cancelled is None:
                self.cancelled = reason
            self._settled.notify_all()
