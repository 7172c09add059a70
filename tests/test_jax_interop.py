"""cule.jax: an env's outputs handed to JAX, and JAX's actions taken back, without a copy."""
import numpy as np
import pytest
import torch

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import cule  # noqa: E402
import cule.jax as cj  # noqa: E402


def shares(array, tensor: torch.Tensor) -> bool:
    return array.unsafe_buffer_pointer() == tensor.data_ptr()


@pytest.mark.parametrize("game,autoreset_mode", [("breakout", "NextStep"), ("breakout", "SameStep"),
                                                 (["pong", "breakout"], "SameStep")])
def test_outputs_reach_jax_without_a_copy(game, autoreset_mode):
    env = cule.AtariVectorEnv(game, 6 if isinstance(game, str) else 3, autoreset_mode=autoreset_mode)
    obs, info = env.reset(seed=1)
    arrays = cj.to_jax((obs, info))
    assert shares(arrays[0], obs) and all(shares(arrays[1][k], info[k]) for k in info)
    step = env.step(np.ones(6, dtype=np.int64))
    out = cj.to_jax(step)
    for a, t in zip(out[:4], step[:4]):
        assert shares(a, t) and a.dtype == np.dtype(str(t.dtype).removeprefix("torch."))
    assert all(shares(out[4][k], step[4][k]) for k in step[4])
    np.testing.assert_array_equal(np.asarray(out[0]), step[0].numpy())
    env.close()


def test_jax_actions_reach_the_env_without_a_copy_and_play_the_same():
    actions = jnp.array([0, 1, 2, 3], dtype=jnp.int32)
    tensor = cj.from_jax(actions)
    assert shares(actions, tensor) and tensor.dtype == torch.int32
    wrapped = cj.wrap(cule.AtariVectorEnv("pong", 4))
    plain = cule.AtariVectorEnv("pong", 4)
    a, b = wrapped.reset(seed=5), plain.reset(seed=5)
    assert isinstance(a[0], jax.Array)
    for t in range(50):
        acts = jnp.array(np.random.default_rng(t).integers(6, size=4), dtype=jnp.int32)
        a, b = wrapped.step(acts), plain.step(np.asarray(acts))
        for x, y in zip(a[:4], b[:4]):
            np.testing.assert_array_equal(np.asarray(x), y.numpy())
    assert wrapped.single_action_space.n == 6  # the rest is the wrapped env's
    with pytest.raises(ValueError, match="outside the action set"):
        wrapped.step(jnp.array([0, 1, 2, 9], dtype=jnp.int32))
    wrapped.close()
    plain.close()
