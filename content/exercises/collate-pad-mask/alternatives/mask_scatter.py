# Style: build the mask first, then scatter all real elements in one boolean-index
# assignment from the concatenation of the sequences (row-major order matches the mask's).
import torch


def collate(
    batch: list[tuple[torch.Tensor, int]], pad_value: float = 0, batch_first: bool = True
) -> dict[str, torch.Tensor]:
    sequences = [s for s, _ in batch]
    lengths = torch.as_tensor([s.size(0) for s in sequences], dtype=torch.int64)
    T = max([s.size(0) for s in sequences] + [0])
    B = len(sequences)
    tail = sequences[0].shape[1:]
    mask = torch.arange(T).unsqueeze(0).expand(B, T) < lengths.unsqueeze(1)
    inputs = sequences[0].new_full((B, T, *tail), pad_value)
    inputs[mask] = torch.cat(sequences, dim=0).to(inputs.dtype)
    labels = torch.as_tensor([int(y) for _, y in batch], dtype=torch.int64)
    if not batch_first:
        inputs, mask = inputs.transpose(0, 1), mask.transpose(0, 1)
    return {"inputs": inputs, "lengths": lengths, "mask": mask, "labels": labels}
