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


def test_a_jitted_scan_of_300_steps_equals_the_torch_interface():
    steps, n = 300, 4
    env = cj.make("breakout", n)
    ref = cule.AtariVectorEnv("breakout", n)
    actions = np.random.default_rng(3).integers(0, env.env.single_action_space.n, size=(steps, n)).astype(np.int32)

    @jax.jit
    def rollout(state, actions):
        def body(state, a):
            state, obs, rewards, terminated, truncated, info = env.step(state, a)
            return state, (obs, rewards, terminated, truncated, info["lives"], info["episode_frame_number"])
        return jax.lax.scan(body, state, actions)

    state, obs0, info0 = env.reset(11)
    obs, info = ref.reset(seed=11)
    np.testing.assert_array_equal(np.asarray(obs0), obs.numpy())
    np.testing.assert_array_equal(np.asarray(info0["lives"]), info["lives"].numpy())
    state, outs = rollout(state, jnp.asarray(actions))
    assert state.tolist() == [env.handle, steps + 1]
    outs = [np.asarray(o) for o in outs]
    ended = 0
    for t in range(steps):
        obs, rewards, terminated, truncated, info = ref.step(actions[t])
        ended += int(terminated.sum())
        for mine, theirs in zip(outs, (obs, rewards, terminated, truncated, info["lives"],
                                       info["episode_frame_number"])):
            np.testing.assert_array_equal(mine[t], theirs.numpy(), err_msg=f"step {t}")
    assert outs[1].sum() > 0  # the rollout scored, so the comparison saw the game move
    env.close()
    ref.close()


def test_a_key_draws_one_seed_per_environment_and_a_closed_env_refuses_calls():
    env = cj.make("pong", 3, img_height=42, img_width=42)
    key = jax.random.key(5)
    state, obs, _ = jax.jit(env.reset)(key)
    seeds = np.asarray(jax.random.randint(key, (3,), 0, 2**31 - 1, dtype=jnp.int32))
    ref = cule.AtariVectorEnv("pong", 3, img_height=42, img_width=42)
    np.testing.assert_array_equal(np.asarray(obs), ref.reset(seed=seeds)[0].numpy())
    state, *_ = env.step(state, jnp.array([0, 7, 1], dtype=jnp.int32))  # 7: outside pong's set, plays NOOP
    np.testing.assert_array_equal(np.asarray(_[0]), ref.step(np.array([0, 0, 1]))[0].numpy())
    env.close()
    with pytest.raises(Exception, match="no emulator is registered"):
        jax.block_until_ready(env.step(state, jnp.zeros(3, dtype=jnp.int32))[1])
    with pytest.raises(ValueError, match="one game"):
        cj.make(["pong", "breakout"], 2)
    with pytest.raises(ValueError, match="NextStep"):
        cj.make("pong", 2, autoreset_mode="SameStep")
