"""Masked policy gradients: sb3-contrib's MaskablePPO over a small fully convolutional policy.

    pip install 'gbely[env]' sb3-contrib torch
    python gbely-py/examples/learning/maskable_ppo.py --imitate front --minutes 3 --out ppo/  # imitate, PPO, evaluate
    python gbely-py/examples/learning/maskable_ppo.py --minutes 5 --out ppo/                  # PPO from scratch
    python gbely-py/examples/learning/maskable_ppo.py --quick --out /tmp/ppo                  # a smoke run: seconds
    python gbely-py/examples/learning/maskable_ppo.py --bench                                 # steps/s, stock vs batched

The environment is gbely.env.MaskedCells around gymnasium.make("gbely/Duel-v0"): one kind per
cell (MultiDiscrete of 10 per cell, every unit of the cell sent), the legal kinds from
action_masks(), 14 channels per cell. The policy is convolutional: per-cell logits from 3×3
convolutions, the value from the features pooled over the grid, so it plays any map size.

sb3-contrib's MaskableMultiCategoricalDistribution makes one torch Categorical per dimension:
3 600 of them per step on the reference map. CellCategorical below treats the logits as one
batched categorical over (batch, cells, 10) with the mask applied, which is what makes training
fast enough to be worth it (--bench measures both).

From scratch, a few minutes of PPO on 2 cores leave the policy near random play: one reward a
round is shared by hundreds of per-cell choices. --imitate starts it from a rule computed on the
channels (behaviour cloning with DAgger, in the same masked distribution): 'template', the
template agent's rule, or 'front', that rule with the cells behind the front feeding it. The
policy is evaluated with its most likely kinds against the Council and the template.
"""
import argparse
import json
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch as th
from torch import nn
from torch.nn import functional as F

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.distributions import MaskableMultiCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import gbely  # noqa: F401  (registers gbely/Duel-v0)
from gbely.env import CHANNELS, KINDS, GbelyEnv, MaskedCells

HERE = Path(__file__).resolve().parent
AGENTS = HERE.parents[2] / "agents"
HUGE_NEG = -1e8
# Evaluated against: the Council, and the template (agents/my_agent.py, imported in this process).
OPPONENTS = [("council", "council"), ("template", str(AGENTS / "my_agent.py"))]


class CellCategorical(MaskableMultiCategoricalDistribution):
    """The per-cell categoricals of a MultiDiscrete([10] * cells) as one batched categorical:
    the logits are viewed as (batch, cells, 10), the mask (sb3-contrib's flat one) the same way,
    and log-probabilities and entropies are summed over the cells (a masked-out kind has
    probability 0 and adds nothing to the entropy, as in sb3-contrib)."""

    def __init__(self, action_dims):
        super().__init__(action_dims)
        self.kinds = int(action_dims[0])
        assert all(int(d) == self.kinds for d in action_dims)
        self.logits = None
        self.masks = None

    def proba_distribution_net(self, latent_dim):
        return nn.Identity()  # the policy's convolutions give the logits themselves

    def proba_distribution(self, action_logits):
        self.raw = action_logits.reshape(action_logits.shape[0], -1, self.kinds)
        self.masks = None
        self.logits = self.raw
        return self

    def apply_masking(self, masks):
        if masks is None:
            self.masks, self.logits = None, self.raw
            return
        self.masks = th.as_tensor(masks, dtype=th.bool, device=self.raw.device).reshape(self.raw.shape)
        self.logits = th.where(self.masks, self.raw, th.tensor(HUGE_NEG, dtype=self.raw.dtype, device=self.raw.device))

    def log_prob(self, actions):
        log_p = F.log_softmax(self.logits, -1)
        actions = actions.long().reshape(log_p.shape[0], -1, 1)
        return log_p.gather(-1, actions).squeeze(-1).sum(-1)

    def entropy(self):
        log_p = F.log_softmax(self.logits, -1)
        p_log_p = log_p.exp() * log_p
        if self.masks is not None:
            p_log_p = th.where(self.masks, p_log_p, th.zeros((), dtype=p_log_p.dtype, device=p_log_p.device))
        return -p_log_p.sum((-1, -2))

    def sample(self):
        # Gumbel-max: one draw per cell, all cells at once.
        u = th.rand_like(self.logits).clamp_(1e-10, 1.0)
        return (self.logits - th.log(-th.log(u))).argmax(-1)

    def mode(self):
        return self.logits.argmax(-1)


class Grid(BaseFeaturesExtractor):
    """No extraction: the channels go to the convolutions as they are (C × H × W)."""

    def __init__(self, observation_space):
        super().__init__(observation_space, features_dim=observation_space.shape[0])

    def forward(self, observations):
        return observations


