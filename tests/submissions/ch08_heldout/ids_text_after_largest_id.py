"""Held-out learner mistake: the text after a vision group starts one past the largest id used (transformers 4.x)."""
import torch


def mrope_position_ids(token_types, image_grid_thw=None, video_grid_thw=None, attention_mask=None,
                       spatial_merge_size=2):
    batch, seq = token_types.shape
    dev = token_types.device
    result = torch.zeros(3, batch, seq, dtype=torch.long, device=dev)
    queues = {1: list(image_grid_thw.tolist()) if image_grid_thw is not None else [],
              2: list(video_grid_thw.tolist()) if video_grid_thw is not None else []}
    for b in range(batch):
        mask = torch.ones(seq, dtype=torch.bool, device=dev) if attention_mask is None else attention_mask[b] == 1
        kinds = token_types[b][mask].tolist()
        chunks, nxt, i = [], 0, 0
        while i < len(kinds):
            j = i
            while j < len(kinds) and kinds[j] == kinds[i]:
                j += 1
            if kinds[i] == 0:
                chunks.append(torch.arange(nxt, nxt + j - i).repeat(3, 1))
            else:
                t, h, w = queues[kinds[i]].pop(0)
                h, w = h // spatial_merge_size, w // spatial_merge_size
                if t * h * w != j - i:
                    raise ValueError(f"grid_thw ({t}, {h}, {w}) does not fit {j - i} tokens")
                t_idx = torch.arange(t).view(-1, 1).expand(-1, h * w).flatten()
                h_idx = torch.arange(h).view(1, -1, 1).expand(t, -1, w).flatten()
                w_idx = torch.arange(w).view(1, 1, -1).expand(t, h, -1).flatten()
                chunks.append(torch.stack([t_idx, h_idx, w_idx]) + nxt)
            nxt = int(chunks[-1].max()) + 1
            i = j
        if chunks:
            result[:, b, mask] = torch.cat(chunks, dim=1).to(dev)
    return result
