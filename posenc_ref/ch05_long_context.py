"""Generated from course/05_long_context/chapter.py by `python -m grader build`: edit the chapter."""

# from course/05_long_context/chapter.py#py-7ebc5c41
import math

import torch


# from course/05_long_context/chapter.py#py-ab100977
def rope_wavelengths(head_dim, base=10000.0):
    """lambda_i = 2 pi / theta_i = 2 pi base^(2i/d), i = 0 .. d/2 - 1: the tokens pair i takes to turn a full
    circle. Returns (head_dim/2,) float32."""
    # Hint: the idea: pair i turns by theta_i radians per token, so it is back where it started after 2 pi / theta_i
    #       tokens. Call chapter 4's frequencies inv_freq.
    #       Shapes: inv_freq (head_dim/2,), wavelengths (head_dim/2,) float32
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    # theta_i = 1 / base^(2i/d)
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (d/2,)
    # lambda_i = 2 pi / theta_i
    return 2 * math.pi / inv_freq  # (d/2,)


# from course/05_long_context/chapter.py#py-317203e6
def yarn_ramp(head_dim, base, original_max_position_embeddings, beta_fast=32.0, beta_slow=1.0, truncate=True):
    """YaRN's interpolation weight per pair (Peng et al., 2023). Returns (head_dim/2,) float32.

    corr(r) = d ln(L0 / (2 pi r)) / (2 ln base) is the pair that turns r times in L0 tokens;
    low = floor(corr(beta_fast)), high = ceil(corr(beta_slow)), clamped to [0, d - 1];
    ramp_j = clamp((j - low) / (high - low), 0, 1): 0 keeps theta_j, 1 uses theta_j / factor.
    """
    # Hint: the idea: find the (fractional) pair indices that turn beta_fast and beta_slow times within L0
    #       tokens, and ramp linearly from 0 to 1 between them.
    #       Shapes: (head_dim/2,) float32
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    d, train_len = head_dim, original_max_position_embeddings

    # corr(r) = d ln(L0 / (2 pi r)) / (2 ln base)
    def corr(turns):
        return d * math.log(train_len / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)  # d - 1, not d/2 - 1: as in YaRN's code
    if low == high:
        high += 0.001  # avoid 0 / 0
    j = torch.arange(d // 2, dtype=torch.float32)  # (d/2,)
    return ((j - low) / (high - low)).clamp(0, 1)  # (d/2,)


# from course/05_long_context/chapter.py#py-4ed9d736
def scaled_rope_inv_freq(head_dim, base, rope_type, factor=1.0, original_max_position_embeddings=None, seq_len=None,
                         **params):
    """RoPE inverse frequencies with context-length scaling, as transformers 5.x ROPE_INIT_FUNCTIONS.

    default: theta_i = base^(-2i/d)        linear: theta_i / s           (Chen et al., 2023)
    dynamic: base' = base * (s L / L0 - (s - 1))^(d/(d-2)), L = max(seq_len, L0)   (bloc97, emozilla)
    yarn:    theta_i / s * ramp_i + theta_i * (1 - ramp_i), attention factor 0.1 ln s + 1  (Peng et al.)
    llama3:  keep wavelengths < L0/high, divide those > L0/low by s, blend between (Llama 3.1)
    Returns (inv_freq (head_dim/2,) float32, attention_factor float); cos and sin are multiplied by the factor.
    """
    # Hint: the idea: validate; compute theta_i = base^(-2i/d) (with a larger base for dynamic); then change
    #       them as the rope_type says.
    #       Shapes: inv_freq (head_dim/2,) float32; attention_factor a Python float
    uses = {"default": set(), "linear": set(), "dynamic": set(),
            "yarn": {"attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"},
            "llama3": {"low_freq_factor", "high_freq_factor"}}
    if rope_type not in uses:
        raise ValueError(f"unknown rope_type={rope_type!r}; expected one of {', '.join(uses)}")
    if head_dim <= 0 or head_dim % 2 != 0:
        raise ValueError(f"head_dim must be a positive even number, got head_dim={head_dim}")
    if factor is None or factor < 1:
        raise ValueError(f"factor must be >= 1 (scaling stretches the context, never shrinks it), got factor={factor}")
    unused = sorted(set(params) - uses[rope_type])
    if unused:
        raise ValueError(f"rope_type={rope_type!r} does not use the parameter(s) {', '.join(unused)}")
    train_len = original_max_position_embeddings
    if rope_type in ("dynamic", "yarn", "llama3") and train_len is None:
        raise ValueError(f"rope_type={rope_type!r} needs original_max_position_embeddings (the training length "
                         "L0), got original_max_position_embeddings=None")
    d = head_dim

    if rope_type == "dynamic":
        if d == 2:
            raise ValueError("dynamic scaling needs head_dim >= 4 (its exponent is d/(d-2)), got head_dim=2")
        length = train_len if seq_len is None else max(int(seq_len), train_len)  # L = max(seq_len, L0)
        # base' = base * (s L / L0 - (s - 1))^(d/(d-2))
        base = base * ((factor * length / train_len) - (factor - 1)) ** (d / (d - 2))
    # theta_i = base^(-2i/d), in float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))  # (d/2,)

    if rope_type in ("default", "dynamic"):
        return inv_freq, 1.0
    if rope_type == "linear":
        return inv_freq / factor, 1.0  # slower, not faster: positions m -> m / s

    if rope_type == "yarn":
        ramp = yarn_ramp(d, base, train_len, params.get("beta_fast") or 32, params.get("beta_slow") or 1,
                         params.get("truncate", True))  # (d/2,) 0 = keep, 1 = interpolate
        # theta'_j = ramp_j theta_j / s + (1 - ramp_j) theta_j
        inv_freq = inv_freq / factor * ramp + inv_freq * (1 - ramp)  # (d/2,)

        # m(s, mu) = 0.1 mu ln s + 1, and 1 for s <= 1
        def m(scale, mu=1.0):
            return 1.0 if scale <= 1 else 0.1 * mu * math.log(scale) + 1.0

        attention_factor = params.get("attention_factor")
        if attention_factor is None:
            mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
            attention_factor = m(factor, mscale) / m(factor, mscale_all_dim) if mscale and mscale_all_dim else m(factor)
        return inv_freq, float(attention_factor)

    # llama3
    low, high = params.get("low_freq_factor"), params.get("high_freq_factor")
    if low is None or high is None or high <= low:
        raise ValueError("llama3 needs low_freq_factor < high_freq_factor, got "
                         f"low_freq_factor={low}, high_freq_factor={high}")
    wavelength = 2 * math.pi / inv_freq  # (d/2,)
    # sigma = (L0 / lambda - low) / (high - low); theta' = (1 - sigma) theta / s + sigma theta
    sigma = (train_len / wavelength - low) / (high - low)  # (d/2,)
    blended = (1 - sigma) * inv_freq / factor + sigma * inv_freq  # (d/2,)
    # lambda > L0 / low: theta / s;   lambda < L0 / high: theta;   between: blended
    inv_freq = torch.where(wavelength > train_len / low, inv_freq / factor,
                           torch.where(wavelength < train_len / high, inv_freq, blended))  # (d/2,)
    return inv_freq, 1.0
