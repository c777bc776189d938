# Style: one flat dict with dotted string keys; optimiser state written and restored by hand
# per parameter, in the order of model.parameters().
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

    def state_dict(self) -> dict:
        """Everything needed to continue training exactly: tensors, numbers, strings, and
        lists, tuples and dicts of them."""
        flat = {"step": self.step}
        for name, tensor in self.model.state_dict().items():
            flat["model." + name] = tensor.detach().clone()
        for i, p in enumerate(self.model.parameters()):
            slot = self.optimizer.state.get(p, {})
            for key, value in slot.items():
                flat[f"adamw.{i}.{key}"] = (
                    value.detach().clone() if torch.is_tensor(value) else value
                )
        for g, group in enumerate(self.optimizer.param_groups):
            flat[f"group.{g}.lr"] = float(group["lr"])
            if "initial_lr" in group:
                flat[f"group.{g}.initial_lr"] = float(group["initial_lr"])
        for key, value in self.scheduler.state_dict().items():
            flat["scheduler." + key] = value
        flat["rng.sampler"] = self.sampler.get_state().clone()
        flat["rng.global"] = torch.get_rng_state().clone()
        return flat

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict returned, into a Trainer built with any weights and seed."""
        model_state = {k[len("model."):]: v for k, v in state.items() if k.startswith("model.")}
        self.model.load_state_dict(model_state)

        params = list(self.model.parameters())
        self.optimizer.state.clear()
        for key, value in state.items():
            if not key.startswith("adamw."):
                continue
            _, index, field = key.split(".", 2)
            p = params[int(index)]
            if torch.is_tensor(value):
                value = value.clone()
                if field != "step":
                    value = value.to(dtype=p.dtype, device=p.device)
            self.optimizer.state[p][field] = value
        for g, group in enumerate(self.optimizer.param_groups):
            group["lr"] = state[f"group.{g}.lr"]
            if f"group.{g}.initial_lr" in state:
                group["initial_lr"] = state[f"group.{g}.initial_lr"]

        sched = {k[len("scheduler."):]: v for k, v in state.items() if k.startswith("scheduler.")}
        self.scheduler.load_state_dict(sched)

        self.sampler.set_state(state["rng.sampler"].to(torch.uint8))
        torch.set_rng_state(state["rng.global"].to(torch.uint8))
        self.step = int(state["step"])
