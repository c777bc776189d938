# Bug: sigmoid is written as exp(g) / (1 + exp(g)), which overflows to inf / inf = NaN for a gate pre-activation in the hundreds; a correct version uses torch.sigmoid (or exp(-|g|)).
import torch


def swiglu_hidden_size(d_model, multiple_of):
    # Two thirds of the classic 4 * d_model, so that three matrices cost what two did;
    # floor first (integer division), then round UP to a multiple for efficient kernels.
    hidden = 8 * d_model // 3
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def swiglu_ffn(x, w_gate, w_up, w_down):
    # Weights are in nn.Linear layout (out_features, in_features), hence the transposes.
    gate = x @ w_gate.T
    up = x @ w_up.T
    # SiLU(g) = g * sigmoid(g); torch.sigmoid saturates cleanly for large |g| (no inf / inf).
    e = torch.exp(gate)
    hidden = gate * (e / (1 + e)) * up
    return hidden @ w_down.T
