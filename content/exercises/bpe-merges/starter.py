def train_bpe(
    word_counts: dict[str, int], num_merges: int, min_count: int = 2
) -> list[tuple[str, str]]:
    """word_counts: each distinct word of the corpus (a non-empty str) and how often it occurs.

    Returns the learned merges in order, each a (left, right) tuple of two symbols; at most
    num_merges of them.
    """
    raise NotImplementedError


def encode(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """Splits `word` into symbols by applying `merges` (as train_bpe returns them) by rank.

    Returns the list of symbols; their concatenation is `word`.
    """
    raise NotImplementedError
