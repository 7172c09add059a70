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


def jax_gpu():
    try:
        return jax.devices("gpu")[0]
    except RuntimeError:
        return None


ON_GPU = torch.cuda.is_available() and jax_gpu() is not None
NEEDS_GPU = pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU seen by both torch and JAX (JAX's CUDA build)")
BACKENDS = ["cpu", "shim", pytest.param("cuda", marks=NEEDS_GPU)]


def jit_env(backend: str, game: str, n: int, **kwargs):
    """cule.jax.make on `backend` (the shim: the CUDA backend's launch plan on the host), and the device its
    jitted calls run on."""
    if backend == "cuda":
        return cj.make(game, n, device="cuda", **kwargs), jax_gpu()
    return cj.make(game, n, **kwargs, **({"_shim": True} if backend == "shim" else {})), jax.devices("cpu")[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiled_scan_calls_the_emulator_once_per_step(backend):
    """XLA keeps one call of the step in the compiled scan (on a GPU its dynamic-slice fusion could otherwise
    leave the original call beside a fused copy, and the step would run twice)."""
    env, device = jit_env(backend, "pong", 2)

    def rollout(state, actions):
        def body(state, a):
            state, obs, rewards, terminated, truncated, info = env.step(state, a)
            return state, (obs, rewards, terminated, info["lives"])
        return jax.lax.scan(body, state, actions)

    with jax.default_device(device):
        state = jax.jit(env.reset, static_argnums=0)(1)[0]
        hlo = jax.jit(rollout).lower(state, jnp.zeros((5, 2), jnp.int32)).compile().as_text()
    target = "cule_plan_call" if env.planned else "cule_step"
    assert hlo.count(f'custom_call_target="{target}"') == 1, hlo
    env.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_jitted_scan_of_300_steps_equals_the_torch_interface(backend):
    steps, n = 300, 4
    env, device = jit_env(backend, "breakout", n)
    ref = cule.AtariVectorEnv("breakout", n)
    actions = np.random.default_rng(3).integers(0, env.env.single_action_space.n, size=(steps, n)).astype(np.int32)

    @jax.jit
    def rollout(state, actions):
        def body(state, a):
            state, obs, rewards, terminated, truncated, info = env.step(state, a)
            return state, (obs, rewards, terminated, truncated, info["lives"], info["episode_frame_number"])
        return jax.lax.scan(body, state, actions)

    with jax.default_device(device):
        state, obs0, info0 = jax.jit(env.reset, static_argnums=0)(11)
        obs, info = ref.reset(seed=11)
        np.testing.assert_array_equal(np.asarray(obs0), obs.numpy())
        np.testing.assert_array_equal(np.asarray(info0["lives"]), info["lives"].numpy())
        state, outs = rollout(state, jnp.asarray(actions))
    assert obs0.devices() == {device} and outs[0].devices() == {device}
    assert state.tolist() == [env.handle, steps + 1]
    outs = [np.asarray(o) for o in outs]
    for t in range(steps):
        obs, rewards, terminated, truncated, info = ref.step(actions[t])
        for mine, theirs in zip(outs, (obs, rewards, terminated, truncated, info["lives"],
                                       info["episode_frame_number"])):
            np.testing.assert_array_equal(mine[t], theirs.numpy(), err_msg=f"step {t}")
    assert outs[1].sum() > 0 and outs[2].any()  # the rollout scored and lost a game: it saw the game move
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


def test_seeds_outside_ales_range_are_refused_and_the_env_still_resets():
    """A seed below 0 would leave a never-powered console off and its reset would never end; one that wraps past
    int32 would do the same to a later environment."""
    env = cj.make("pong", 3)
    for seed in (-1, 2**31 - 2, 2**40):
        with pytest.raises(ValueError, match=r"seeds must lie in \[0, 2147483647\]"):
            env.reset(seed)
    for bad in (True, 1.5, "3", jnp.float32(2)):
        with pytest.raises(TypeError, match="an int seed or a PRNG key, got"):
            env.reset(bad)
    start = jnp.array([env.handle, 0], jnp.int32)
    with pytest.raises(Exception, match="seed -1 of environment 1 is below 0"):  # the handler's own check
        jax.block_until_ready(env._reset(start, jnp.array([0, -1, 2], jnp.int32)))
    with pytest.raises(Exception, match="seeds is float32 with 3 elements; expected int32 with 3"):
        jax.block_until_ready(env._reset(start, jnp.zeros(3, jnp.float32)))
    state, obs, _ = env.reset(jnp.int32(2**31 - 3))  # a 0-d integer array is a seed too
    ref = cule.AtariVectorEnv("pong", 3)
    np.testing.assert_array_equal(np.asarray(obs), ref.reset(seed=2**31 - 3)[0].numpy())
    for _ in range(30):  # outside the action set, below it too, plays NOOP (take() alone would wrap -1 to the last)
        state, obs, *_ = env.step(state, jnp.array([-1, -6, 6], jnp.int32))
        expected = ref.step(np.zeros(3, int))[0]
    np.testing.assert_array_equal(np.asarray(obs), expected.numpy())
    env.close()
    ref.close()


def test_a_launch_plan_checks_its_calls_and_a_closed_one_refuses_them():
    env = cj.make("pong", 2, _shim=True)
    state, obs, _ = env.reset(0)
    with pytest.raises(Exception, match="argument 1 has 12 bytes; its plan expects 8"):
        jax.block_until_ready(env._step(state, jnp.zeros(3, dtype=jnp.int32)))
    env.close()
    with pytest.raises(Exception, match="no launch plan is registered"):
        jax.block_until_ready(env.step(state, jnp.zeros(2, dtype=jnp.int32))[1])
    with pytest.raises(ValueError, match="reset_mode='ale'"):
        cj.make("pong", 2, _shim=True, reset_mode="cache")


@NEEDS_GPU
def test_cuda_outputs_and_actions_cross_without_a_copy():
    """On a GPU the outputs stay where cule_gather wrote them, and JAX's actions are read where JAX holds them."""
    n = 16
    env = cule.AtariVectorEnv("breakout", n, device="cuda")
    obs, info = env.reset(seed=2)
    arrays = cj.to_jax((obs, info))
    assert shares(arrays[0], obs) and all(shares(arrays[1][k], info[k]) for k in info)
    assert arrays[0].devices() == {jax_gpu()}
    actions = jax.device_put(jnp.arange(n, dtype=jnp.int32) % 4, jax_gpu())
    tensor = cj.from_jax(actions)
    assert tensor.is_cuda and shares(actions, tensor)
    plain = cule.AtariVectorEnv("breakout", n, device="cuda")
    plain.reset(seed=2)
    wrapped = cj.wrap(env)
    for t in range(100):
        acts = jax.device_put(jnp.asarray(np.random.default_rng(t).integers(4, size=n), dtype=jnp.int32), jax_gpu())
        a, b = wrapped.step(acts), plain.step(torch.from_dlpack(acts).clone())
        for x, y in zip(a[:4], b[:4]):
            assert x.devices() == {jax_gpu()}
            np.testing.assert_array_equal(np.asarray(x), y.cpu().numpy())
    step = env.step(torch.zeros(n, dtype=torch.int64, device="cuda"))
    out = cj.to_jax(step)
    assert all(shares(a, t) for a, t in zip(out[:4], step[:4]))
    env.close()
    plain.close()


def test_continuous_actions_go_through_wrap():
    wrapped = cj.wrap(cule.AtariVectorEnv("pong", 2, continuous=True))
    plain = cule.AtariVectorEnv("pong", 2, continuous=True)
    wrapped.reset(seed=3)
    plain.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(30):
        acts = rng.uniform([0, -np.pi, 0], [1, np.pi, 1], (2, 3)).astype(np.float32)
        a, b = wrapped.step(jnp.asarray(acts)), plain.step(acts)
        np.testing.assert_array_equal(np.asarray(a[0]), b[0].numpy())
    wrapped.close()
    plain.close()


def test_continuous_words_in_jax_equal_the_hosts():
    """The paddle step computed in 32-bit integers equals numpy's double arithmetic over radii of every size,
    negative ones and subnormals included; a bad action is NOOP."""
    from cule import continuous
    rng = np.random.default_rng(0)
    radii = np.concatenate([rng.uniform(0, 1, 4000), rng.uniform(0, 400, 1000), 10.0 ** rng.uniform(-45, 4.8, 3000),
                            [0.0, 1.0, 0.7, 182.36, 183.0, 255.99, 256.0, 65536.0]]).astype(np.float32)
    radii[:500] *= -1
    actions = np.stack([radii, rng.uniform(-np.pi, np.pi, len(radii)), rng.uniform(0, 1, len(radii))], 1)
    actions = actions.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(cj.continuous_words(jnp.asarray(actions), 0.5)),
                                  continuous.host_words(actions, 0.5, len(actions)))
    bad = np.array([[np.nan, 0, 0], [0.5, np.inf, 0], [1e5, 0, 0]], np.float32)
    assert not np.asarray(cj.continuous_words(jnp.asarray(bad), 0.5)).any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_jitted_continuous_scan_equals_the_torch_interface(backend):
    steps, n = 150, 4
    kwargs = dict(continuous=True, repeat_action_probability=0.25)
    env, device = jit_env(backend, "breakout", n, **kwargs)
    ref = cule.AtariVectorEnv("breakout", n, **kwargs)
    actions = np.random.default_rng(4).uniform([0, -np.pi, 0], [1.5, np.pi, 1], (steps, n, 3)).astype(np.float32)

    @jax.jit
    def rollout(state, actions):
        def body(state, a):
            state, obs, rewards, *_ = env.step(state, a)
            return state, (obs, rewards)
        return jax.lax.scan(body, state, actions)

    with jax.default_device(device):
        state, _, _ = jax.jit(env.reset, static_argnums=0)(9)
        ref.reset(seed=9)
        state, (obs, rewards) = rollout(state, jnp.asarray(actions))
    obs, rewards = np.asarray(obs), np.asarray(rewards)
    for t in range(steps):
        expected = ref.step(actions[t])
        np.testing.assert_array_equal(obs[t], expected[0].numpy(), err_msg=f"step {t}")
        np.testing.assert_array_equal(rewards[t], expected[1].numpy(), err_msg=f"step {t}")
    env.close()
    ref.close()
