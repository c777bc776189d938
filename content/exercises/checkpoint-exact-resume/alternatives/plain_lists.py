# Style: checkpoint as plain lists ordered by parameter index (generator states as lists of
# byte values); restore rebuilds torch's optimiser format and copies weights in place.
import torch
from torch import nn


def _to_bytes(state: torch.Tensor) -> list[int]:
    return [int(b) for b in state.view(-1)]


def _from_bytes(values) -> torch.Tensor:
    if torch.is_tensor(values):
        return values.to(torch.uint8).clone()
    return torch.tensor(list(values), dtype=torch.uint8)


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

    def state_dict(self) -> dict:
        """Everything needed to continue training exactly: tensors, numbers, strings, and
        lists, tuples and dicts of them."""
        params = list(self.model.parameters())
        moments = []
        for p in params:
            s = self.optimizer.state.get(p)
            if not s:
                moments.append(None)
            else:
                moments.append({"step": float(s["step"]),
                                "exp_avg": s["exp_avg"].detach().clone(),
                                "exp_avg_sq": s["exp_avg_sq"].detach().clone()})
        return {
            "weights": [p.detach().clone() for p in params],
            "moments": moments,
            "lrs": [float(g["lr"]) for g in self.optimizer.param_groups],
            "initial_lrs": [float(g.get("initial_lr", g["lr"])) for g in self.optimizer.param_groups],
            "scheduler_epoch": int(self.scheduler.last_epoch),
            "scheduler_count": int(getattr(self.scheduler, "_step_count", 0)),
            "scheduler_last_lr": [float(v) for v in self.scheduler.get_last_lr()],
            "scheduler_base_lrs": [float(v) for v in self.scheduler.base_lrs],
            "sampler_bytes": _to_bytes(self.sampler.get_state()),
            "global_bytes": _to_bytes(torch.get_rng_state()),
            "step": int(self.step),
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict returned, into a Trainer built with any weights and seed."""
        params = list(self.model.parameters())
        with torch.no_grad():
            for p, w in zip(params, state["weights"]):
                p.copy_(w)

        # Rebuild the optimiser's own format (integer ids in parameter order) and load it.
        opt_state = {}
        for i, m in enumerate(state["moments"]):
            if m is not None:
                opt_state[i] = {"step": torch.tensor(float(m["step"])),
                                "exp_avg": m["exp_avg"].clone(),
                                "exp_avg_sq": m["exp_avg_sq"].clone()}
        template = self.optimizer.state_dict()
        groups = template["param_groups"]
        for group, lr, initial in zip(groups, state["lrs"], state["initial_lrs"]):
            group["lr"] = lr
            group["initial_lr"] = initial
        self.optimizer.load_state_dict({"state": opt_state, "param_groups": groups})

        self.scheduler.last_epoch = int(state["scheduler_epoch"])
        self.scheduler._step_count = int(state["scheduler_count"])
        self.scheduler._last_lr = list(state["scheduler_last_lr"])
        self.scheduler.base_lrs = list(state["scheduler_base_lrs"])

        self.sampler.set_state(_from_bytes(state["sampler_bytes"]))
        torch.set_rng_state(_from_bytes(state["global_bytes"]))
        self.step = int(state["step"])
