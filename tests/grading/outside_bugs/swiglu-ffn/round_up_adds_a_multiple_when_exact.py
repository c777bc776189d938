# Bug: The hidden width is rounded up as (h // multiple_of + 1) * multiple_of, which adds a whole multiple when h already is one (768, 64 gives 2112 instead of 2048).
import torch


def swiglu_hidden_size(d_model, multiple_of):
    # Two thirds of the classic 4 * d_model, so that three matrices cost what two did;
    # floor first (integer division), then round UP to a multiple for efficient kernels.
    hidden = 8 * d_model // 3
    return multiple_of * (hidden // multiple_of + 1)


def swiglu_ffn(x, w_gate, w_up, w_down):
    # Weights are in nn.Linear layout (out_features, in_features), hence the transposes.
    gate = x @ w_gate.T
    up = x @ w_up.T
    # SiLU(g) = g * sigmoid(g); torch.sigmoid saturates cleanly for large |g| (no inf / inf).
    hidden = gate * torch.sigmoid(gate) * up
    return hidden @ w_down.T
