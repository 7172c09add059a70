"""One rank of tests/test_distributed.py, started by torchrun (or alone): runs a trainer, records what the test checks.

    python -m torch.distributed.run --standalone --nproc_per_node=2 tests/dist_child.py TRAINER RECORD_DIR -- ARGS...

Writes RECORD_DIR/rank{r}.pt: the initial and final weights, a digest of every observation this rank's envs produced,
the number of checkpoint writes this rank made, and the trainer's result figures.
"""
import importlib
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cule.trainers.common import checkpoint  # noqa: E402
from cule.trainers.common.args import parse  # noqa: E402


def main() -> None:
    trainer, record, argv = sys.argv[1], Path(sys.argv[2]), sys.argv[4:]
    module = importlib.import_module(f"cule.trainers.{trainer}")
    observed, writes = [], []
    make_env = module.make_env

    def recording_make_env(*args, **kwargs):
        env = make_env(*args, **kwargs)
        step = env.step

        def recorded_step(actions):
            out = step(actions)
            observed.append(float(out[0].double().sum()))
            return out
        env.step = recorded_step
        return env

    save = checkpoint.save

    def counted_save(*args, **kwargs):
        writes.append(1)
        return save(*args, **kwargs)

    initial = {}

    class RecordingRun(module.Run):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            initial.update({k: v.clone() for k, v in self.model.state_dict().items()})

    module.make_env = recording_make_env
    module.Run = RecordingRun
    checkpoint.save = counted_save
    torch.set_num_threads(1)
    result = module.train(parse(module.Args, argv))
    model = result.pop("model")
    record.mkdir(parents=True, exist_ok=True)
    torch.save(dict(weights=model.state_dict(), initial=initial, observed=observed, writes=len(writes),
                    result={k: v for k, v in result.items() if isinstance(v, (int, float))}),
               record / f"rank{os.environ.get('RANK', '0')}.pt")


if __name__ == "__main__":
    main()
