# Bug: state_dict copies the model by building a fresh nn.Sequential and loading the weights into it, and building its Linear layers draws their initial weights from torch's global generator after the generator's state was saved, so taking a checkpoint changes the dropout masks of the trainer that goes on training; a correct state_dict leaves the trainer it reads unchanged.
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
        state = {
            "torch_rng": torch.get_rng_state(),        # first, before anything draws from it
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "scheduler": copy.deepcopy(self.scheduler.state_dict()),
            "sampler": self.sampler.get_state(),
            "step": self.step,
        }
        # The weights go through a fresh model of the same layers, so the checkpoint never
        # shares storage with the live parameters.
        snapshot = nn.Sequential(*[type(m)(m.in_features, m.out_features)
                                   if isinstance(m, nn.Linear) else m for m in self.model])
        snapshot.load_state_dict(self.model.state_dict())
        state["model"] = snapshot.state_dict()
        return state

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.sampler.set_state(state["sampler"])
        torch.set_rng_state(state["torch_rng"])
        self.step = state["step"]
