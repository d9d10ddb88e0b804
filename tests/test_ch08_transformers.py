"""Chapter 8 against transformers 5.23.0: ViTMAE's 2-D sinusoids, Qwen2-VL's vision rotary embedding,
apply_rotary_pos_emb_vision, get_rope_index and its multimodal rotary embedding, and the facts the chapter states
about Qwen2.5-VL and Qwen3-VL, on tiny configurations (no weights, no downloads)."""

import pytest
import torch

import posenc_ref as ref

F32 = {"rtol": 1.3e-6, "atol": 1e-5}


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


transformers = pytest.importorskip("transformers")  # its models: on first use (tests/lazy_import.py)
from tests.lazy_import import Lazy  # noqa: E402

Qwen2VLConfig = Lazy("transformers", "Qwen2VLConfig")
qwen2_vl = Lazy("transformers.models.qwen2_vl.modeling_qwen2_vl")
Qwen2VLVisionConfig = Lazy("transformers.models.qwen2_vl.configuration_qwen2_vl", "Qwen2VLVisionConfig")
build_2d_sinusoidal_position_embedding = Lazy("transformers.models.vit_mae.modeling_vit_mae",
                                              "build_2d_sinusoidal_position_embedding")
get_vision_position_ids = Lazy("transformers.vision_utils", "get_vision_position_ids")


@pytest.mark.parametrize("grid_h,grid_w,d,base", [(4, 6, 16, 10000.0), (14, 14, 64, 10000.0), (1, 7, 8, 10000.0),
                                                  (3, 5, 32, 100.0), (24, 16, 128, 10000.0)])
def test_sincos_2d_matches_transformers(grid_h, grid_w, d, base):
    theirs = build_2d_sinusoidal_position_embedding(grid_h, grid_w, d, temperature=base)
    torch.testing.assert_close(ref.sincos_2d_table(grid_h, grid_w, d, base), theirs, **F32)


def test_sincos_2d_dot_products_depend_on_the_displacement_only():
    side, d = 9, 64
    table = ref.sincos_2d_table(side, side, d).double()
    dots = (table @ table.T).reshape(side, side, side, side)  # (r, c, r', c')
    for dr, dc in ((0, 1), (1, 0), (2, -3), (-4, 4)):
        values = [dots[r, c, r + dr, c + dc] for r in range(side) for c in range(side)
                  if 0 <= r + dr < side and 0 <= c + dc < side]
        assert max(values) - min(values) < 2e-5  # float32 entries
    # a 1-D table of the flattened grid: one column right and one row down are 1 and 9 positions away
    pos = torch.arange(side * side, dtype=torch.float64)[:, None]
    omega = 1.0 / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    one_d = torch.cat([(pos * omega).sin(), (pos * omega).cos()], dim=-1)
    assert abs(one_d[0] @ one_d[1] - one_d[0] @ one_d[side]) > 1.0


def qwen_vision(head_dim, theta=10000.0):
    config = Qwen2VLVisionConfig(embed_dim=2 * head_dim, num_heads=2, depth=1)
    config.rope_parameters = {"rope_type": "axial", "rope_theta": theta}
    return qwen2_vl.Qwen2VLVisionRotaryEmbedding(config)


@pytest.mark.parametrize("head_dim,theta", [(16, 10000.0), (80, 10000.0), (32, 100.0)])
def test_axial_rope_matches_qwen2_vl_vision_and_its_rotation(head_dim, theta):
    ids = get_vision_position_ids(torch.tensor([[2, 4, 6], [1, 8, 8]]), 2)  # (N, 2), Qwen's block order
    cos, sin = qwen_vision(head_dim, theta)(torch.zeros(1), ids)
    ours = ref.axial_rope_cos_sin(ids, head_dim, base=theta)
    torch.testing.assert_close(ours[0], cos, **F32)
    torch.testing.assert_close(ours[1], sin, **F32)
    # rotated with chapter 4's apply_rope, as apply_rotary_pos_emb_vision rotates (tokens, heads, head_dim)
    q, k = randn(len(ids), 3, head_dim, seed=1), randn(len(ids), 3, head_dim, seed=2)
    q_rot, k_rot = qwen2_vl.apply_rotary_pos_emb_vision(q, k, cos, sin)
    torch.testing.assert_close(ref.apply_rope(q.transpose(0, 1)[None], *ours)[0].transpose(0, 1), q_rot, **F32)
    torch.testing.assert_close(ref.apply_rope(k.transpose(0, 1)[None], *ours)[0].transpose(0, 1), k_rot, **F32)


def test_qwen_vision_ids_come_block_by_block():
    """The chapter's example: for a 4x4 grid the rows go 0, 0, 1, 1, 0, 0, 1, 1, 2, 2, ..."""
    ids = get_vision_position_ids(torch.tensor([[1, 4, 4]]), 2)
    assert ids[:, 0].tolist() == [0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3]


