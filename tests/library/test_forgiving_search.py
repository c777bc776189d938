"""Real queries, as learners type them (typos, filler words, British spelling), and the item
each must bring into the top three."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.library import search
from app.library.items import ItemFilter
from app.library.query import Vocabulary, edit_distance, understand

QUERIES = [
    # (query, slug that must be among the first three)
    ("dropout", "dropout"),
    ("dropuot", "dropout"),
    ("droput", "dropout"),
    ("adam vs sgd", "optimizers-sgd-momentum-rmsprop-adam"),
    ("adam versus sgd", "optimizers-sgd-momentum-rmsprop-adam"),
    ("difference between adam and sgd", "optimizers-sgd-momentum-rmsprop-adam"),
    ("optimisers", "optimizers-sgd-momentum-rmsprop-adam"),
    ("batch normalisation", "batch-normalization"),
    ("batch normalizaton", "batch-normalization"),
    ("batchnorm vs layernorm", "normalization-layers-compared"),
    ("vanishing gradients", "vanishing-exploding-gradients"),
    ("vanishng gradeints", "vanishing-exploding-gradients"),
    ("xavier vs he initialisation", "weight-initialization"),
    ("self attention", "self-attention-transformers"),
    ("self-atention transformer", "self-attention-transformers"),
    ("lstm", "rnns-and-lstms"),
    ("difference between eval and no_grad", "eval-no-grad-inference-mode"),
    ("inference mode", "eval-no-grad-inference-mode"),
    ("train vs eval mode", "train-vs-eval-mode"),
    ("dataparallel vs ddp", "dataparallel-vs-ddp"),
    ("distributed data parallel", "dataparallel-vs-ddp"),
    ("nan loss", "nan-loss-debugging"),
    ("mixed precision", "mixed-precision-training"),
    ("mixed precison", "mixed-precision-training"),
    ("quantisation", "model-quantization"),
    ("knowledge distilation", "knowledge-distillation"),
    ("positional encoding", "positional-encodings"),
    ("pytorch vs tensorflow", "pytorch-vs-tensorflow"),
    ("torch.compile", "torch-compile"),
    ("learning rate scheduler", "lr-schedulers"),
    ("lr scheduler", "lr-schedulers"),
    ("overfitting validation loss", "overfitting-train-val-divergence"),
    ("save state_dict", "saving-loading-state-dict"),
    ("contrastive learning simclr", "self-supervised-contrastive-learning"),
    ("what is a GAN", "generative-adversarial-networks"),
]


@pytest.mark.parametrize(("query", "slug"), QUERIES, ids=[q for q, _ in QUERIES])
def test_a_real_query_finds_its_item_in_the_top_three(
    engine: Engine, query: str, slug: str
) -> None:
    with engine.connect() as connection:
        found = search.find(connection, ItemFilter(q=query))
    top = [hit.item.slug for hit in found.hits[:3]]
    assert slug in top, (query, top)


def test_a_corrected_query_says_what_it_searched_for(engine: Engine) -> None:
    with engine.connect() as connection:
        corrected = search.find(connection, ItemFilter(q="dropuot"))
        exact = search.find(connection, ItemFilter(q="dropout"))
    assert corrected.corrected == "dropout"
    assert exact.corrected is None


def test_filler_words_are_dropped_unless_they_are_all_there_is() -> None:
    assert understand(["Adam", "vs", "SGD"], None).terms == ["adam", "sgd"]
    assert understand(["what", "is"], None).terms == ["what", "is"]
    assert understand(["lr"], None).terms == ["learning", "rate"]


def test_typos_are_corrected_only_to_close_words_of_the_content() -> None:
    words = Vocabulary.of(["Dropout regularizes. Dropout drops units.", "gradient descent"])
    assert understand(["dropuot"], words).terms == ["dropout"]
    assert understand(["drop"], words).terms == ["drop"], "a prefix of a word is no typo"
    assert understand(["kubernetes"], words).corrected is None
    assert understand(["gradeint"], words).terms == ["gradient"]


def test_edit_distance_counts_a_swap_as_one_edit() -> None:
    assert edit_distance("dropuot", "dropout", 2) == 1
    assert edit_distance("kitten", "sitting", 5) == 3
    assert edit_distance("abc", "xyzxyz", 1) == 2  # stops once past the limit


def test_the_library_says_when_it_corrected_a_query(client: TestClient) -> None:
    page = client.get("/items", params={"q": "dropuot"}).text
    assert "Showing results for <strong>dropout</strong>" in page
    # No beginner item in the torch.compile deck: filters alone, no words typed.
    empty = client.get("/items", params={"deck": "torch-compile", "difficulty": "beginner"}).text
    assert "No questions match these filters." in empty
    assert "Try fewer or different words" not in empty
