# Style: F.logsigmoid for the losses, a Python loop over the pairs with one autograd.grad
# each (create_graph=True), float64 inside and cast back; a __main__ self-test.
import torch
import torch.nn.functional as F


def discriminator_loss(real_logits, fake_logits):
    return -(F.logsigmoid(real_logits).mean() + F.logsigmoid(-fake_logits).mean())


def generator_loss(fake_logits):
    return -F.logsigmoid(fake_logits).mean()


def critic(params, x):
    hidden = torch.tanh(torch.addmm(params["b1"], x, params["w1"].t()))
    return torch.mv(hidden, params["w2"]) + params["b2"]


def gradient_penalty(params, real, fake, alpha, weight=10.0):
    p64 = {k: v.double() for k, v in params.items()}
    terms = []
    for b in range(real.shape[0]):
        a = alpha[b].double()
        point = (a * real[b].double() + (1 - a) * fake[b].double()).detach().requires_grad_(True)
        score = critic(p64, point[None])[0]
        (g,) = torch.autograd.grad(score, point, create_graph=True)
        terms.append((torch.sqrt((g * g).sum()) - 1) ** 2)
    return (weight * torch.stack(terms).mean()).to(real.dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    params = {
        "w1": torch.randn(5, 3, requires_grad=True),
        "b1": torch.zeros(5),
        "w2": torch.randn(5),
        "b2": torch.tensor(0.0),
    }
    gp = gradient_penalty(params, torch.randn(4, 3), torch.randn(4, 3), torch.rand(4))
    gp.backward()
    assert params["w1"].grad is not None and params["w1"].grad.abs().sum() > 0
    print(gp, discriminator_loss(torch.tensor([1000.0]), torch.tensor([-1000.0])))
