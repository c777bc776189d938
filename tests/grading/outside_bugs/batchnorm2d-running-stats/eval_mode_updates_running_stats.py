# Bug: The running statistics are updated on every forward, in eval mode too (from the eval batch, after normalising with the old values), so evaluating changes the layer; a correct layer changes nothing in eval mode.
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
        count = x.shape[0] * x.shape[2] * x.shape[3]
        batch_mean = x.mean(dim=dims)
        # Normalise with the biased variance (what the batch actually has)...
        batch_var = x.var(dim=dims, unbiased=False)
        if self.training:
            mean, var = batch_mean, batch_var
        else:
            mean, var = self.running_mean, self.running_var
        if count > 1:
            with torch.no_grad():
                # ...but track the unbiased one: the running estimate is of the population's.
                unbiased = batch_var.detach() * count / (count - 1)
                m = self.momentum
                self.running_mean = (1 - m) * self.running_mean + m * batch_mean.detach()
                self.running_var = (1 - m) * self.running_var + m * unbiased
        shape = (1, -1, 1, 1)
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
