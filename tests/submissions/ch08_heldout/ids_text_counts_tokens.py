"""Held-out learner mistake: the position counter counts every token, as 1-D positions do."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    B, L = token_types.shape
    out = torch.zeros(3, B, L, dtype=torch.int64, device=token_types.device)
    images = [] if image_grid_thw is None else image_grid_thw.tolist()
    videos = [] if video_grid_thw is None else video_grid_thw.tolist()
    for b in range(B):
        real = [i for i in range(L) if attention_mask is None or attention_mask[b, i] == 1]
        kinds = [int(token_types[b, i]) for i in real]
        ids, pos, k = [], 0, 0
        while k < len(kinds):
            end = k
            while end < len(kinds) and kinds[end] == kinds[k]:
                end += 1
            if kinds[k] == 0:
                ids += [(pos + n,) * 3 for n in range(end - k)]
            else:
                t, h, w = (images if kinds[k] == 1 else videos).pop(0)
                h, w = h // spatial_merge_size, w // spatial_merge_size
                if t * h * w != end - k:
                    raise ValueError(f"grid_thw {(t, h, w)} does not match {end - k} tokens")
                ids += [(pos + a, pos + i, pos + j) for a in range(t) for i in range(h) for j in range(w)]
            pos += end - k
            k = end
        out[:, b, real] = torch.tensor(ids, dtype=torch.int64, device=token_types.device).T
    return out
