# Bug: The chunks are views of the caller's tensors (reshape without clone), so the reduce-scatter's += writes partial sums into the input tensors; a correct version works on copies and leaves the inputs unchanged.
import torch


def ring_all_reduce(tensors):
    world = len(tensors)
    shape = tensors[0].shape
    # Each rank's own copy of the data, cut into W chunks (views of one flat buffer).
    chunks = [list(t.reshape(-1).tensor_split(world)) for t in tensors]
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
