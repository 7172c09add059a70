"""Networks for Atari: convolutional torsos (Nature DQN, IMPALA) with actor-critic heads (PPO, A2C) or
Q-value heads (Rainbow: dueling, distributional, noisy)."""
from __future__ import annotations

import math

import torch
from torch import nn


def _init(layer: nn.Module, gain: float = 2 ** 0.5) -> nn.Module:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def nature_torso(in_channels: int) -> nn.Sequential:
    """Nature DQN's convolutions (32 8x8/4, 64 4x4/2, 64 3x3/1, ReLU), flattened: [B, C, 84, 84] -> [B, 3136]."""
    return nn.Sequential(
        _init(nn.Conv2d(in_channels, 32, 8, stride=4)), nn.ReLU(),
        _init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
        _init(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(), nn.Flatten())


def data_efficient_torso(in_channels: int) -> nn.Sequential:
    """Data-efficient Rainbow's two convolutions (32 5x5/5, 64 5x5/5, ReLU; van Hasselt et al. 2019, appendix),
    flattened: [B, C, 84, 84] -> [B, 576]. About a fifth of the Nature torso's learner time on a CPU."""
    return nn.Sequential(
        _init(nn.Conv2d(in_channels, 32, 5, stride=5)), nn.ReLU(),
        _init(nn.Conv2d(32, 64, 5, stride=5)), nn.ReLU(), nn.Flatten())


def impala_torso(in_channels: int) -> nn.Sequential:
    """IMPALA's three stages of conv 3x3 + max-pool 3x3/2 + two residual blocks (16, 32, 32 channels), flattened."""
    layers, c = [], in_channels
    for out in (16, 32, 32):
        layers += [nn.Conv2d(c, out, 3, padding=1), nn.MaxPool2d(3, stride=2, padding=1),
                   _ResidualBlock(out), _ResidualBlock(out)]
        c = out
    return nn.Sequential(*layers, nn.ReLU(), nn.Flatten())


class ObsNorm(nn.Module):
    """Per-pixel running mean and variance of the frames the policy acted on, pooled over the batch and the
    stack ([H, W] each; Chan et al.'s parallel update): frames are centred and scaled by them instead of
    divided by 255, so the screen's still background reads as zero and only what moves (in Pong the ball
    and the paddles) reaches the first convolution. CuLE's A2C+V-trace runs (its ``--normalize``) train
    this way. The statistics are buffers: checkpoints keep them, and they change only through update()."""

    def __init__(self, height: int, width: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(height, width))
        self.register_buffer("var", torch.ones(height, width))
        self.register_buffer("count", torch.tensor(1e-4, dtype=torch.float64))

    @torch.no_grad()
    def update(self, frames: torch.Tensor) -> None:
        """frames [B, C, H, W] (uint8): folds their per-pixel mean and variance into the running ones."""
        x = frames.float()
        n = x.shape[0] * x.shape[1]
        mean, var = x.mean(dim=(0, 1)), x.var(dim=(0, 1), unbiased=False)
        total = self.count + n
        delta = mean - self.mean
        self.var.copy_((self.var * self.count + var * n + delta.pow(2) * (self.count * n / total)) / total)
        self.mean.add_(delta * (n / total))
        self.count.copy_(total)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return (frames.float() - self.mean) / torch.sqrt(self.var + 1e-8)


def observe(model: nn.Module, frames: torch.Tensor) -> None:
    """Frames the policy is about to act on: the model's ObsNorm (if it has one) folds them in."""
    norm = getattr(model, "obs_norm", None)
    if norm is not None:
        norm.update(frames)


class _ActorCritic(nn.Module):
    """A torso (uint8 frames scaled to [0, 1], or centred by an ObsNorm -> features) followed by a hidden
    layer and the two heads."""

    def __init__(self, torso: nn.Sequential, in_channels: int, num_actions: int, hidden: int, height: int,
                 width: int):
        super().__init__()
        with torch.no_grad():
            flat = torso(torch.zeros(1, in_channels, height, width)).shape[1]
        torso.append(_init(nn.Linear(flat, hidden)))
        torso.append(nn.ReLU())
        self.torso = torso
        self.policy = _init(nn.Linear(hidden, num_actions), 0.01)
        self.value = _init(nn.Linear(hidden, 1), 1.0)
        self.obs_norm: ObsNorm | None = None  # set by the trainer (normalize_obs)

    def forward(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = frames.float() / 255.0 if self.obs_norm is None else self.obs_norm(frames)
        h = self.torso(x)
        return self.policy(h), self.value(h).squeeze(-1)


class NatureCNN(_ActorCritic):
    """uint8 frames [B, C, 84, 84] -> (policy logits [B, A], value [B]).

    Three convolutions (32 8x8/4, 64 4x4/2, 64 3x3/1), a 512-unit layer, then
    linear policy and value heads; pixels are scaled to [0, 1] inside.
    """

    def __init__(self, in_channels: int, num_actions: int, height: int = 84, width: int = 84):
        super().__init__(nature_torso(in_channels), in_channels, num_actions, 512, height, width)


class _ResidualBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv1(torch.relu(self.conv0(torch.relu(x))))


class ImpalaCNN(_ActorCritic):
    """IMPALA's deep network (Espeholt et al. 2018, fig. 3): three stages of conv 3x3 + max-pool 3x3/2 + two
    residual blocks (16, 32, 32 channels), a 256-unit layer, policy and value heads.
    uint8 frames [B, C, H, W] -> (logits [B, A], value [B])."""

    def __init__(self, in_channels: int, num_actions: int, height: int = 84, width: int = 84):
        super().__init__(impala_torso(in_channels), in_channels, num_actions, 256, height, width)


class DataEfficientCNN(_ActorCritic):
    """Data-efficient Rainbow's small torso (two 5x5/5 convolutions), a 256-unit layer, policy and value heads."""

    def __init__(self, in_channels: int, num_actions: int, height: int = 84, width: int = 84):
        super().__init__(data_efficient_torso(in_channels), in_channels, num_actions, 256, height, width)


NETWORKS = {"nature": NatureCNN, "impala": ImpalaCNN, "data-efficient": DataEfficientCNN}
TORSOS = {"nature": (nature_torso, 512), "impala": (impala_torso, 256), "data-efficient": (data_efficient_torso, 256)}


class NoisyLinear(nn.Module):
    """A linear layer with factorised Gaussian noise on its weights (Fortunato et al. 2018, section 3.2).

    y = (mu_w + sigma_w * (f(e_out) f(e_in)^T)) x + mu_b + sigma_b * f(e_out), f(x) = sgn(x) sqrt(|x|);
    mu ~ U[-1/sqrt(p), 1/sqrt(p)], sigma = sigma0 / sqrt(p) at initialisation, p = in_features.
    The noise stays fixed until reset_noise(); in eval() mode the layer uses the means only.
    """

    def __init__(self, in_features: int, out_features: int, sigma0: float = 0.5):
        super().__init__()
        bound = 1 / math.sqrt(in_features)
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        self.weight_sigma = nn.Parameter(torch.full((out_features, in_features), sigma0 * bound))
        self.bias_mu = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        self.bias_sigma = nn.Parameter(torch.full((out_features,), sigma0 * bound))
        self.register_buffer("eps_in", torch.zeros(in_features))
        self.register_buffer("eps_out", torch.zeros(out_features))
        self.reset_noise()

    @staticmethod
    def _f(x: torch.Tensor) -> torch.Tensor:
        return x.sign() * x.abs().sqrt()

    @torch.no_grad()
    def reset_noise(self) -> None:
        self.eps_in.copy_(self._f(torch.randn_like(self.eps_in)))
        self.eps_out.copy_(self._f(torch.randn_like(self.eps_out)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return nn.functional.linear(x, self.weight_mu, self.bias_mu)
        weight = self.weight_mu + self.weight_sigma * torch.outer(self.eps_out, self.eps_in)
        return nn.functional.linear(x, weight, self.bias_mu + self.bias_sigma * self.eps_out)


class QNetwork(nn.Module):
    """uint8 frames [B, C, 84, 84] -> (Q-values [B, A], log-probabilities [B, A, N] or None).

    A torso ('nature', 'impala' or 'data-efficient') then, per switch:
    - dueling (Wang et al. 2016, eq. 9): a value stream and an advantage stream,
      Q = V + A - mean_a A (per atom when distributional);
    - distributional, atoms N > 1 (Bellemare et al. 2017): each action's output is a
      softmax over the support v_min .. v_max, Q = sum_i z_i p_i;
    - noisy (Fortunato et al. 2018): NoisyLinear in the heads instead of nn.Linear.
    Every head has one hidden layer (512 units for the Nature torso, 256 for the others).
    """

    def __init__(self, in_channels: int, num_actions: int, torso: str = "nature", dueling: bool = True,
                 atoms: int = 51, v_min: float = -10.0, v_max: float = 10.0, noisy: bool = True,
                 sigma0: float = 0.5, height: int = 84, width: int = 84):
        super().__init__()
        if torso not in TORSOS:
            raise ValueError(f"--network must be one of {sorted(TORSOS)}, got {torso!r}")
        if atoms < 1:
            raise ValueError(f"atoms must be >= 1 (1: expected values, no distribution), got {atoms}")
        build, hidden = TORSOS[torso]
        self.torso = build(in_channels)
        with torch.no_grad():
            flat = self.torso(torch.zeros(1, in_channels, height, width)).shape[1]
        self.num_actions, self.atoms, self.dueling = num_actions, atoms, dueling

        def linear(i: int, o: int) -> nn.Module:
            return NoisyLinear(i, o, sigma0) if noisy else nn.Linear(i, o)

        self.advantage = nn.Sequential(linear(flat, hidden), nn.ReLU(), linear(hidden, num_actions * atoms))
        self.value = nn.Sequential(linear(flat, hidden), nn.ReLU(), linear(hidden, atoms)) if dueling else None
        self.register_buffer("support", torch.linspace(v_min, v_max, atoms) if atoms > 1 else torch.zeros(1))

    def reset_noise(self) -> None:
        """New noise in every NoisyLinear (no-op without noisy layers)."""
        for m in self.modules():
            if isinstance(m, NoisyLinear):
                m.reset_noise()

    def forward(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        h = self.torso(frames.float() / 255.0)
        out = self.advantage(h).view(-1, self.num_actions, self.atoms)
        if self.dueling:
            out = self.value(h).view(-1, 1, self.atoms) + out - out.mean(1, keepdim=True)
        if self.atoms == 1:
            return out.squeeze(-1), None
        log_probs = out.log_softmax(-1)
        return (log_probs.exp() * self.support).sum(-1), log_probs


def network(name: str) -> type[nn.Module]:
    """The network class for a trainer's --network."""
    if name not in NETWORKS:
        raise ValueError(f"--network must be one of {sorted(NETWORKS)}, got {name!r}")
    return NETWORKS[name]
