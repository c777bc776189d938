# Bug: The mask is built by comparing the padded inputs with pad_value, so a real element that equals the pad value is marked as padding; a correct mask comes from the lengths.
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
    mask = inputs != pad_value
    if mask.dim() > 2:
        mask = mask.any(dim=-1)
    if not batch_first:
        inputs, mask = inputs.transpose(0, 1), mask.transpose(0, 1)
    labels = torch.tensor([label for _, label in batch], dtype=torch.int64)
    return {"inputs": inputs, "lengths": lengths, "mask": mask, "labels": labels}
