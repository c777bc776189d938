# Bug: For batch_first=False the inputs are flipped with .T, which reverses all dimensions, so (B, T, F) features come out (F, T, B) instead of (T, B, F); a correct version swaps only the first two dimensions.
import torch


def collate(batch, pad_value=0, batch_first=True):
    sequences = [seq for seq, _ in batch]
    lengths = torch.tensor([len(seq) for seq in sequences], dtype=torch.int64)
    longest = int(lengths.max()) if len(sequences) else 0
    feature_shape = sequences[0].shape[1:]
    inputs = torch.full((len(sequences), longest, *feature_shape), pad_value,
                        dtype=sequences[0].dtype)
    for i, seq in enumerate(sequences):
        inputs[i, : len(seq)] = seq
    # From the lengths: a real element may well equal the pad value.
    mask = torch.arange(longest)[None, :] < lengths[:, None]
    if not batch_first:
        inputs, mask = inputs.T, mask.T
    labels = torch.tensor([label for _, label in batch], dtype=torch.int64)
    return {"inputs": inputs, "lengths": lengths, "mask": mask, "labels": labels}
