"""jaxsched.train.losses and jaxsched.train.optim against hand-computed values."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxsched.nets.categorical import MASKED_LOGIT
from jaxsched.train import optim
from jaxsched.train.losses import (
    actor_critic_loss,
    masked_mean,
    masked_sum,
    policy_gradient_loss,
    ppo_clip_terms,
    q_regression_loss,
    value_loss,
)

# two samples over three slots; slot 2 of sample 1 is masked
LOGITS = jnp.array([[0.0, 0.0, 0.0], [np.log(3.0), 0.0, MASKED_LOGIT]], jnp.float32)
# probabilities: [1/3, 1/3, 1/3] and [3/4, 1/4, 0]
ACTION = jnp.array([0, 1], jnp.int32)
LOGP = np.log([1 / 3, 1 / 4])
ENT = np.array([np.log(3.0), -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))])


def test_masked_mean_and_sum():
    x = jnp.array([1.0, 2.0, 4.0])
    w = jnp.array([True, False, True])
    assert float(masked_mean(x, w)) == 2.5 and float(masked_sum(x, w)) == 5.0
    assert float(masked_mean(x, jnp.zeros(3, bool))) == 0.0


def test_ppo_clip_terms_hand_computed():
    # old log-probs chosen so that the ratios are 1.5 (clipped for A > 0) and 0.5 (A < 0:
    # clipped at 0.8, the min picks the ratio term 0.5 * -2 = -1 vs 0.8 * -2 = -1.6 -> -1.6)
    logp_old = jnp.asarray(LOGP - np.log([1.5, 0.5]), jnp.float32)
    adv = jnp.array([1.0, -2.0], jnp.float32)
    w = jnp.array([True, True])
    loss, (kl, ent, clip) = ppo_clip_terms(
        LOGITS, ACTION, logp_old, adv, w, jnp.float32(2.0), clip_ratio=0.2, entropy_coef=0.1
    )
    surrogate = min(1.5 * 1.0, 1.2 * 1.0) + min(0.5 * -2.0, 0.8 * -2.0)  # 1.2 - 1.6
    np.testing.assert_allclose(loss, -(surrogate + 0.1 * ENT.sum()) / 2.0, rtol=1e-5)
    np.testing.assert_allclose(kl, -np.log(1.5) - np.log(0.5), rtol=1e-5)  # Σ (old − new)
    np.testing.assert_allclose(ent, ENT.sum(), rtol=1e-5)
    assert float(clip) == 2.0
    # a weightless sample contributes nothing
    loss1, (kl1, _, _) = ppo_clip_terms(
        LOGITS, ACTION, logp_old, adv, jnp.array([True, False]), jnp.float32(1.0), clip_ratio=0.2
    )
    np.testing.assert_allclose(loss1, -1.2, rtol=1e-5)
    np.testing.assert_allclose(kl1, -np.log(1.5), rtol=1e-5)


def test_value_loss():
    v, t = jnp.array([1.0, 2.0, 3.0]), jnp.array([2.0, 2.0, 0.0])
    w = jnp.array([True, True, False])
    assert float(value_loss(v, t, w)) == 0.5  # (1 + 0) / 2
    assert float(value_loss(v, t, w, jnp.float32(4.0))) == 0.25


def test_policy_gradient_loss_and_gradient():
    g = jnp.array([2.0, -1.0])
    w = jnp.array([True, True])
    loss, ent = policy_gradient_loss(LOGITS, ACTION, g, w, entropy_coef=0.5)
    np.testing.assert_allclose(ent, ENT.mean(), rtol=1e-5)
    np.testing.assert_allclose(loss, -(LOGP * [2.0, -1.0]).mean() - 0.5 * ENT.mean(), rtol=1e-5)
    # ∂/∂z of −G log softmax(z)[a] / B = −G (onehot(a) − p) / B; the masked slot gets nothing
    grad = jax.grad(lambda z: policy_gradient_loss(z, ACTION, g, w)[0])(LOGITS)
    p = np.array([[1 / 3, 1 / 3, 1 / 3], [0.75, 0.25, 0.0]])
    onehot = np.eye(3)[[0, 1]]
    np.testing.assert_allclose(grad, -(np.array([[2.0], [-1.0]]) * (onehot - p)) / 2, atol=1e-6)


def test_actor_critic_loss_hand_computed():
    values = jnp.array([1.0, 0.5])
    targets = jnp.array([3.0, 0.0])
    w = jnp.array([True, True])
    loss, (pi, v, ent) = actor_critic_loss(
        LOGITS, ACTION, values, targets, w, value_coef=0.5, entropy_coef=0.01
    )
    adv = np.array([2.0, -0.5])
    np.testing.assert_allclose(pi, -(LOGP * adv).mean(), rtol=1e-5)
    np.testing.assert_allclose(v, (4.0 + 0.25) / 2, rtol=1e-5)
    np.testing.assert_allclose(ent, ENT.mean(), rtol=1e-5)
    np.testing.assert_allclose(loss, pi + 0.5 * v - 0.01 * ent, rtol=1e-5)
    # the critic is trained through the value term only: ∂loss/∂V = −value_coef·2(G − V)/B
    gv = jax.grad(lambda vv: actor_critic_loss(LOGITS, ACTION, vv, targets, w)[0])(values)
    np.testing.assert_allclose(gv, -0.5 * 2 * (np.array([3.0, 0.0]) - [1.0, 0.5]) / 2, rtol=1e-5)
    # standardised advantages: (2, -0.5) -> (1, -1); the value term is unchanged
    _, (pi_n, v_n, _) = actor_critic_loss(
        LOGITS, ACTION, values, targets, w, normalize_advantages=True
    )
    np.testing.assert_allclose(pi_n, -(LOGP * np.array([1.0, -1.0])).mean(), rtol=1e-5)
    np.testing.assert_allclose(v_n, v, rtol=1e-6)


def test_q_regression_loss_hand_computed():
    q = jnp.array([[1.0, 2.0], [0.0, -1.0], [5.0, 5.0]])
    a = jnp.array([1, 0, 0])
    t = jnp.array([4.0, 0.5, 0.0])
    w = jnp.array([True, True, False])
    np.testing.assert_allclose(q_regression_loss(q, a, t, w), (4.0 + 0.25) / 2)
    # Huber (δ = 1): |2| -> 1·(2 − 0.5) = 1.5; |0.5| -> 0.5·0.25 = 0.125
    np.testing.assert_allclose(q_regression_loss(q, a, t, w, huber_delta=1.0), (1.5 + 0.125) / 2)
    # the target is a constant
    gt = jax.grad(lambda tt: q_regression_loss(q, a, tt, w))(t)
    np.testing.assert_array_equal(gt, np.zeros(3))


def test_linear_decay_ends_exactly():
    sched = jax.jit(optim.linear_decay(3e-4, 3e-5, 7))
    assert float(sched(0)) == np.float32(3e-4)
    assert float(sched(7)) == np.float32(3e-5) and float(sched(100)) == np.float32(3e-5)
    np.testing.assert_allclose(float(sched(3)), 3e-4 + (3e-5 - 3e-4) * 3 / 7, rtol=1e-5)


@pytest.mark.parametrize("make", [optim.adam, optim.rmsprop])
def test_optimisers_step_and_clip(make):
    params = {"w": jnp.array([1.0, -1.0])}
    grads = {"w": jnp.array([30.0, -40.0])}  # norm 50
    tx = make(0.1, max_grad_norm=5.0, decay_steps=2, end_fraction=0.0)
    st = tx.init(params)
    upd, st = tx.update(grads, st, params)
    p1 = optax.apply_updates(params, upd)
    assert np.all(np.asarray(p1["w"]) != np.asarray(params["w"]))
    # after the decay the learning rate is exactly 0: nothing moves
    for _ in range(2):
        upd, st = tx.update(grads, st, params)
    np.testing.assert_array_equal(np.asarray(upd["w"]), [0.0, 0.0])
