# Style: statistics from explicit sums in float64 (sum/m and sum of squared deviations),
# output cast back to the input dtype; running stats updated in place; self-test block.
import torch


class BatchNorm2d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.weight = torch.ones(num_features)
        self.bias = torch.zeros(num_features)
        self.running_mean = torch.zeros(num_features)
        self.running_var = torch.ones(num_features)
        self.training = True

    @staticmethod
    def _per_channel(t):
        return t.reshape(1, -1, 1, 1)

    def forward(self, x):
        xd = x.to(torch.float64)
        if self.training:
            n, _, h, w = x.shape
            m = n * h * w
            mean = xd.sum(dim=(0, 2, 3)) / m
            sq_dev = ((xd - self._per_channel(mean)) ** 2).sum(dim=(0, 2, 3))
            var_biased = sq_dev / m
            var_unbiased = sq_dev / (m - 1)
            with torch.no_grad():
                mom = self.momentum
                rm, rv = self.running_mean, self.running_var
                rm.mul_(1 - mom).add_((mom * mean.detach()).to(rm.dtype))
                rv.mul_(1 - mom).add_((mom * var_unbiased.detach()).to(rv.dtype))
        else:
            mean = self.running_mean.to(torch.float64)
            var_biased = self.running_var.to(torch.float64)
        inv_std = 1.0 / torch.sqrt(var_biased + self.eps)
        scale = self.weight.to(torch.float64) * inv_std
        shift = self.bias.to(torch.float64) - mean * scale
        y = xd * self._per_channel(scale) + self._per_channel(shift)
        return y.to(x.dtype)


if __name__ == "__main__":
    bn = BatchNorm2d(1, momentum=0.5)
    x = torch.tensor([0.0, 2.0, 4.0, 6.0]).reshape(4, 1, 1, 1)
    print(bn.forward(x).flatten())  # [-1.3416, -0.4472, 0.4472, 1.3416]
    print(bn.running_mean, bn.running_var)  # [1.5], [3.8333]
    bn.training = False
    print(bn.forward(x).flatten())
