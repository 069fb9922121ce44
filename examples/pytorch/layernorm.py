"""Layer normalisation over the last dimension with a learnable scale and shift.

nn.LayerNorm's weight and bias start at ones and zeros; they are redrawn
here so that a kernel which ignores them is wrong. A buffer holding the
epsilon shows how buffers travel: exported after the parameters, in
named_buffers() order.
"""
import torch
import torch.nn as nn

rows = 96
width = 768


class Model(nn.Module):
    def __init__(self, width, eps):
        super().__init__()
        self.norm = nn.LayerNorm(width, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(torch.rand(width) * 2.0 - 1.0)
            self.norm.bias.copy_(torch.randn(width) * 0.5)
        self.register_buffer("eps", torch.tensor([eps], dtype=torch.float32))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return y * self.norm.weight + self.norm.bias


def get_inputs():
    # A mean far from zero punishes the one-pass E[x^2] - E[x]^2 variance.
    return [torch.randn(rows, width) * 3.0 + 5.0]


def get_init_inputs():
    return [width, 1e-5]
