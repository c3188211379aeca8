"""jaxsched.train.returns against hand-computed numbers: GAE, reward-to-go, n-step TD targets
(A2C), one-step Q-learning targets; done masks stop every sum at the episode boundary."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxsched.train.returns import (
    gae_advantages,
    nstep_targets,
    q_learning_targets,
    reward_to_go,
)


def test_gae_hand_computed():
    # two episodes in one column: steps 0-2 (terminal reward 5), steps 3-4 (rewards 1, 3)
    r = np.array([0.0, 0.0, 5.0, 1.0, 3.0])
    v = np.array([1.0, 2.0, 3.0, 1.0, 0.5])
    d = np.array([False, False, True, False, True])
    gamma, lam = 0.9, 0.5
    # δ_t = r_t + γ(1-d_t)V_{t+1} - V_t
    d0 = 0 + 0.9 * 2.0 - 1.0  # 0.8
    d1 = 0 + 0.9 * 3.0 - 2.0  # 0.7
    d2 = 5.0 - 3.0  # 2.0 (terminal: nothing from step 3)
    d3 = 1.0 + 0.9 * 0.5 - 1.0  # 0.45
    d4 = 3.0 - 0.5  # 2.5
    gl = gamma * lam  # 0.45
    a4 = d4
    a3 = d3 + gl * a4  # 1.575
    a2 = d2
    a1 = d1 + gl * a2  # 1.6
    a0 = d0 + gl * a1  # 1.52
    g = [0.9 * 0.9 * 5.0, 0.9 * 5.0, 5.0, 1.0 + 0.9 * 3.0, 3.0]
    adv, ret = gae_advantages(r, v, d, gamma, lam)
    np.testing.assert_allclose(adv, [a0, a1, a2, a3, a4], rtol=1e-6)
    np.testing.assert_allclose(ret, g, rtol=1e-6)
    assert adv.dtype == jnp.float32 and ret.dtype == jnp.float32


def test_gae_reference_case_gamma_one():
    # RLScheduler: rewards 0 except the terminal -metric R; γ = 1
    # => δ_t = V_{t+1} - V_t, δ_{T-1} = R - V_{T-1}; target = R at every step.
    R, lam = -7.0, 0.97
    v = np.array([-2.0, -3.0, -5.0, -6.0])
    r = np.array([0.0, 0.0, 0.0, R])
    d = np.array([False, False, False, True])
    delta = np.append(v[1:] - v[:-1], R - v[-1])
    expect = [sum(lam**k * delta[t + k] for k in range(4 - t)) for t in range(4)]
    adv, ret = gae_advantages(r, v, d, 1.0, lam)
    np.testing.assert_allclose(adv, expect, rtol=1e-6)
    np.testing.assert_allclose(ret, [R] * 4)
    # batched columns are independent
    adv2, _ = gae_advantages(
        np.stack([r, r * 2], 1), np.stack([v, v], 1), np.stack([d, d], 1), 1.0, lam
    )
    np.testing.assert_allclose(adv2[:, 0], expect, rtol=1e-6)


def test_reward_to_go_hand_computed():
    r = np.array([0.0, 0.0, 5.0, 1.0, 3.0])
    d = np.array([False, False, True, False, True])
    g = reward_to_go(r, d, 0.9)
    np.testing.assert_allclose(g, [0.81 * 5.0, 0.9 * 5.0, 5.0, 1.0 + 0.9 * 3.0, 3.0], rtol=1e-6)
    assert g.dtype == jnp.float32
    # equals GAE's second result; a non-terminal tail is bootstrapped with last_value
    _, ret = gae_advantages(r, np.ones(5), d, 0.9, 0.5)
    np.testing.assert_array_equal(g, ret)
    d_open = np.array([False, False, True, False, False])
    np.testing.assert_allclose(
        reward_to_go(r, d_open, 0.5, last_value=8.0)[3:], [1.0 + 0.5 * (3.0 + 0.5 * 8.0), 7.0]
    )


def test_nstep_targets_hand_computed():
    # one column: episode A = steps 0-2 (ends at 2), episode B = steps 3-5 (cut by the rollout)
    r = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    v = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    d = np.array([False, False, True, False, False, False])
    g, last = 0.5, 70.0
    got = nstep_targets(r, v, d, g, 2, last_value=last)
    expect = [
        1.0 + g * 2.0 + g**2 * 30.0,  # two rewards, bootstrap V(s_2)
        2.0 + g * 3.0,  # episode ends at step 2: no bootstrap
        3.0,  # terminal step
        4.0 + g * 5.0 + g**2 * 60.0,
        5.0 + g * 6.0 + g**2 * last,  # the rollout ends: V(s_T) = last_value
        6.0 + g * last,  # only one step left before the end of the rollout
    ]
    np.testing.assert_allclose(got, expect, rtol=1e-6)
    assert got.dtype == jnp.float32
    # n = 1 is the one-step TD target r + γ(1−d)V(s')
    one = nstep_targets(r, v, d, g, 1, last_value=last)
    nv = np.append(v[1:], last)
    np.testing.assert_allclose(one, r + g * (1 - d) * nv, rtol=1e-6)
    # n >= T on complete episodes is the reward-to-go
    d_end = d.copy()
    d_end[-1] = True
    np.testing.assert_allclose(nstep_targets(r, v, d_end, g, 10), reward_to_go(r, d_end, g))
    # batch columns are independent
    two = nstep_targets(
        np.stack([r, r], 1),
        np.stack([v, v], 1),
        np.stack([d, d], 1),
        g,
        2,
        last_value=np.array([last, last]),
    )
    np.testing.assert_allclose(two[:, 1], expect, rtol=1e-6)
    with pytest.raises(ValueError):
        nstep_targets(r, v, d, g, 0)


def test_q_learning_targets_hand_computed():
    next_q = np.array([[1.0, 3.0, -1e30], [2.0, -5.0, 0.0]])
    got = q_learning_targets(np.array([1.0, 2.0]), np.array([False, True]), next_q, 0.9)
    np.testing.assert_allclose(got, [1.0 + 0.9 * 3.0, 2.0])
