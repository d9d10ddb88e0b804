"""Held-out learner mistake: MAE's own code, the column (w) blocks first."""
import torch


def sincos_2d_table(grid_h, grid_w, d_model, base=10000.0, device=None):
    if d_model <= 0 or d_model % 4 != 0:
        raise ValueError(f"d_model={d_model} must be a multiple of 4")
    if grid_h <= 0 or grid_w <= 0:
        raise ValueError(f"grid_h={grid_h}, grid_w={grid_w} must be positive")

    def one_axis(pos, dim):  # MAE's get_1d_sincos_pos_embed_from_grid
        omega = torch.arange(dim // 2, dtype=torch.float64, device=device) / (dim / 2.0)
        omega = 1.0 / base ** omega
        out = pos.reshape(-1, 1) * omega
        return torch.cat([out.sin(), out.cos()], dim=1)

    gh = torch.arange(grid_h, dtype=torch.float64, device=device)
    gw = torch.arange(grid_w, dtype=torch.float64, device=device)
    w_grid, h_grid = torch.meshgrid(gw, gh, indexing="xy")  # (H, W) each
    emb_w = one_axis(w_grid, d_model // 2)
    emb_h = one_axis(h_grid, d_model // 2)
    return torch.cat([emb_w, emb_h], dim=1).float()
