# Bug: The running variance is updated with the biased batch variance (divided by m) instead of the unbiased one (divided by m - 1), as nn.BatchNorm2d does.
import torch


class BatchNorm2d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.eps, self.momentum = eps, momentum
        self.weight = torch.ones(num_features)
        self.bias = torch.zeros(num_features)
        self.running_mean = torch.zeros(num_features)
        self.running_var = torch.ones(num_features)
        self.training = True

    def forward(self, x):
        dims = (0, 2, 3)  # statistics per channel: over the batch and both spatial dimensions
        if self.training:
            count = x.shape[0] * x.shape[2] * x.shape[3]
            mean = x.mean(dim=dims)
            # Normalise with the biased variance (what the batch actually has)...
            var = x.var(dim=dims, unbiased=False)
            with torch.no_grad():
                # ...but track the unbiased one: the running estimate is of the population's.
                unbiased = var.detach()
                m = self.momentum
                self.running_mean = (1 - m) * self.running_mean + m * mean.detach()
                self.running_var = (1 - m) * self.running_var + m * unbiased
        else:
            mean, var = self.running_mean, self.running_var
        shape = (1, -1, 1, 1)
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
