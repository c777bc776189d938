# Style: module-level __all__; fills a time-major (T, B, ...) buffer and its mask with plain
# Python loops over the examples, transposing to batch-first only when asked.
import torch

__all__ = ["collate"]


def collate(batch, pad_value=0, batch_first=True):
    n_examples = len(batch)
    seq_lengths = [int(seq.shape[0]) for seq, _ in batch]
    longest = max(seq_lengths, default=0)
    first = batch[0][0]

    time_major = torch.full((longest, n_examples) + tuple(first.shape[1:]), pad_value,
                            dtype=first.dtype)
    real = torch.zeros((longest, n_examples), dtype=torch.bool)
    label_list = []
    for b, (seq, label) in enumerate(batch):
        length = seq_lengths[b]
        if length:
            time_major[:length, b] = seq
            real[:length, b] = True
        label_list.append(int(label))

    if batch_first:
        inputs, mask = time_major.permute(1, 0, *range(2, time_major.dim())), real.t()
        inputs, mask = inputs.contiguous(), mask.contiguous()
    else:
        inputs, mask = time_major, real
    return {
        "inputs": inputs,
        "lengths": torch.tensor(seq_lengths, dtype=torch.int64),
        "mask": mask,
        "labels": torch.tensor(label_list, dtype=torch.int64),
    }
