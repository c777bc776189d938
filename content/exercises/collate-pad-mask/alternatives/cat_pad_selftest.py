# Style: each sequence padded by concatenating a pad block, then stacked along the batch or
# time dimension; mask from arange < lengths broadcasting; self-test block.
import torch


def _pad_to(seq: torch.Tensor, length: int, pad_value) -> torch.Tensor:
    missing = length - seq.shape[0]
    pad = torch.full((missing, *seq.shape[1:]), pad_value, dtype=seq.dtype, device=seq.device)
    return torch.cat([seq, pad], dim=0)


def collate(batch, pad_value=0, batch_first=True):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    t_max = int(lengths.max()) if len(seqs) else 0
    dim = 0 if batch_first else 1
    inputs = torch.stack([_pad_to(s, t_max, pad_value) for s in seqs], dim=dim)
    positions = torch.arange(t_max)
    if batch_first:
        mask = positions[None, :] < lengths[:, None]
    else:
        mask = positions[:, None] < lengths[None, :]
    return {
        "inputs": inputs,
        "lengths": lengths,
        "mask": mask,
        "labels": torch.tensor(list(labels), dtype=torch.long),
    }


if __name__ == "__main__":
    out = collate([(torch.tensor([5, 0, 7]), 1), (torch.tensor([9]), 0)], pad_value=-1)
    print(out["inputs"], out["lengths"], out["labels"])
    print(out["mask"])
    tm = collate([(torch.ones(2, 3), 4), (torch.zeros(0, 3), 5)], batch_first=False)
    print(tm["inputs"].shape, tm["mask"].shape)  # (2, 2, 3), (2, 2)
