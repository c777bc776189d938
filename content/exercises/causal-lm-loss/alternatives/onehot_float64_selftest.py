# Style: one-hot targets and a manual max-shifted logsumexp, in float64, cast back; a __main__ self-test.
import torch


def causal_lm_loss(logits, tokens, ignore_index=-100):
    dtype = logits.dtype
    x = logits[:, 1 - 1 : -1].double()
    y = tokens[:, 1:]
    m = x.amax(dim=-1, keepdim=True).detach()
    lse = m.squeeze(-1) + torch.log(torch.exp(x - m).sum(dim=-1))
    valid = (y != ignore_index)
    onehot = torch.nn.functional.one_hot(y.clamp(0, x.shape[-1] - 1), x.shape[-1]).double()
    target_logit = (x * onehot).sum(dim=-1)
    nll = (lse - target_logit) * valid.double()
    n = valid.sum().item()
    loss = nll.sum() / max(n, 1)
    return loss.to(dtype), torch.exp(loss).to(dtype)


if __name__ == "__main__":
    logits = torch.tensor([[[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [1.0, 1.0, 1.0]]])
    print(causal_lm_loss(logits, torch.tensor([[2, 1, 0]])))
