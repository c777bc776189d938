# Bug: Instead of reduce-scatter and all-gather, each rank passes whole tensors round the ring and adds what arrives to its own running sum, so every rank sums in a different order and the ranks end with slightly different bits; a correct ring sums each chunk once and copies it.
import torch


def ring_all_reduce(tensors):
    world = len(tensors)
    shape = tensors[0].shape
    # Pass whole tensors round the ring: at step s rank r receives rank (r - s - 1)'s tensor.
    acc = [t.clone() for t in tensors]
    passing = [t.clone() for t in tensors]
    for s in range(world - 1):
        passing = [passing[(r - 1) % world] for r in range(world)]
        for r in range(world):
            acc[r] += passing[r]
    return acc
    chunks = [list(t.reshape(-1).clone().tensor_split(world)) for t in tensors]
    # Reduce-scatter: after W - 1 steps rank r holds the full sum of chunk (r + 1) % W.
    for s in range(world - 1):
        # Everything sent in a step is read before anything is written: the sends happen
        # at the same time on real hardware.
        sent = [chunks[r][(r - s) % world].clone() for r in range(world)]
        for r in range(world):
            chunks[(r + 1) % world][(r - s) % world] += sent[r]
    # All-gather: pass the completed chunks round; copies, so every rank gets the same bits.
    for s in range(world - 1):
        sent = [chunks[r][(r + 1 - s) % world].clone() for r in range(world)]
        for r in range(world):
            chunks[(r + 1) % world][(r + 1 - s) % world] = sent[r]
    return [torch.cat(c).reshape(shape) for c in chunks]


def average_gradients(per_rank_grads):
    world = len(per_rank_grads)
    averaged = [[] for _ in range(world)]
    for i in range(len(per_rank_grads[0])):
        summed = ring_all_reduce([grads[i] for grads in per_rank_grads])
        for r in range(world):
            # Each shard's loss is a mean over its examples: the mean of the W shard
            # gradients is the full batch's gradient (equal shards).
            averaged[r].append(summed[r] / world)
    return averaged