class ConvCells(nn.Module):
    """The shared trunk (3×3 convolutions, 'same' padding: any grid size), per-cell logits
    (1×1 convolution, flattened cell-major then kind, as the mask) and the value's features
    (the trunk's mean and max over the grid)."""

    def __init__(self, channels, width=16, layers=2):
        super().__init__()
        convs, c = [], channels
        for _ in range(layers):
            convs += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU()]
            c = width
        self.trunk = nn.Sequential(*convs)
        self.pi = nn.Conv2d(width, KINDS, 1)
        self.latent_dim_pi = KINDS  # unused: CellCategorical's net is the identity
        self.latent_dim_vf = 2 * width

    def _actor(self, h):
        return self.pi(h).permute(0, 2, 3, 1).reshape(h.shape[0], -1)

    def _critic(self, h):
        return th.cat([h.mean((2, 3)), h.amax((2, 3))], 1)

    def forward(self, x):
        h = self.trunk(x)
        return self._actor(h), self._critic(h)

    def forward_actor(self, x):
        return self._actor(self.trunk(x))

    def forward_critic(self, x):
        return self._critic(self.trunk(x))


class ConvCellsPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy with ConvCells and (unless stock_distribution) CellCategorical."""

    def __init__(self, *args, width=16, layers=2, stock_distribution=False, **kwargs):
        self.width, self.layers, self.stock_distribution = width, layers, stock_distribution
        kwargs.setdefault("features_extractor_class", Grid)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self):
        self.mlp_extractor = ConvCells(self.observation_space.shape[0], self.width, self.layers)

    def _build(self, lr_schedule):
        if not self.stock_distribution:
            self.action_dist = CellCategorical(list(self.action_space.nvec))
        else:  # sb3-contrib's own, one Categorical per cell: its net is a Linear we do not want
            self.action_dist.proba_distribution_net = lambda latent_dim: nn.Identity()
        super()._build(lr_schedule)
        # Start near uniform over the legal kinds (SB3 gives its action net gain 0.01; ours is pi).
        nn.init.orthogonal_(self.mlp_extractor.pi.weight, gain=0.01)
        nn.init.zeros_(self.mlp_extractor.pi.bias)

    def _get_constructor_parameters(self):
        data = super()._get_constructor_parameters()
        data.update(width=self.width, layers=self.layers, stock_distribution=self.stock_distribution)
        return data


def template_kinds(obs):
    """The template's rule (agents/my_agent.py) on the channels, as the wrapper's action: each own
    cell attacks its weakest visible foreign neighbour (defence = garrison × terrain bonus +
    fortification, the first of north, south, west, east on a tie) with everything when its
    units are more than that defence; else it stays. ``obs``: C × H × W."""
    own = obs[CHANNELS.index("own")] > 0
    units = obs[CHANNELS.index("units")] * 10
    foreign = (obs[CHANNELS.index("visible")] > 0) & ~own
    defence = np.where(foreign, obs[CHANNELS.index("defence")] * 10, np.inf)
    padded = np.pad(defence, 1, constant_values=np.inf)
    h, w = own.shape
    # the neighbour's defence per direction: north, south, west, east (rules §2's order)
    around = np.stack([padded[0:h, 1:w + 1], padded[2:h + 2, 1:w + 1], padded[1:h + 1, 0:w], padded[1:h + 1, 2:w + 2]])
    best = around.argmin(0)
    weakest = around.min(0)
    return np.where(own & (units > weakest), 5 + best, 0).reshape(-1)


def _around(a, fill):
    """The value of each cell's neighbour, per direction: north, south, west, east (4 × H × W)."""
    h, w = a.shape
    p = np.pad(a, 1, constant_values=fill)
    return np.stack([p[0:h, 1:w + 1], p[2:h + 2, 1:w + 1], p[1:h + 1, 0:w], p[1:h + 1, 2:w + 2]])


def front_kinds(obs):
    """The template's rule, and an own cell without a foreign neighbour next to one that has one
    (the front) MOVEs everything there (the first such neighbour, north, south, west, east).
    Everything it looks at lies within two cells: the policy's 5×5 view can express it."""
    kinds = template_kinds(obs).reshape(obs.shape[1:])
    own = obs[CHANNELS.index("own")] > 0
    foreign = (obs[CHANNELS.index("visible")] > 0) & ~own
    front = own & _around(foreign, False).any(0)
    next_to_front = _around(front, False)
    feed = own & ~front & next_to_front.any(0) & (obs[CHANNELS.index("units")] > 0)
    return np.where(feed & (kinds == 0), 1 + next_to_front.argmax(0), kinds).reshape(-1)


