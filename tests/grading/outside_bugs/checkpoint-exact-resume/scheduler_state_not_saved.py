# Bug: The checkpoint leaves out the StepLR scheduler's state, so the resumed trainer restarts the learning-rate schedule from the loading trainer's position; a correct checkpoint saves and restores scheduler.state_dict().
import copy

import torch
from torch import nn


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

    def state_dict(self):
        # Copies, not views: model.state_dict() shares storage with the live parameters, so a
        # checkpoint kept in memory would keep changing as training goes on.
        return copy.deepcopy({
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),  # AdamW's moments and step counts
            "sampler": self.sampler.get_state(),       # which batches come next
            "torch_rng": torch.get_rng_state(),        # dropout's next masks
            "step": self.step,
        })

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.sampler.set_state(state["sampler"])
        # Restored last, after anything that might draw random numbers while loading.
        torch.set_rng_state(state["torch_rng"])
        self.step = state["step"]
