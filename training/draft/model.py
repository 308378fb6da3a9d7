"""The EAGLE-3 / EAGLE-3.1 draft head as a bare `nn.Module`: fc fusion, one decoder layer, final norm, lm_head.

Mirrors vLLM's `model_executor/models/llama_eagle3.py` operation for operation, so a head trained here drafts the
same tokens when vLLM runs it:

    fused   = fc(cat(fc_norm_i(aux_i)))                       # aux_i: target residual stream after layer i
    x       = cat(input_layernorm(embed(token)), hidden_norm(hidden))   # 2H attention input
    r       = hidden + attn(x)                                 # residual is the *pre-norm* hidden state
    r       = r + mlp(post_attention_layernorm(r))
    out     = norm(r)                                          # -> lm_head -> draft logits
    next    = out if norm_output else r                        # state fed to the next draft step

EAGLE 3.1 adds the two switches: `fc_norm` (one RMSNorm per captured target state, so the layer-27 state with its
large norm cannot drown layers 2 and 15) and `norm_output` (feed the post-norm state forward, so the state's norm
stays bounded across draft steps instead of growing with every residual add).

Drafting, verification and training live elsewhere; this module only computes.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field, model_validator
from torch import nn


class DraftConfig(BaseModel):
    """Shape of a draft head and of the target it serves. Defaults are SmolLM2-135M-Instruct's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hidden_size: int = Field(576, ge=1)
    intermediate_size: int = Field(1536, ge=1)
    num_attention_heads: int = Field(9, ge=1)
    num_key_value_heads: int = Field(3, ge=1)
    rms_norm_eps: float = Field(1e-5, gt=0)
    rope_theta: float = Field(100000.0, gt=0)
    max_position_embeddings: int = Field(8192, ge=1)
    # Target vocabulary (embeddings, token ids) and the draft's own, smaller output vocabulary.
    vocab_size: int = Field(49152, ge=1)
    draft_vocab_size: int = Field(8192, ge=1)
    target_hidden_size: int = Field(576, ge=1)
    target_num_layers: int = Field(30, ge=4)
    # vLLM's default for a Llama target: (2, N // 2, N - 3), "residual stream after that many layers".
    aux_layer_ids: tuple[int, ...] = (2, 15, 27)
    fc_norm: bool = True
    norm_output: bool = True

    @model_validator(mode="after")
    def _check(self) -> DraftConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size {self.hidden_size} not divisible by heads {self.num_attention_heads}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"heads {self.num_attention_heads} not divisible by kv heads {self.num_key_value_heads}")
        if self.draft_vocab_size > self.vocab_size:
            raise ValueError(f"draft_vocab_size {self.draft_vocab_size} exceeds vocab_size {self.vocab_size}")
        if any(not 0 < i <= self.target_num_layers for i in self.aux_layer_ids):
            raise ValueError(f"aux_layer_ids {self.aux_layer_ids} outside 1..{self.target_num_layers}")
        return self

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def for_target(cls, target_config: object, **overrides: object) -> DraftConfig:
        """Copy shapes from a transformers `LlamaConfig` of the target; aux layers follow vLLM's default rule."""
        # `object`, not LlamaConfig: this module does not import transformers; the attr-defined ignores say so.
        n = int(target_config.num_hidden_layers)  # type: ignore[attr-defined]
        rope = getattr(target_config, "rope_parameters", None) or {}
        theta = rope.get("rope_theta") if isinstance(rope, dict) else None
        values: dict[str, object] = {
            "hidden_size": target_config.hidden_size,  # type: ignore[attr-defined]
            "intermediate_size": target_config.intermediate_size,  # type: ignore[attr-defined]
            "num_attention_heads": target_config.num_attention_heads,  # type: ignore[attr-defined]
            "num_key_value_heads": target_config.num_key_value_heads,  # type: ignore[attr-defined]
            "rms_norm_eps": target_config.rms_norm_eps,  # type: ignore[attr-defined]
            "rope_theta": theta or getattr(target_config, "rope_theta", 10000.0),
            "max_position_embeddings": target_config.max_position_embeddings,  # type: ignore[attr-defined]
            "vocab_size": target_config.vocab_size,  # type: ignore[attr-defined]
            "target_hidden_size": target_config.hidden_size,  # type: ignore[attr-defined]
            "target_num_layers": n,
            "aux_layer_ids": (2, n // 2, n - 3),
        }
        values.update(overrides)
        return cls(**values)


class RMSNorm(nn.Module):
    """Llama RMSNorm, computed in float32 like vLLM's and transformers'."""

    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(dtype)


def rope_cos_sin(
    positions: torch.Tensor, head_dim: int, theta: float, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """Llama "default" rotary tables for `positions` [batch, seq] → cos, sin [batch, 1, seq, head_dim]."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=positions.device).float() / head_dim))
    freqs = positions.float()[..., None] * inv_freq  # [batch, seq, head_dim/2]
    emb = torch.cat([freqs, freqs], dim=-1)  # [batch, seq, head_dim]
    return emb.cos()[:, None].to(dtype), emb.sin()[:, None].to(dtype)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class DraftAttention(nn.Module):
    """Grouped-query attention whose q/k/v read the 2H input (input embedding ‖ hidden state)."""

    def __init__(self, config: DraftConfig) -> None:
        super().__init__()
        h, d = config.hidden_size, config.head_dim
        self.n_heads, self.n_kv, self.head_dim, self.theta = (
            config.num_attention_heads,
            config.num_key_value_heads,
            d,
            config.rope_theta,
        )
        self.q_proj = nn.Linear(2 * h, self.n_heads * d, bias=False)
        self.k_proj = nn.Linear(2 * h, self.n_kv * d, bias=False)
        self.v_proj = nn.Linear(2 * h, self.n_kv * d, bias=False)
        self.o_proj = nn.Linear(self.n_heads * d, h, bias=False)

    def forward(
        self,
        x: torch.Tensor,  # [batch, seq, 2*hidden]
        positions: torch.Tensor,  # [batch, seq]
        past: list[tuple[torch.Tensor, torch.Tensor]],  # keys/values of earlier draft steps, each [b, kv, seq, d]
        mask: torch.Tensor | None,  # [seq, (len(past)+1)*seq] bool, True = may attend; None = plain causal
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)  # [b, heads, seq, d]
        k = self.k_proj(x).view(b, s, self.n_kv, self.head_dim).transpose(1, 2)  # [b, kv, seq, d]
        v = self.v_proj(x).view(b, s, self.n_kv, self.head_dim).transpose(1, 2)
        cos, sin = rope_cos_sin(positions, self.head_dim, self.theta, q.dtype)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        keys = torch.cat([pk for pk, _ in past] + [k], dim=2)  # [b, kv, (steps)*seq, d]
        values = torch.cat([pv for _, pv in past] + [v], dim=2)
        groups = self.n_heads // self.n_kv
        keys = keys.repeat_interleave(groups, dim=1)  # [b, heads, steps*seq, d]
        values = values.repeat_interleave(groups, dim=1)
        if mask is None:
            out = F.scaled_dot_product_attention(q, keys, values, is_causal=True)
        else:
            out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        out = out.transpose(1, 2).reshape(b, s, self.n_heads * self.head_dim)  # [b, seq, hidden]
        return self.o_proj(out), (k, v)


class DraftMLP(nn.Module):
    def __init__(self, config: DraftConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DraftLayer(nn.Module):
    """The single decoder layer; parameter names match vLLM's `midlayer.*` checkpoint names."""

    def __init__(self, config: DraftConfig) -> None:
        super().__init__()
        eps = config.rms_norm_eps
        self.input_layernorm = RMSNorm(config.hidden_size, eps)  # on the token embedding
        self.hidden_norm = RMSNorm(config.hidden_size, eps)  # on the incoming hidden state
        self.self_attn = DraftAttention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, eps)
        self.mlp = DraftMLP(config)


class Eagle3Draft(nn.Module):
    """EAGLE-3 draft head; `config.fc_norm` / `config.norm_output` select the EAGLE-3.1 variants."""

    def __init__(self, config: DraftConfig) -> None:
        super().__init__()
        self.config = config
        h, ht, n_aux = config.hidden_size, config.target_hidden_size, len(config.aux_layer_ids)
        # Frozen copy of the target's input embeddings; not exported (vLLM shares the target's).
        self.embed_tokens = nn.Embedding(config.vocab_size, h)
        self.embed_tokens.weight.requires_grad_(False)
        self.fc_norm = (
            nn.ModuleList([RMSNorm(ht, config.rms_norm_eps) for _ in range(n_aux)]) if config.fc_norm else None
        )
        self.fc = nn.Linear(n_aux * ht, h, bias=False)
        self.midlayer = DraftLayer(config)
        self.norm = RMSNorm(h, config.rms_norm_eps)
        self.lm_head = nn.Linear(h, config.draft_vocab_size, bias=False)
        # d2t[i] = target_id(i) - i (vLLM adds it to arange); t2d[t] = token t is in the draft vocabulary.
        self.d2t: torch.Tensor
        self.t2d: torch.Tensor
        self.register_buffer("d2t", torch.zeros(config.draft_vocab_size, dtype=torch.long))
        self.register_buffer("t2d", torch.zeros(config.vocab_size, dtype=torch.bool))

    def set_vocab(self, draft_to_target: torch.Tensor) -> None:
        """Install the draft vocabulary: `draft_to_target` [draft_vocab] holds ascending, distinct target ids."""
        ids = draft_to_target.to(torch.long)
        if ids.shape != (self.config.draft_vocab_size,):
            raise ValueError(f"draft vocabulary has shape {tuple(ids.shape)}, want ({self.config.draft_vocab_size},)")
        if ids.numel() > 1 and not bool((ids[1:] > ids[:-1]).all()):
            raise ValueError("draft vocabulary ids must be strictly ascending")
        if int(ids[0]) < 0 or int(ids[-1]) >= self.config.vocab_size:
            raise ValueError(f"draft vocabulary ids span {int(ids[0])}..{int(ids[-1])}, outside the target vocab")
        self.d2t.copy_(ids - torch.arange(ids.numel()))
        self.t2d.zero_()
        self.t2d[ids] = True

    @property
    def draft_ids(self) -> torch.Tensor:
        """Target token id of each draft id: [draft_vocab]."""
        return torch.arange(self.config.draft_vocab_size, device=self.d2t.device) + self.d2t

    def combine(self, aux: torch.Tensor) -> torch.Tensor:
        """Fuse the captured target states: [batch, seq, n_aux*target_hidden] → [batch, seq, hidden]."""
        if self.fc_norm is not None:
            chunks = aux.chunk(len(self.fc_norm), dim=-1)
            aux = torch.cat([norm(c) for norm, c in zip(self.fc_norm, chunks, strict=True)], dim=-1)
        return self.fc(aux)

    def step(
        self,
        input_ids: torch.Tensor,  # [batch, seq] target token ids
        hidden: torch.Tensor,  # [batch, seq, hidden]: fused target state (step 0) or the previous step's output
        positions: torch.Tensor,  # [batch, seq]
        past: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """One draft step. Returns (post-norm state for lm_head, state for the next step, this step's k/v)."""
        layer = self.midlayer
        embeds = layer.input_layernorm(self.embed_tokens(input_ids))  # [b, seq, hidden]
        residual = hidden  # vLLM's default (norm_before_residual=False): the residual is the pre-norm state
        x = torch.cat([embeds, layer.hidden_norm(hidden)], dim=-1)  # [b, seq, 2*hidden]
        attn, kv = layer.self_attn(x, positions, past or [], mask)
        residual = residual + attn
        residual = residual + layer.mlp(layer.post_attention_layernorm(residual))
        out = self.norm(residual)
        return out, (out if self.config.norm_output else residual), kv

    def logits(self, out: torch.Tensor) -> torch.Tensor:
        """Draft-vocabulary logits: [..., hidden] → [..., draft_vocab]."""
        return self.lm_head(out)

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]
