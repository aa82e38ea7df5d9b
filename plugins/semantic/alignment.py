"""Dynamic-programming alignment of the answer's steps to the context's steps (an edit distance).

The context's steps are the reference sequence. Aligning context step i with answer step j is
a **match** when their similarity reaches the cut-off (no edit) and a **mismatch** otherwise
(one substitution); a context step left unaligned is an **insertion** (the answer must gain it)
and an answer step left unaligned a **deletion** (the answer must lose it). The alignment has
the fewest edits = insertions + deletions + mismatches (Levenshtein distance with a semantic
equality test); among alignments with that many edits it takes the one whose matches add up to
the highest similarity, then prefers aligning over inserting over deleting, so the result is
deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["AlignmentStep", "Alignment", "align_steps", "MATCH", "MISMATCH", "INSERTION", "DELETION"]

MATCH, MISMATCH, INSERTION, DELETION = "match", "mismatch", "insertion", "deletion"


@dataclass(frozen=True)
class AlignmentStep:
    """One operation: which context step (i) and answer step (j) it concerns, and their similarity."""

    op: str
    context_index: int | None
    answer_index: int | None
    similarity: float | None = None


@dataclass(frozen=True)
class Alignment:
    """The operations in sequence order and their counts."""

    steps: tuple[AlignmentStep, ...]

    def count(self, op: str) -> int:
        return sum(1 for step in self.steps if step.op == op)

    @property
    def insertions(self) -> int:
        return self.count(INSERTION)

    @property
    def deletions(self) -> int:
        return self.count(DELETION)

    @property
    def mismatches(self) -> int:
        return self.count(MISMATCH)

    @property
    def matches(self) -> int:
        return self.count(MATCH)

    @property
    def edits(self) -> int:
        return self.insertions + self.deletions + self.mismatches


def align_steps(similarity: np.ndarray, cutoff: float) -> Alignment:
    """Align context steps (rows of ``similarity``) with answer steps (columns); see the module docstring.

    Args:
        similarity: (n context steps, m answer steps) similarities in [0, 1].
        cutoff: the similarity from which two steps say the same thing.
    """
    n, m = similarity.shape
    sims = similarity.tolist()
    # best[i][j]: (edits, -matched similarity) of aligning the first i context and j answer steps.
    best = [[(0, 0.0)] * (m + 1) for _ in range(n + 1)]
    move = [[""] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        best[i][0], move[i][0] = (i, 0.0), INSERTION
    for j in range(1, m + 1):
        best[0][j], move[0][j] = (j, 0.0), DELETION
    for i in range(1, n + 1):
        row, above, here, moves = sims[i - 1], best[i - 1], best[i], move[i]
        for j in range(1, m + 1):
            s = row[j - 1]
            edits, unmatched = above[j - 1]  # unmatched: minus the matched similarity so far
            choice = ((edits, unmatched - s), MATCH) if s >= cutoff else ((edits + 1, unmatched), MISMATCH)
            insertion = ((above[j][0] + 1, above[j][1]), INSERTION)
            deletion = ((here[j - 1][0] + 1, here[j - 1][1]), DELETION)
            for candidate in (insertion, deletion):  # strictly better only: ties keep the earlier choice
                if candidate[0] < choice[0]:
                    choice = candidate
            here[j], moves[j] = choice
    steps = []
    i, j = n, m
    while i or j:
        op = move[i][j]
        if op in (MATCH, MISMATCH):
            steps.append(AlignmentStep(op, i - 1, j - 1, sims[i - 1][j - 1]))
            i, j = i - 1, j - 1
        elif op == INSERTION:
            steps.append(AlignmentStep(op, i - 1, None))
            i -= 1
        else:
            steps.append(AlignmentStep(op, None, j - 1))
            j -= 1
    return Alignment(tuple(reversed(steps)))
