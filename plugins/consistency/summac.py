"""SummaC (Laban et al., 2022): summary faithfulness from sentence-level NLI.

An NLI model scores every (document sentence, summary sentence) pair; the probabilities form an
"image" of shape (document sentences x summary sentences) per label.

* SummaC ZS: for each summary sentence, the highest entailment minus the highest contradiction
  over the document sentences; the score is their mean, in [-1, 1].
* SummaC Conv: for each summary sentence (at most 10), a histogram of its entailment
  probabilities over fixed bins; a trained linear layer maps each histogram to a value, their
  mean goes through a trained 3 -> 2 layer, and the score is the softmax probability of class 1,
  in [0, 1]. The trained weights come from SummaC's release file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from sonar_core import model_inputs

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np  # imported where used: loading the plugin must stay cheap

__all__ = ["nli_label_indices", "nli_image", "summac_zs", "summac_conv", "PERCENTILE_BINS", "CONV_ROWS"]

#: SummaC's "percentile" bins, the ones its released Conv weights were trained with.
PERCENTILE_BINS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.07, 0.13, 0.37, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.955, 0.96,
                   0.965, 0.97, 0.975, 0.98, 0.985, 0.99, 0.995, 1.0)
#: Summary sentences SummaC Conv looks at.
CONV_ROWS = 10
_BATCH = 32


def nli_label_indices(id2label: dict[int, str]) -> tuple[int, int]:
    """(entailment, contradiction) indices, by label name (MNLI's or VitaminC's SUPPORTS / REFUTES)."""
    entailment = contradiction = None
    for index, name in id2label.items():
        lowered = str(name).lower()
        if lowered.startswith(("entail", "support")):
            entailment = int(index)
        elif lowered.startswith(("contradict", "refute")):
            contradiction = int(index)
    if entailment is None or contradiction is None:
        labels = ", ".join(str(name) for _, name in sorted(id2label.items()))
        raise ValueError(f"the NLI model's labels ({labels}) do not name entailment and contradiction")
    return entailment, contradiction


def nli_image(model: Any, tokenizer: Any, premises: Sequence[str], hypotheses: Sequence[str],
              max_length: int = 500) -> np.ndarray:
    """Array (2, len(premises), len(hypotheses)): entailment and contradiction probabilities."""
    import numpy as np
    import torch

    entailment, contradiction = nli_label_indices(model.config.id2label)
    pairs = [(p, h) for p in premises for h in hypotheses]
    probabilities: list[list[float]] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), _BATCH):
            chunk = pairs[start:start + _BATCH]
            encoded = tokenizer([p for p, _ in chunk], [h for _, h in chunk], truncation="only_first",
                                max_length=max_length, padding=True, return_tensors="pt")
            probs = torch.softmax(model(**model_inputs(model, encoded)).logits.float(), dim=-1)
            probabilities += probs[:, [entailment, contradiction]].tolist()
    image = np.array(probabilities, dtype=np.float64).reshape(len(premises), len(hypotheses), 2)
    return image.transpose(2, 0, 1)


def summac_zs(image: np.ndarray) -> float:
    """mean over summary sentences of (max entailment - max contradiction) over document sentences."""
    import numpy as np

    return float(np.mean(image[0].max(axis=0) - image[1].max(axis=0)))


def summac_conv(image: np.ndarray, weights: dict[str, Any], bins: Sequence[float] = PERCENTILE_BINS) -> float:
    """SummaC Conv's probability that the summary is consistent, from the entailment image."""
    import numpy as np

    histograms = [np.histogram(image[0][:, j], range=(0, 1), bins=list(bins))[0]
                  for j in range(min(image.shape[2], CONV_ROWS))]
    mlp_w = weights["mlp.weight"].double().numpy().reshape(-1)
    mlp_b = float(weights["mlp.bias"].double().numpy().reshape(-1)[0])
    if not histograms:
        features = np.zeros(3)
    else:
        per_sentence = np.array([float(h @ mlp_w) + mlp_b for h in histograms])
        features = np.full(3, per_sentence.mean())
    logits = weights["layer_final.weight"].double().numpy() @ features + weights["layer_final.bias"].double().numpy()
    logits = logits - logits.max()
    probabilities = np.exp(logits) / np.exp(logits).sum()
    return float(probabilities[1])
