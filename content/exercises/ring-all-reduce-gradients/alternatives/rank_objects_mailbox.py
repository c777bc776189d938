# Style: Rank objects that send into a per-step mailbox, delivered together after all sends; self-test.
import torch


class _Rank:
    def __init__(self, rank: int, world: int, tensor: torch.Tensor) -> None:
        self.rank, self.world = rank, world
        self.chunks = [c.clone() for c in torch.tensor_split(tensor.flatten(), world)]

    @property
    def right(self) -> int:
        return (self.rank + 1) % self.world

    def send(self, chunk_id: int) -> tuple[int, int, torch.Tensor]:
        """A message (destination, chunk id, payload)."""
        return self.right, chunk_id, self.chunks[chunk_id].clone()

    def receive_add(self, chunk_id: int, payload: torch.Tensor) -> None:
        self.chunks[chunk_id] = self.chunks[chunk_id] + payload

    def receive_copy(self, chunk_id: int, payload: torch.Tensor) -> None:
        self.chunks[chunk_id] = payload


def _run_phase(ranks: list[_Rank], chunk_to_send, deliver_name: str) -> None:
    W = len(ranks)
    for s in range(W - 1):
        mailbox = [rk.send(chunk_to_send(rk.rank, s)) for rk in ranks]  # all sends of the step
        for dest, chunk_id, payload in mailbox:
            getattr(ranks[dest], deliver_name)(chunk_id, payload)


def ring_all_reduce(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    W = len(tensors)
    ranks = [_Rank(r, W, t) for r, t in enumerate(tensors)]
    _run_phase(ranks, lambda r, s: (r - s) % W, "receive_add")       # reduce-scatter
    _run_phase(ranks, lambda r, s: (r + 1 - s) % W, "receive_copy")  # all-gather
    return [torch.cat(rk.chunks).view(t.shape) for rk, t in zip(ranks, tensors)]


def average_gradients(per_rank_grads: list[list[torch.Tensor]]) -> list[list[torch.Tensor]]:
    W = len(per_rank_grads)
    per_param = [ring_all_reduce(list(grads)) for grads in zip(*per_rank_grads)]
    return [[reduced[r] / W for reduced in per_param] for r in range(W)]


if __name__ == "__main__":
    print(ring_all_reduce([torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])]))
    print(average_gradients([[torch.tensor([1.0])], [torch.tensor([3.0])]]))
    ts = [torch.randn(3, 5) for _ in range(4)]
    out = ring_all_reduce(ts)
    print(all(torch.equal(out[0], o) for o in out), torch.allclose(out[0], sum(ts)))
