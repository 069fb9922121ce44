"""relu(x @ weight.T + bias): a linear layer and its activation, fused.

The weight and the bias are learnable parameters created from the seeded
generator, so the reference job exports them (in named_parameters() order:
weight, then bias) for a candidate to read as inputs.
"""
import torch
import torch.nn as nn

batch = 128
in_features = 256
out_features = 192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        # Scaled so that about half of the pre-activations are negative.
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x):
        return torch.relu(torch.matmul(x, self.weight.t()) + self.bias)


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
