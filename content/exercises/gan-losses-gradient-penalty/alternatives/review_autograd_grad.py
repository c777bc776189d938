# Style: softplus losses; x_hat detached and set to require grad, torch.autograd.grad with explicit grad_outputs and create_graph.
import torch
import torch.nn.functional as F


def discriminator_loss(real_logits, fake_logits):
    # -log sigmoid(l) = softplus(-l);  -log(1 - sigmoid(l)) = softplus(l)
    return F.softplus(-real_logits).mean() + F.softplus(fake_logits).mean()


def generator_loss(fake_logits):
    return F.softplus(-fake_logits).mean()


def critic(params, x):
    h = torch.tanh(x @ params["w1"].T + params["b1"])
    return h @ params["w2"] + params["b2"]


def gradient_penalty(params, real, fake, alpha, weight=10.0):
    a = alpha.unsqueeze(1)
    x_hat = (a * real + (1 - a) * fake).detach().requires_grad_(True)
    scores = critic(params, x_hat)
    (g,) = torch.autograd.grad(
        outputs=scores,
        inputs=x_hat,
        grad_outputs=torch.ones_like(scores),
        create_graph=True,
    )
    norms = g.norm(2, dim=1)
    return weight * ((norms - 1) ** 2).mean()
