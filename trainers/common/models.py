"""Networks for Atari: the Nature DQN torso (Mnih et al. 2015) with policy and value heads."""
from __future__ import annotations

import torch
from torch import nn


def _init(layer: nn.Module, gain: float = 2 ** 0.5) -> nn.Module:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class _ActorCritic(nn.Module):
    """A torso (uint8 frames scaled to [0, 1] -> features) followed by a hidden layer and the two heads."""

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

    def forward(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.torso(frames.float() / 255.0)
        return self.policy(h), self.value(h).squeeze(-1)


class NatureCNN(_ActorCritic):
    """uint8 frames [B, C, 84, 84] -> (policy logits [B, A], value [B]).

    Three convolutions (32 8x8/4, 64 4x4/2, 64 3x3/1), a 512-unit layer, then
    linear policy and value heads; pixels are scaled to [0, 1] inside.
    """

    def __init__(self, in_channels: int, num_actions: int, height: int = 84, width: int = 84):
        torso = nn.Sequential(
            _init(nn.Conv2d(in_channels, 32, 8, stride=4)), nn.ReLU(),
            _init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
            _init(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(), nn.Flatten())
        super().__init__(torso, in_channels, num_actions, 512, height, width)


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
        layers, c = [], in_channels
        for out in (16, 32, 32):
            layers += [nn.Conv2d(c, out, 3, padding=1), nn.MaxPool2d(3, stride=2, padding=1),
                       _ResidualBlock(out), _ResidualBlock(out)]
            c = out
        super().__init__(nn.Sequential(*layers, nn.ReLU(), nn.Flatten()), in_channels, num_actions, 256, height,
                         width)


NETWORKS = {"nature": NatureCNN, "impala": ImpalaCNN}


def network(name: str) -> type[nn.Module]:
    """The network class for a trainer's --network."""
    if name not in NETWORKS:
        raise ValueError(f"--network must be one of {sorted(NETWORKS)}, got {name!r}")
    return NETWORKS[name]