TEACHERS = {"template": template_kinds, "front": front_kinds}


def imitate(model, teacher=template_kinds, passes=3, epochs=8, batch=50, rounds=150, lr=1e-3, log=print):
    """Behaviour cloning of a rule (``teacher``: channels → kinds) with DAgger: the rule plays one
    match, then the policy plays (its most likely kinds) and the rule labels what it meets; after each pass the
    policy maximises its log-probability of the rule's kinds on everything gathered (the same
    masked distribution PPO then trains, per own cell)."""
    policy = model.policy
    for group in policy.optimizer.param_groups:
        group["lr"] = lr  # PPO sets its own again at each update
    env = make_env(rounds=rounds)()
    observations, masks, actions = [], [], []
    rng = np.random.default_rng(0)
    for p in range(passes):
        obs, _ = env.reset(seed=p)
        done = False
        while not done:
            mask = env.action_masks()
            label = teacher(obs)
            observations.append(obs); masks.append(mask); actions.append(label)
            if p == 0:
                act = label
            else:
                with th.no_grad():
                    act, _ = policy.predict(obs, deterministic=True, action_masks=mask)
            obs, _, done, _, info = env.step(act)
        log(f"imitation pass {p}: {'the rule' if p == 0 else 'the policy'} played, share {info['share']:.2f} %")
        data_obs, data_masks, data_act = np.stack(observations), np.stack(masks), np.stack(actions)
        own = data_obs[:, CHANNELS.index("own")].sum((1, 2))
        for epoch in range(epochs):
            order = rng.permutation(len(data_obs))
            losses = []
            for i in range(0, len(order), batch):
                idx = order[i:i + batch]
                _, log_prob, _ = policy.evaluate_actions(th.as_tensor(data_obs[idx]), th.as_tensor(data_act[idx]),
                                                         action_masks=data_masks[idx])
                loss = -(log_prob / th.as_tensor(np.maximum(own[idx], 1))).mean()  # per own cell
                policy.optimizer.zero_grad()
                loss.backward()
                policy.optimizer.step()
                losses.append(loss.item())
        log(f"  {len(data_obs)} observations, {epochs} epochs: loss per own cell {np.mean(losses):.3f}")


class FinalShares(BaseCallback):
    """Collects the final share of every training match."""

    def __init__(self):
        super().__init__()
        self.shares = []

    def _on_step(self):
        for done, info in zip(self.locals["dones"], self.locals["infos"]):
            if done:
                self.shares.append(info["share"])
        return True


def make_env(rounds=150, opponent="council", map="gbely"):
    def thunk():
        return MaskedCells(gymnasium.make("gbely/Duel-v0", rounds=rounds, opponent=opponent, map=map))
    return thunk


def play(policy, opponent, rounds=150, map="gbely", deterministic=True):
    """One match of the policy (seat 0) against an opponent: its final share and result."""
    env = MaskedCells(GbelyEnv(map=map, opponent=opponent, rounds=rounds))
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        with th.no_grad():
            action, _ = policy.predict(obs, deterministic=deterministic, action_masks=env.action_masks())
        obs, _, done, _, info = env.step(action)
    sides = info["result"]["sides"]
    return {"share": round(sides[0]["score"], 2), "cells": sides[0]["cells"],
            "opponent_share": round(sides[1]["score"], 2), "opponent_cells": sides[1]["cells"]}


