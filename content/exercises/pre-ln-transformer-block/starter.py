import torch


def block_parameter_count(d_model: int, n_heads: int, d_ff: int) -> int:
    """The number of trainable parameters of one pre-LN encoder block."""
    raise NotImplementedError


def pre_ln_block(
    x: torch.Tensor, params: dict[str, torch.Tensor], n_heads: int, causal: bool = False
) -> torch.Tensor:
    """x: (batch, L, d_model) -> (batch, L, d_model).

    h = x + attention(layer_norm1(x)); y = h + linear2(gelu(linear1(layer_norm2(h)))).
    params: nn.TransformerEncoderLayer's state_dict names (norm1.weight, self_attn.in_proj_weight,
    linear1.weight, ...).
    """
    raise NotImplementedError
