"""Several processes, one per GPU (or CPU slice), under torchrun: torch.distributed, nothing home-made.

    torchrun --nproc_per_node=K -m cule.trainers.ppo --device cuda --num-envs 4096 ...
    torchrun --nnodes=M --node_rank=R --master_addr=HOST --master_port=29500 --nproc_per_node=K -m cule.trainers.ppo ...

`--num-envs` is the total over all processes: rank r steps envs
[r * n/K, (r+1) * n/K), seeded as those envs of a single process with n envs
would be, so K processes with n/K envs each see what one process with n sees.
Gradients are averaged with one all-reduce of a flat buffer before clipping
(each rank's loss is a mean over its equal share of the batch, so the average
is the gradient of the whole batch's mean); rank 0's initial weights are
broadcast; only rank 0 logs, checkpoints and evaluates; the counters (frames,
FPS) count all ranks' frames. NCCL on GPUs, gloo on CPUs.
"""
from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist


class Dist:
    """This process's place among torchrun's (a single process when WORLD_SIZE is unset or 1)."""

    def __init__(self, args=None):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self._owns_group = False
        if self.world == 1:
            return
        if args is not None:
            if args.num_envs % self.world:
                raise ValueError(f"--num-envs {args.num_envs} must split evenly over {self.world} processes")
            if str(args.device).startswith("cuda"):
                args.device = f"cuda:{self.local_rank}"  # one GPU per process
                torch.cuda.set_device(self.local_rank)
        if not dist.is_initialized():
            cuda = args is not None and str(args.device).startswith("cuda")
            dist.init_process_group("nccl" if cuda else "gloo")
            self._owns_group = True

    @property
    def main(self) -> bool:
        """Rank 0: the one process that logs, checkpoints and evaluates."""
        return self.rank == 0

    def local_envs(self, num_envs: int) -> int:
        return num_envs // self.world

    def first_env(self, num_envs: int) -> int:
        """Global index of this rank's first env (its envs' seeds start there)."""
        return self.rank * (num_envs // self.world)

    def broadcast_(self, module: torch.nn.Module) -> None:
        """Rank 0's parameters and buffers, in place, on every rank."""
        if self.world > 1:
            for tensor in module.state_dict().values():
                dist.broadcast(tensor, 0)

    def average_grads_(self, parameters) -> None:
        """Every gradient replaced by its mean over ranks, in one all-reduce of a flat buffer."""
        if self.world == 1:
            return
        grads = [p.grad for p in parameters if p.grad is not None]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= self.world
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()

    def sum_(self, *tensors: torch.Tensor) -> None:
        """In place: each tensor summed over ranks (episode statistics for the log)."""
        if self.world > 1:
            for t in tensors:
                dist.all_reduce(t)

    def agree(self, flag: bool, device: torch.device) -> bool:
        """Rank 0's decision on every rank (e.g. the wall-clock budget), so no rank waits for another forever."""
        if self.world == 1:
            return flag
        t = torch.tensor([int(flag)], device=device)
        dist.broadcast(t, 0)
        return bool(t.item())

    def close(self, timeout_s: float = 600.0) -> None:
        """Leaves the group once every rank has reached here. The count is kept in torchrun's store, not taken
        by a gloo barrier: a rank that tears down its gloo connections while a peer is still finishing the
        barrier's last exchange can abort that peer."""
        if not self._owns_group:
            return
        store = dist.distributed_c10d._get_default_store()
        # the count's next multiple of world: a group closed before in this store has left its count there
        everyone = -(-store.add("cule/closing", 1) // self.world) * self.world
        deadline = time.monotonic() + timeout_s
        while store.add("cule/closing", 0) < everyone:
            if time.monotonic() > deadline:
                raise RuntimeError(f"rank {self.rank}: the other ranks did not finish within {timeout_s:.0f} s")
            time.sleep(0.01)
        dist.destroy_process_group()
        self._owns_group = False