def bench(envs=4, repeats=5):
    """Seconds per PPO step on the reference map, CellCategorical against sb3-contrib's own
    distribution (one Categorical per cell): the rollout's forward pass (``envs`` observations,
    masked sampling) and an update's forward + backward (the same observations)."""
    venv = DummyVecEnv([make_env()] * envs)
    obs = th.as_tensor(venv.reset())
    masks = np.stack(venv.env_method("action_masks"))
    out = {}
    for stock in (False, True):
        th.manual_seed(0)
        model = MaskablePPO(ConvCellsPolicy, venv, n_steps=150, batch_size=75, verbose=0,
                            policy_kwargs={"stock_distribution": stock})
        policy = model.policy
        n = 1 if stock else repeats
        if not stock:  # a first call outside the timing (allocations, oneDNN's kernels)
            with th.no_grad():
                policy(obs, action_masks=masks)
        start = time.perf_counter()
        for _ in range(n):
            with th.no_grad():
                actions, _, _ = policy(obs, action_masks=masks)
        forward = (time.perf_counter() - start) / n
        start = time.perf_counter()
        for _ in range(n):
            _, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
            (log_prob.mean() + entropy.mean()).backward()
        update = (time.perf_counter() - start) / n
        name = "sb3-contrib MaskableMultiCategorical" if stock else "CellCategorical"
        out[name] = {"rollout_ms_per_step": round(1000 * forward / envs, 1),
                     "update_ms_per_step": round(1000 * update / envs, 1),
                     "steps_per_s": round(envs / (forward + update), 2)}
        print(f"{name}: rollout {1000 * forward / envs:.1f} ms a step, update {1000 * update / envs:.1f} ms a step "
              f"(one epoch): {envs / (forward + update):.2f} steps/s of the policy alone", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="ppo", help="folder for policy.pt, model.zip and results.json")
    ap.add_argument("--minutes", type=float, default=5.0, help="training time (default 5)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: a few short matches")
    ap.add_argument("--bench", action="store_true", help="only measure steps/s, stock vs batched distribution")
    ap.add_argument("--envs", type=int, default=4, help="matches played side by side (default 4)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--width", type=int, default=16, help="channels of the convolutions (default 16)")
    ap.add_argument("--layers", type=int, default=2, help="3×3 convolutions (default 2: each cell sees 5×5)")
    ap.add_argument("--epochs", type=int, default=1, help="PPO epochs per rollout (default 1)")
    ap.add_argument("--batch", type=int, default=75, help="minibatch (default 75)")
    ap.add_argument("--lr", type=float, default=3e-4, help="PPO's learning rate (default 3e-4; imitation uses 1e-3)")
    ap.add_argument("--clip", type=float, default=0.2,
                    help="PPO's clip range on the ratio of the joint probability of all cells (default 0.2)")
    ap.add_argument("--imitate", choices=sorted(TEACHERS), default=None,
                    help="start by imitating a rule (behaviour cloning with DAgger) instead of from scratch: "
                         "'template' (agents/my_agent.py's rule) or 'front' (it, and cells behind the front "
                         "feed it)")
    ap.add_argument("--passes", type=int, default=3, help="imitation passes, the first the rule's (default 3)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    th.set_num_threads(args.threads)
    if args.bench:
        bench()
        return

    rounds = 10 if args.quick else 150
    n_steps = rounds  # one match per env per rollout
    venv = VecNormalize(DummyVecEnv([make_env(rounds=rounds)] * args.envs), norm_obs=False, norm_reward=True,
                        gamma=0.95)
    model = MaskablePPO(
        ConvCellsPolicy, venv, n_steps=n_steps, batch_size=args.batch, n_epochs=args.epochs, gamma=0.95,
        gae_lambda=0.9, learning_rate=args.lr, ent_coef=0.0, clip_range=args.clip, max_grad_norm=0.5, verbose=0,
        seed=args.seed, policy_kwargs={"width": args.width, "layers": args.layers})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budget = 0.0 if args.quick else args.minutes * 60
    results = {"envs": args.envs, "threads": args.threads, "imitate": args.imitate}
    if args.imitate:
        start = time.perf_counter()
        imitate(model, TEACHERS[args.imitate], passes=1 if args.quick else args.passes,
                epochs=1 if args.quick else 8, rounds=rounds, log=lambda text: print(text, flush=True))
        results["imitation_seconds"] = round(time.perf_counter() - start, 1)
        for name, opponent in OPPONENTS:
            results[f"imitation_vs_{name}"] = play(model.policy, opponent, rounds=rounds)
            print(f"after imitation ({results['imitation_seconds']} s), against the {name}: "
                  f"{results[f'imitation_vs_{name}']}", flush=True)
    start = time.perf_counter()
    steps, chunk = 0, n_steps * args.envs
    shares = FinalShares()
    history = []
    while True:
        model.learn(chunk, reset_num_timesteps=False, callback=shares)
        steps += chunk
        elapsed = time.perf_counter() - start
        last = shares.shares[-args.envs:]
        history.append({"steps": steps, "seconds": round(elapsed, 1), "shares": [round(s, 2) for s in last]})
        print(f"{elapsed:6.0f} s  {steps:7d} steps  {steps / elapsed:5.1f} steps/s  "
              f"final shares of the last matches against the Council: {np.round(last, 2).tolist()}", flush=True)
        if elapsed >= budget:
            break
    train_seconds = time.perf_counter() - start
    th.save(model.policy.state_dict(), out / "policy.pt")
    model.save(out / "model.zip")

    results.update(steps=steps, train_seconds=round(train_seconds, 1), steps_per_s=round(steps / train_seconds, 1),
                   history=history)
    for name, opponent in OPPONENTS:
        results[f"vs_{name}"] = play(model.policy, opponent, rounds=rounds)
        print(f"against the {name}: {results[f'vs_{name}']}", flush=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