def test_the_reference_property_test_accepts_transformers_vision_rope():
    def transformers_rope(x, ids):  # x (V, 1, N, d) -> (N, V, d) for apply_rotary_pos_emb_vision, and back
        cos, sin = qwen_vision(x.shape[-1])(torch.zeros(1), ids)
        tokens = x[:, 0].transpose(0, 1)
        rotated, _ = qwen2_vl.apply_rotary_pos_emb_vision(tokens, tokens, cos, sin)
        return rotated.transpose(0, 1)[:, None]

    assert ref.check_axial_property(transformers_rope, 64)


# ---- M-RoPE -----------------------------------------------------------------------------------------------
def qwen2_vl_model(section=(2, 3, 3), merge=2):
    config = Qwen2VLConfig(
        text_config={"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
                     "intermediate_size": 32, "vocab_size": 64, "bos_token_id": 0, "eos_token_id": 1,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                         "mrope_section": list(section)}},
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "spatial_merge_size": merge})
    return qwen2_vl.Qwen2VLModel(config).eval()


@pytest.fixture(scope="module")
def model():
    return qwen2_vl_model()


T, I, V = 0, 1, 2
PROMPTS = {  # name: (token kinds, image grids, video grids, attention mask, spatial_merge_size)
    "one image": ([[T, T, I, I, I, I, T, T, T]], [[1, 4, 4]], None, None),
    "several images and a long video": (
        [[T, T, T] + [I] * 8 + [T, T] + [V] * 8 + [T, T] + [I] + [T]], [[1, 4, 8], [1, 2, 2]], [[4, 2, 4]], None),
    "left padding": ([[T, T, I, I, I, I, I, I, T, T, T], [T, T, T, T, I, I, T, T, T, T, T]],
                     [[1, 4, 6], [1, 2, 4]], None, [[1] * 11, [0, 0, 0] + [1] * 8]),
    "video first, padded": ([[V] * 8 + [T, T], [T, T, T, T, T, I, I, I, I, T]], [[1, 4, 4]], [[2, 4, 4]],
                            [[1] * 10, [0, 0] + [1] * 8]),
    "text only": ([[T] * 7], None, None, None),
}


@pytest.mark.parametrize("name", PROMPTS)
def test_mrope_position_ids_match_get_rope_index(model, name):
    kinds, images, videos, mask = PROMPTS[name]
    kinds = torch.tensor(kinds)
    images = None if images is None else torch.tensor(images)
    videos = None if videos is None else torch.tensor(videos)
    mask = None if mask is None else torch.tensor(mask)
    theirs, _ = model.get_rope_index(kinds, kinds, image_grid_thw=images, video_grid_thw=videos, attention_mask=mask)
    ours = ref.mrope_position_ids(kinds, images, videos, mask)
    assert ours.dtype == torch.long
    assert torch.equal(ours, theirs)


def test_the_text_after_a_long_video_starts_below_its_largest_temporal_id(model):
    """The chapter's statement about transformers 5.23: after a video of T = 4 temporal patches on a 1 x 2 grid of
    merged tokens starting at s = 3, the text starts at s + 2 = 5, while the temporal ids reached 6; after an image
    it starts one past the largest id."""
    kinds = torch.tensor([[T, T, T] + [V] * 8 + [T] + [I] * 4 + [T]])
    ids, _ = model.get_rope_index(kinds, kinds, image_grid_thw=torch.tensor([[1, 4, 4]]),
                                  video_grid_thw=torch.tensor([[4, 2, 4]]))
    assert ids[0, 0, 3:11].max() == 6 and ids[:, 0, 11].tolist() == [5, 5, 5]
    assert ids[:, 0, 12:16].max() == 7 and ids[:, 0, 16].tolist() == [8, 8, 8]
    assert torch.equal(ref.mrope_position_ids(kinds, torch.tensor([[1, 4, 4]]), torch.tensor([[4, 2, 4]])), ids)


@pytest.mark.parametrize("section,head_dim", [((2, 3, 3), 16), ((16, 24, 24), 128), ((8, 12, 12), 64)])
def test_mrope_cos_sin_matches_qwen2_vl_rotary_embedding(section, head_dim):
    config = qwen2_vl_model(section).config.text_config
    config.head_dim = head_dim
    rotary = qwen2_vl.Qwen2VLRotaryEmbedding(config)
    ids = torch.randint(0, 300, (3, 2, 9), generator=torch.Generator().manual_seed(head_dim))
    cos, sin = rotary(torch.zeros(1), ids)
    ours = ref.mrope_cos_sin(ids, head_dim, list(section))
    torch.testing.assert_close(ours[0], cos, **F32)
    torch.testing.assert_close(ours[1], sin, **F32)


