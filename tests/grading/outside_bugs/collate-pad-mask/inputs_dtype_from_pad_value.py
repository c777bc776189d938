# Bug: The padded tensor is created with torch.full without a dtype, so it takes the pad value's dtype (int64 for pad 0, float32 for a float pad) instead of the sequences' dtype, truncating float sequences padded with an int; a correct version passes dtype=sequences[0].dtype.
import torch


def collate(batch, pad_value=0, batch_first=True):
    sequences = [seq for seq, _ in batch]
    lengths = torch.tensor([len(seq) for seq in sequences], dtype=torch.int64)
    longest = int(lengths.max()) if len(sequences) else 0
    feature_shape = sequences[0].shape[1:]
    inputs = torch.full((len(sequences), longest, *feature_shape), pad_value)
    for i, seq in enumerate(sequences):
        inputs[i, : len(seq)] = seq
    # From the lengths: a real element may well equal the pad value.
    mask = torch.arange(longest)[None, :] < lengths[:, None]
    if not batch_first:
        inputs, mask = inputs.transpose(0, 1), mask.transpose(0, 1)
    labels = torch.tensor([label for _, label in batch], dtype=torch.int64)
    return {"inputs": inputs, "lengths": lengths, "mask": mask, "labels": labels}
