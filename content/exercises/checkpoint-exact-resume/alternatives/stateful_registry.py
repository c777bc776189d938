# Style: __all__ and a self-test block; a registry maps each stateful part (model, optimiser,
# schedule, both generators, the step counter) to a save and a load function, looped over.
import torch
from torch import nn

__all__ = ["Trainer"]


def _snapshot(obj):
    """Deep copy of a nest of dicts/lists/tuples, cloning tensors (no aliasing of live state)."""
    if torch.is_tensor(obj):
        return obj.detach().clone()
    if isinstance(obj, dict):
        return {k: _snapshot(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_snapshot(v) for v in obj)
    return obj


class Trainer:
    """A small regression model trained with AdamW, a StepLR schedule, dropout and random
    batches. __init__, train_step and weights are given: do not change them."""

    def __init__(self, weights, x, y, batch_size=4, lr=1e-2, seed=0):
        d_in, hidden, d_out = x.shape[1], weights[0].shape[0], y.shape[1]
        self.model = nn.Sequential(
            nn.Linear(d_in, hidden), nn.ReLU(), nn.Dropout(0.25), nn.Linear(hidden, d_out)
        )
        with torch.no_grad():
            for p, w in zip(self.model.parameters(), weights):
                p.copy_(w)
        self.x, self.y, self.batch_size = x, y, batch_size
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=0.05)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=3, gamma=0.5)
        # Which examples each batch takes comes from the trainer's own generator; dropout's
        # masks come from torch's global one.
        self.sampler = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed + 1)
        self.step = 0

    def train_step(self):
        index = torch.randint(0, len(self.x), (self.batch_size,), generator=self.sampler)
        self.model.train()
        loss = nn.functional.mse_loss(self.model(self.x[index]), self.y[index])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        return loss.detach()

    def weights(self):
        return [p.detach().clone() for p in self.model.parameters()]

    def _stateful_parts(self):
        """name -> (save, load). The global generator comes last, so nothing done while
        loading the other parts can draw from it after it is restored."""

        def set_step(value):
            self.step = int(value)

        return {
            "model": (self.model.state_dict, self.model.load_state_dict),
            "optimizer": (self.optimizer.state_dict, self.optimizer.load_state_dict),
            "scheduler": (self.scheduler.state_dict, self.scheduler.load_state_dict),
            "sampler": (self.sampler.get_state,
                        lambda s: self.sampler.set_state(s.to(torch.uint8))),
            "step": (lambda: self.step, set_step),
            "global_rng": (torch.get_rng_state,
                           lambda s: torch.set_rng_state(s.to(torch.uint8))),
        }

    def state_dict(self) -> dict:
        """Everything needed to continue training exactly: tensors, numbers, strings, and
        lists, tuples and dicts of them."""
        return {name: _snapshot(save()) for name, (save, _) in self._stateful_parts().items()}

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict returned, into a Trainer built with any weights and seed."""
        for name, (_, load) in self._stateful_parts().items():
            load(state[name])


if __name__ == "__main__":
    g = torch.Generator().manual_seed(42)
    x, y = torch.randn(20, 3, generator=g), torch.randn(20, 2, generator=g)
    w = [torch.randn(8, 3, generator=g), torch.randn(8, generator=g),
         torch.randn(2, 8, generator=g), torch.randn(2, generator=g)]
    w2 = [t + 1 for t in w]
    a = Trainer(w, x, y, seed=0)
    losses_a = [a.train_step() for _ in range(6)]
    b = Trainer(w, x, y, seed=0)
    losses_b = [b.train_step() for _ in range(2)]
    checkpoint = b.state_dict()
    c = Trainer(w2, x, y, seed=7)
    c.train_step()
    c.load_state_dict(checkpoint)
    losses_c = [c.train_step() for _ in range(4)]
    print(all(torch.equal(p, q) for p, q in zip(a.weights(), c.weights())), c.step)
    print(all(torch.equal(p, q) for p, q in zip(losses_a, losses_b + losses_c)))