def test_text_ids_make_mrope_chapter_4s_rope():
    ids = torch.arange(40).expand(3, 2, 40)
    ours = ref.mrope_cos_sin(ids, 32, [4, 6, 6])
    plain = ref.rope_cos_sin(torch.arange(40).expand(2, 40), 32)
    torch.testing.assert_close(ours[0], plain[0], **F32)
    torch.testing.assert_close(ours[1], plain[1], **F32)


def test_what_the_chapter_says_later_models_change():
    """Qwen2.5-VL scales a video's temporal ids by time_interval; Qwen3-VL interleaves the frequencies (i mod 3),
    defaults to mrope_section [24, 20, 20], splits videos into frames of T = 1, and its vision tower has a learned
    position table; all as transformers 5.23 implements them."""
    import inspect

    from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as qwen2_5_vl
    from transformers.models.qwen3_vl import modeling_qwen3_vl as qwen3_vl

    ids = qwen2_5_vl.Qwen2_5_VLModel.get_vision_position_ids(None, 3, torch.tensor([3, 2, 2]), 1, 1, time_interval=25)
    assert ids[0].unique().tolist() == [3, 28, 53]  # 3 + 25 t

    class Config:
        rope_parameters = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}
        head_dim, hidden_size, num_attention_heads, max_position_embeddings = 8, 16, 2, 64

    rotary = qwen3_vl.Qwen3VLTextRotaryEmbedding(Config())
    freqs = torch.stack([torch.full((1, 1, 4), float(axis + 1)) for axis in range(3)])  # id k gives the value k + 1
    layout = rotary.recomposition_frequencies(freqs.clone())[0, 0, :4].tolist()
    assert layout == [1.0, 2.0, 3.0, 1.0]  # frequency i: t, h, w, t (interleaved), not [t, t, h, w]
    assert "[24, 20, 20]" in inspect.getsource(qwen3_vl.Qwen3VLTextRotaryEmbedding.__init__)
    assert "video_grid_thw[:, 0] = 1" in inspect.getsource(qwen3_vl.Qwen3VLModel.get_rope_index)
    assert "self.pos_embed = nn.Embedding" in inspect.getsource(qwen3_vl.Qwen3VLVisionModel.__init__)




def test_qwen2_5_vl_and_qwen3_vl_vision_towers_use_the_same_axial_rope():
    """The comparison table's 'used by': the vision rotary embeddings of Qwen2.5-VL and Qwen3-VL build the same
    tables as Qwen2-VL's (and the reference's)."""
    from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as qwen2_5_vl
    from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLVisionConfig
    from transformers.models.qwen3_vl import modeling_qwen3_vl as qwen3_vl
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLVisionConfig

    ids = get_vision_position_ids(torch.tensor([[1, 6, 4]]), 2)
    want = ref.axial_rope_cos_sin(ids, 16)
    for config_cls, module in ((Qwen2_5_VLVisionConfig, qwen2_5_vl.Qwen2_5_VLVisionRotaryEmbedding),
                               (Qwen3VLVisionConfig, qwen3_vl.Qwen3VLVisionRotaryEmbedding)):
        config = config_cls(hidden_size=32, num_heads=2, depth=1)
        config.rope_parameters = {"rope_type": "axial", "rope_theta": 10000.0}
        cos, sin = module(config)(torch.zeros(1), ids)
        torch.testing.assert_close(cos, want[0], **F32)
        torch.testing.assert_close(sin, want[1], **F32)


def test_mae_checkpoints_put_the_column_blocks_first():
    """The chapter's claim: ViTMAE initialises its (frozen) table with the halves swapped, [column | row], the
    layout of MAE's original code that the pretrained weights use; the class token's row is zero."""
    from transformers import ViTMAEConfig
    from transformers.models.vit_mae.modeling_vit_mae import ViTMAEEmbeddings

    config = ViTMAEConfig(image_size=8, patch_size=2, hidden_size=16, num_attention_heads=2)
    embeddings = ViTMAEEmbeddings(config)
    embeddings.initialize_weights()
    table = embeddings.position_embeddings[0].detach()  # (1 + 16, 16)
    rows_first = ref.sincos_2d_table(4, 4, 16)
    torch.testing.assert_close(table[0], torch.zeros(16))
    torch.testing.assert_close(table[1:], torch.cat([rows_first[:, 8:], rows_first[:, :8]], dim=-1), **F32)


def test_qwen3_vl_interpolates_its_learned_vision_table_bilinearly_with_align_corners():
    import inspect

    from transformers.models.qwen3_vl import modeling_qwen3_vl as qwen3_vl

    source = inspect.getsource(qwen3_vl.Qwen3VLVisionModel.__init__)
    assert 'self.interpolation_mode = "bilinear"' in source and "self.interpolation_align_corners = True" in source
