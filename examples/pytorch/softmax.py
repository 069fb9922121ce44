"""Softmax over the last dimension of a (batch, features) matrix.

A KernelBench-format reference: the evaluator builds Model(*get_init_inputs())
and calls it on get_inputs(). The inputs are scaled so that a kernel which
skips the max subtraction overflows exp() and is caught.
"""
import torch
import torch.nn as nn

batch = 64
features = 1000


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.softmax(x, dim=self.dim)


def get_inputs():
    # Signed and wide: values up to about +-40 make a naive exp() overflow.
    return [torch.randn(batch, features) * 10.0]


def get_init_inputs():
    return [-1]
