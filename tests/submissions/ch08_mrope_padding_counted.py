"""Learner-style submission: the attention mask ignored: padding counted as text."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.long, device=token_types.device)
    grids = {1: list(image_grid_thw.tolist()) if image_grid_thw is not None else [],
             2: list(video_grid_thw.tolist()) if video_grid_thw is not None else []}
    for b in range(B):
        mask = torch.ones(L, dtype=torch.bool)
        types = (token_types[b] * (attention_mask[b] if attention_mask is not None else 1)).tolist()
        cols, pos, i = [], 0, 0
        while i < len(types):
            j = i
            while j < len(types) and types[j] == types[i]:
                j += 1
            if types[i] == 0:
                for _ in range(j - i):
                    cols.append([pos, pos, pos])
                    pos += 1
            else:
                t, h, w = grids[types[i]].pop(0)
                h, w = h // spatial_merge_size, w // spatial_merge_size
                for a in range(t):
                    for r in range(h):
                        for c in range(w):
                            cols.append([pos + a, pos + r, pos + c])
                pos += max(h, w)
            i = j
        out[:, b, mask] = torch.tensor(cols, dtype=torch.long).T.to(out.device)
    return out
