"""Held-out learner mistake: the column in the height id and the row in the width id."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.long, device=token_types.device)
    pending = {1: [] if image_grid_thw is None else image_grid_thw.tolist(),
               2: [] if video_grid_thw is None else video_grid_thw.tolist()}
    for b in range(B):
        where = torch.arange(L) if attention_mask is None else attention_mask[b].nonzero().flatten().cpu()
        kinds = token_types[b, where].tolist()
        triples, s, a = [], 0, 0
        while a < len(kinds):
            e = a
            while e < len(kinds) and kinds[e] == kinds[a]:
                e += 1
            if kinds[a] == 0:
                triples += [(s + n, s + n, s + n) for n in range(e - a)]
                s += e - a
            else:
                t, H, W = pending[kinds[a]].pop(0)
                h, w = H // spatial_merge_size, W // spatial_merge_size
                if t * h * w != e - a:
                    raise ValueError(f"grid_thw {(t, H, W)} does not match a group of {e - a}")
                for k in range(t * h * w):
                    f, rest = divmod(k, h * w)
                    r, c = divmod(rest, w)
                    triples.append((s + f, s + c, s + r))
                s += max(h, w)
            a = e
        out[:, b, where.to(out.device)] = torch.tensor(triples, dtype=torch.long, device=out.device).T
    return out
