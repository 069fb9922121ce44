"""Root-mean-square normalisation of each row, then a learnable per-channel gain.

y = x / sqrt(mean(x ** 2 over the last dimension) + eps) * weight

The gain starts as random signed values instead of ones, so a kernel that
leaves it out gives wrong answers. The inputs mix an ordinary spread with
rare large values, so a kernel that squares in half precision, or forgets
eps, is caught too.
"""
import torch
import torch.nn as nn

rows = 256
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(hidden) * 3.0 - 1.5)

    def forward(self, x):
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight


def get_inputs():
    x = torch.randn(rows, hidden)
    # About one element in a thousand is fifty times larger than the rest.
    spikes = (torch.rand(rows, hidden) < 1e-3).float() * 50.0
    return [x + spikes * torch.sign(x)]


def get_init_inputs():
    return [hidden, 1e-6]
