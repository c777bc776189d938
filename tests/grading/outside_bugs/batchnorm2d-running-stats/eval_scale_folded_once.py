# Bug: Eval mode folds the running statistics, weight and bias into a per-channel scale and shift the first time it runs and reuses them ever after, so after more training steps eval still normalises with the stale statistics; a correct layer reads the current running statistics at every eval forward.
import torch


class BatchNorm2d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.eps, self.momentum = eps, momentum
        self.weight = torch.ones(num_features)
        self.bias = torch.zeros(num_features)
        self.running_mean = torch.zeros(num_features)
        self.running_var = torch.ones(num_features)
        self.training = True
        self._folded = None  # (scale, shift) for inference, computed once

    def forward(self, x):
        dims = (0, 2, 3)  # statistics per channel: over the batch and both spatial dimensions
        shape = (1, -1, 1, 1)
        if not self.training:
            if self._folded is None:
                # Fold the normalisation into one multiply-add per channel for inference.
                scale = self.weight / torch.sqrt(self.running_var + self.eps)
                shift = self.bias - self.running_mean * scale
                self._folded = (scale, shift)
            scale, shift = self._folded
            return x * scale.reshape(shape) + shift.reshape(shape)
        count = x.shape[0] * x.shape[2] * x.shape[3]
        mean = x.mean(dim=dims)
        var = x.var(dim=dims, unbiased=False)
        with torch.no_grad():
            unbiased = var.detach() * count / (count - 1)
            m = self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean.detach()
            self.running_var = (1 - m) * self.running_var + m * unbiased
        x_hat = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps)
        return x_hat * self.weight.reshape(shape) + self.bias.reshape(shape)
