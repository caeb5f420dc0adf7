#!/usr/bin/env python3
"""Train a legged robot to walk with PPO on impulse.envs.Locomotion (PyTorch, CPU).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_locomotion.py \
        --config examples/configs/anymal.json --time-limit 570 --out runs/anymal
    mpirun -n 2 /usr/bin/python3 examples/python/train_locomotion.py --mpi --config FILE --iterations 300

--config is a locomotion config (docs/bring_your_own_robot.md); the default is ANYmal's
(examples/configs/anymal.json).

PPO (Schulman et al. 2017) with GAE (Schulman et al. 2016), clipped surrogate, KL-adaptive learning
rate and time-limit bootstrapping (float32 by default, --dtype float64 for exactness). The
environment clips actions to its action space; a sample beyond a bound counts with the probability
of the whole tail it stands for (clipped action policy gradient, Fujita and Maeda 2018), since the
Gaussian density of the unclipped sample gives a biased gradient for a mean near the bound. The critic
is asymmetric (Pinto et al. 2018): it sees the policy's observation and the environment's
privileged observation (base velocity and height, feet swing times), which the robot's sensors do
not give; the policy sees the observation only (--no-privileged-critic: the critic too).
With --mpi, K ranks each step num_envs / K of the environments (environment k is the same on
every split: seeded by its global index), draw their slice of one global action-noise tensor, and
average gradients with allreduce; advantage statistics and the KL are global too. So K ranks
compute the same update as one process with the same seed and total environment count; only the
order of floating-point sums differs.

Outputs (--out DIR, rank 0): policy.pt (state dicts and settings), train_log.csv (one row per
iteration; `impulse plot DIR/train_log.csv` draws it), walk.imprec (one evaluation episode of the
final policy at the control rate; `impulse view DIR/walk.imprec` replays it) and eval.json (the
evaluation's figures). The evaluation runs --eval-envs fresh environments for one full episode of
the deterministic policy and prints
    eval: <N> envs, <T> s episodes, command <c> m/s, mean forward speed <v> m/s, mean |speed - command| <e> m/s, fell <K>
and the last line printed is
    final: return=<mean episode return> params=<sum of all policy parameters>
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time

# one BLAS thread per rank unless told otherwise (set before numpy and torch load OpenBLAS)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn

import impulse  # noqa: E402
import json  # noqa: E402

from impulse.envs import Locomotion, Reach, load_config  # noqa: E402

DEFAULT_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "anymal.json")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=DEFAULT_CONFIG, help="locomotion config (JSON); default: ANYmal's")
    p.add_argument("--iterations", type=int, default=300, help="PPO iterations")
    p.add_argument("--num-envs", type=int, default=256, help="environments in total (over all ranks)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mpi", action="store_true", help="split the environments over the MPI ranks (mpi4py)")
    p.add_argument("--threads", type=int, default=0, help="C++ threads per rank (0: hardware threads / ranks)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="PyTorch threads per rank (0: hardware threads / ranks; 2 were no faster here idle, "
                        "and 6x slower on a loaded machine)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                   help="the network's and the buffers' precision (the environments are float64)")
    p.add_argument("--steps", type=int, default=24, help="control steps per environment per iteration")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--gamma", type=float, default=None,
                   help="discount per control step; default 0.995 for locomotion (at 100 Hz a 2 s horizon, "
                        "legged_gym's 0.99 at 50 Hz) and 0.99 for reaching (a 1 s horizon: the value of a "
                        "target reached within the 2 s episode; with 0.995 a 10-minute run ended 20x farther from the "
                        "targets, docs/benchmarks.md)")
    p.add_argument("--entropy", type=float, default=0.005, help="entropy bonus coefficient")
    p.add_argument("--hidden", type=int, nargs="+", default=[128, 128])
    p.add_argument("--bound-loss", type=float, default=0.01,
                   help="penalty on the policy mean beyond the action bound, squared per action (the "
                        "environment clips actions there, so its reward gives the mean no gradient)")
    p.add_argument("--eval-envs", type=int, default=16, help="environments of the final evaluation (0: none)")
    p.add_argument("--out", default="", help="directory for policy.pt and train_log.csv (rank 0)")
    p.add_argument("--time-limit", type=float, default=0, help="stop after this many seconds (0: none)")
    p.add_argument("--no-privileged-critic", dest="privileged_critic", action="store_false",
                   help="the critic sees the policy's observation only")
    return p.parse_args(argv)


class Comm:
    """The few collectives PPO needs; a single process when mpi4py is not used."""

    def __init__(self, use_mpi: bool):
        self.mpi = None
        self.rank, self.size = 0, 1
        if use_mpi:
            from mpi4py import MPI
            self.mpi = MPI
            self.comm = MPI.COMM_WORLD
            self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()

    def sum(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        if self.mpi is None:
            return x.copy()
        out = np.empty_like(x)
        self.comm.Allreduce(x, out, op=self.mpi.SUM)
        return out

    def all_equal_check(self, value: float) -> float:
        if self.mpi is None:
            return value
        return self.comm.bcast(value, root=0)


def mlp(sizes, out, act=nn.ELU):
    layers, n = [], sizes[0]
    for h in sizes[1:]:
        layers += [nn.Linear(n, h), act()]
        n = h
    layers.append(nn.Linear(n, out))
    return nn.Sequential(*layers)


def log_prob_clipped(dist, act, low, high):
    """Log-probability of the actions the environment applies, clip(act, low, high), per sample:
    at a bound the probability mass of the tail beyond it, log P(a >= high) = log Phi(-(high - mu) / sigma)
    (Fujita and Maeda 2018, eq. 9), elsewhere the Gaussian density."""
    lp = dist.log_prob(act)
    lp = torch.where(act >= high, torch.special.log_ndtr((dist.mean - high) / dist.stddev), lp)
    lp = torch.where(act <= low, torch.special.log_ndtr((low - dist.mean) / dist.stddev), lp)
    return lp.sum(-1)


class ActorCritic(nn.Module):
    def __init__(self, obs_size, act_size, hidden, critic_obs_size=None):
        super().__init__()
        self.actor = mlp([obs_size] + hidden, act_size)
        self.critic = mlp([critic_obs_size or obs_size] + hidden, 1)
        self.log_std = nn.Parameter(torch.zeros(act_size))

    def value(self, critic_obs):
        return self.critic(critic_obs).squeeze(-1)

    def dist(self, obs):
        return torch.distributions.Normal(self.actor(obs), self.log_std.exp().expand(obs.shape[0], -1))


def is_reach(config):
    return load_config(config)[0].get("task", "locomotion") == "reach"


def make_env(config, n, threads, seed, first_env=0):
    """The environment the config's "task" names: "locomotion" (the default) or "reach"."""
    cls = Reach if is_reach(config) else Locomotion
    return cls(config, n, num_threads=threads, seed=seed, first_env=first_env)


def episode_steps(env):
    return env.max_episode_steps if isinstance(env, Reach) else env.task.settings.max_episode_steps


def evaluate_reach(policy, args, seed):
    """Deterministic policy on fresh arms for one full episode: the distance at its end."""
    env = Reach(args.config, args.eval_envs, num_threads=0, seed=seed + 1000003)
    obs, _ = env.reset()
    final = np.full(args.eval_envs, np.nan)
    for _ in range(env.max_episode_steps):
        with torch.no_grad():
            a = policy.actor(torch.tensor(obs, dtype=policy.log_std.dtype)).numpy()
        obs, _, term, trunc, info = env.step(a)
        if "final_distance" in info:
            done = info["_final_observation"] & np.isnan(final)
            final[done] = info["final_distance"][done]
    return {"envs": args.eval_envs, "final_distance": float(np.nanmean(final)),
            "max_final_distance": float(np.nanmax(final)), "fell": 0, "episode_s": env.max_episode_steps * env.control_dt}


def evaluate(policy, args, seed):
    """Deterministic policy on fresh environments for one full episode: forward speed and falls."""
    if is_reach(args.config):
        return evaluate_reach(policy, args, seed)
    env = Locomotion(args.config, args.eval_envs, num_threads=0, seed=seed + 1000003)
    obs, _ = env.reset()
    n = args.eval_envs
    alive = np.ones(n, dtype=bool)
    speed_sum, speed_n = np.zeros(n), np.zeros(n)
    cmd = np.array([env.task.command(i)[0] for i in range(n)])
    steps = env.task.settings.max_episode_steps
    for _ in range(steps):
        with torch.no_grad():
            a = policy.actor(torch.tensor(obs, dtype=policy.log_std.dtype)).numpy()
        # forward speed of the base in its heading frame, before the step's auto reset
        for i in np.nonzero(alive)[0]:
            r = env.task.world(int(i)).system(0)
            q, u = r.q, r.u
            w, x, y, z = q[3:7]
            fwd = np.array([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)])
            speed_sum[i] += float(fwd @ u[0:3])
            speed_n[i] += 1
        obs, _, term, trunc, _ = env.step(a)
        alive &= ~term
        alive &= ~trunc  # an episode ends at the time limit: stop measuring
    speed = speed_sum / np.maximum(speed_n, 1)
    return {"fell": int(n - np.sum(speed_n >= steps)), "envs": n, "speed": float(np.mean(speed)),
            "command": float(np.mean(cmd)), "error": float(np.mean(np.abs(speed - cmd))),
            "episode_s": steps * env.control_dt}


def record_episode(policy, args, seed, path):
    """One episode of the deterministic policy on one robot, recorded for `impulse view`."""
    env = make_env(args.config, 1, 1, seed + 1000003)
    obs, _ = env.reset()
    world = env.world(0) if isinstance(env, Reach) else env.task.world(0)
    with impulse.Recorder(path, world) as rec:
        for _ in range(episode_steps(env)):
            rec.record(world)  # the state at the start of the control step (the last one resets)
            with torch.no_grad():
                a = policy.actor(torch.tensor(obs, dtype=policy.log_std.dtype)).numpy()
            obs, _, term, trunc, _ = env.step(a)
            if term[0] or trunc[0]:
                break
        return rec.frames


def main(argv=None):
    args = parse_args(argv)
    comm = Comm(args.mpi)
    if args.num_envs % comm.size:
        sys.exit(f"error: --num-envs {args.num_envs} is not divisible by the {comm.size} MPI ranks")
    n_local = args.num_envs // comm.size
    lo, hi = comm.rank * n_local, (comm.rank + 1) * n_local
    threads = args.threads or max(1, (os.cpu_count() or 1) // comm.size)
    torch.set_num_threads(args.torch_threads or threads)
    torch.manual_seed(args.seed)
    dtype = torch.float32 if args.dtype == "float32" else torch.float64

    env = make_env(args.config, n_local, threads, args.seed, lo)
    obs_size, act_size = env.single_observation_space.shape[0], env.single_action_space.shape[0]
    priv_size = env.privileged_size if args.privileged_critic else 0
    cobs_size = obs_size + priv_size
    act_bound = torch.from_numpy(np.asarray(env.single_action_space.high, dtype=np.float64)).to(dtype)

    def critic_obs(o, p):  # the critic's input: observation, then the privileged observation
        return torch.from_numpy(np.concatenate([o, p], axis=1) if priv_size else o).to(dtype)

    policy = ActorCritic(obs_size, act_size, list(args.hidden), cobs_size).to(dtype)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    noise_gen = torch.Generator().manual_seed(args.seed + 1)  # one global noise stream, sliced per rank
    perm_gen = torch.Generator().manual_seed(args.seed + 2)

    if args.gamma is None:
        args.gamma = 0.99 if is_reach(args.config) else 0.995
    gamma, lam, clip, vcoef, ecoef, kl_target, max_grad = args.gamma, 0.95, 0.2, 1.0, args.entropy, 0.01, 1.0
    T, N = args.steps, n_local
    buf_obs = torch.zeros(T, N, obs_size, dtype=dtype)
    buf_cobs = torch.zeros(T, N, cobs_size, dtype=dtype)
    buf_act = torch.zeros(T, N, act_size, dtype=dtype)
    buf_logp = torch.zeros(T, N, dtype=dtype)
    buf_mu = torch.zeros(T, N, act_size, dtype=dtype)
    buf_std = torch.zeros(T, act_size, dtype=dtype)
    buf_val = torch.zeros(T + 1, N, dtype=dtype)
    buf_rew = torch.zeros(T, N, dtype=dtype)
    buf_done = torch.zeros(T, N, dtype=dtype)

    obs_np, _ = env.reset(seed=args.seed)
    if hasattr(env, "spread_episodes"):  # tasks without terminations: episodes out of step
        env.spread_episodes()
    obs = torch.tensor(obs_np, dtype=dtype)
    cobs = critic_obs(obs_np, env.privileged_observation()[0])
    running_return = np.zeros(N)
    recent_returns = []  # (iteration, return) of finished episodes, this rank
    log_rows, lr = [], args.lr
    t_start = time.time()
    it = 0
    for it in range(args.iterations):
        t_it = time.time()
        # rollout
        with torch.no_grad():
            for t in range(T):
                dist = policy.dist(obs)
                noise = torch.randn(args.num_envs, act_size, generator=noise_gen, dtype=dtype)[lo:hi]
                act = dist.mean + dist.stddev * noise
                buf_obs[t], buf_cobs[t], buf_act[t] = obs, cobs, act
                buf_logp[t] = log_prob_clipped(dist, act, -act_bound, act_bound)
                buf_mu[t], buf_std[t] = dist.mean, dist.stddev[0]
                buf_val[t] = policy.value(cobs)
                o, r, term, trunc, info = env.step(act.numpy())
                priv, final_priv = env.privileged_observation()
                rew = torch.tensor(r, dtype=dtype)
                running_return += r
                if trunc.any():  # time limit: bootstrap with the value of the final observation
                    idx = np.nonzero(trunc)[0]
                    fin = critic_obs(info["final_observation"][idx], final_priv[idx])
                    rew[idx] += gamma * policy.value(fin)
                done = np.logical_or(term, trunc)
                for i in np.nonzero(done)[0]:
                    recent_returns.append((it, float(info["episode"]["r"][i])))
                    running_return[i] = 0
                buf_rew[t] = rew
                buf_done[t] = torch.from_numpy(done.astype(np.float64)).to(dtype)
                obs = torch.tensor(o, dtype=dtype)
                cobs = critic_obs(o, priv)
            buf_val[T] = policy.value(cobs)
            # GAE per environment (independent of the split over ranks)
            adv = torch.zeros(T, N, dtype=dtype)
            last = torch.zeros(N, dtype=dtype)
            for t in reversed(range(T)):
                nonterminal = 1.0 - buf_done[t]
                delta = buf_rew[t] + gamma * buf_val[t + 1] * nonterminal - buf_val[t]
                last = delta + gamma * lam * nonterminal * last
                adv[t] = last
            ret = adv + buf_val[:T]
            s = comm.sum(np.array([adv.sum().item(), (adv * adv).sum().item(), adv.numel()]))
            mean = s[0] / s[2]
            std = math.sqrt(max(s[1] / s[2] - mean * mean, 0.0)) + 1e-8
            adv = (adv - mean) / std
        t_roll = time.time() - t_it

        # update: minibatches are sets of time steps x all environments (of all ranks)
        params = list(policy.parameters())
        mb_steps = T // args.minibatches
        n_mb_global = mb_steps * args.num_envs
        kl_mean = 0.0
        for _ in range(args.epochs):
            perm = torch.randperm(T, generator=perm_gen)
            for m in range(args.minibatches):
                ts = perm[m * mb_steps:(m + 1) * mb_steps]
                o_mb = buf_obs[ts].reshape(-1, obs_size)
                a_mb = buf_act[ts].reshape(-1, act_size)
                dist = policy.dist(o_mb)
                logp = log_prob_clipped(dist, a_mb, -act_bound, act_bound)
                ratio = torch.exp(logp - buf_logp[ts].reshape(-1))
                adv_mb = adv[ts].reshape(-1)
                surr = torch.max(-adv_mb * ratio, -adv_mb * torch.clamp(ratio, 1 - clip, 1 + clip))
                v = policy.value(buf_cobs[ts].reshape(-1, cobs_size))
                vloss = (v - ret[ts].reshape(-1)) ** 2
                ent = dist.entropy().sum(-1)
                # a mean beyond the clip bound acts as the bound itself: without a pull back it
                # drifts where the reward cannot see it, and the policy's exploration dies there
                over = (torch.relu(dist.mean - act_bound) ** 2 + torch.relu(-act_bound - dist.mean) ** 2).sum(-1)
                # sums over this rank's samples divided by the global minibatch size: the
                # allreduced gradient is the gradient of the global mean loss
                loss = (surr.sum() + vcoef * 0.5 * vloss.sum() - ecoef * ent.sum() + args.bound_loss * over.sum()) / n_mb_global
                opt.zero_grad()
                loss.backward()
                flat = torch.cat([p.grad.reshape(-1) for p in params]).numpy()
                flat = comm.sum(flat)
                k = 0
                for p in params:
                    n = p.numel()
                    p.grad.copy_(torch.from_numpy(flat[k:k + n]).reshape(p.shape).to(dtype))
                    k += n
                nn.utils.clip_grad_norm_(params, max_grad)
                with torch.no_grad():  # KL(old || new) of the Gaussians, summed over this rank's samples
                    mu_o, sd_o = buf_mu[ts].reshape(-1, act_size), buf_std[ts].repeat_interleave(N, 0)
                    mu_n, sd_n = dist.mean, dist.stddev
                    kl_local = (torch.log(sd_n / sd_o) + (sd_o ** 2 + (mu_o - mu_n) ** 2) / (2 * sd_n ** 2)
                                - 0.5).sum().item()
                kl = comm.sum(np.array([kl_local]))[0] / n_mb_global
                # KL-adaptive learning rate (as in Rudin et al. 2022)
                if kl > 2 * kl_target:
                    lr = max(1e-5, lr / 1.5)
                elif kl < kl_target / 2:
                    lr = min(1e-2, lr * 1.5)
                for g in opt.param_groups:
                    g["lr"] = lr
                opt.step()
                kl_mean += kl / (args.epochs * args.minibatches)
        # log (global figures)
        recent = [r for (i, r) in recent_returns if i > it - 20]
        recent_returns = [(i, r) for (i, r) in recent_returns if i > it - 20]
        g = comm.sum(np.array([buf_rew.sum().item(), buf_rew.numel(), sum(recent), len(recent),
                               running_return.sum(), N]))
        mean_reward = g[0] / g[1]
        ep_return = g[2] / g[3] if g[3] > 0 else g[4] / g[5]
        row = {"iteration": it, "time_s": time.time() - t_start, "rollout_s": t_roll,
               "update_s": time.time() - t_it - t_roll, "mean_reward": mean_reward, "episode_return": ep_return,
               "episodes": int(g[3]), "kl": kl_mean, "lr": lr, "action_std": policy.log_std.exp().mean().item()}
        log_rows.append(row)
        if comm.rank == 0 and (it % 10 == 0 or it == args.iterations - 1):
            print(f"it {it:4d}  t {row['time_s']:7.1f}s  reward/step {mean_reward:+.5f}  return {ep_return:8.3f} "
                  f"({int(g[3])} episodes)  kl {kl_mean:.4f}  lr {lr:.1e}  std {row['action_std']:.3f}", flush=True)
        stop = args.time_limit > 0 and time.time() - t_start > args.time_limit
        if comm.all_equal_check(stop):
            break

    train_s = time.time() - t_start
    params_sum = sum(p.detach().sum().item() for p in policy.actor.parameters()) + policy.log_std.sum().item()
    params_sum += sum(p.detach().sum().item() for p in policy.critic.parameters())
    if comm.rank == 0:
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            torch.save({"policy": policy.state_dict(), "hidden": list(args.hidden), "obs_size": obs_size,
                        "critic_obs_size": cobs_size, "act_size": act_size, "args": vars(args), "config": env.config},
                       os.path.join(args.out, "policy.pt"))
            with open(os.path.join(args.out, "train_log.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(log_rows[0].keys()))
                w.writeheader()
                w.writerows(log_rows)
            frames = record_episode(policy, args, args.seed, os.path.join(args.out, "walk.imprec"))
            print(f"recorded {frames} frames of one evaluation episode to {os.path.join(args.out, 'walk.imprec')}",
                  flush=True)
        if args.eval_envs > 0:
            e = evaluate(policy, args, args.seed)
            if "final_distance" in e:
                print(f"eval: {e['envs']} envs, {e['episode_s']:g} s episodes, mean final distance "
                      f"{e['final_distance']:.4f} m, largest {e['max_final_distance']:.4f} m", flush=True)
            else:
                print(f"eval: {e['envs']} envs, {e['episode_s']:g} s episodes, command {e['command']:.2f} m/s, "
                      f"mean forward speed {e['speed']:.2f} m/s, mean |speed - command| {e['error']:.3f} m/s, "
                      f"fell {e['fell']}", flush=True)
            if args.out:
                e.update({"config": os.path.abspath(args.config), "iterations": it + 1,
                          "train_time_s": train_s, "num_envs": args.num_envs, "seed": args.seed})
                with open(os.path.join(args.out, "eval.json"), "w") as f:
                    json.dump(e, f, indent=2)
        print(f"final: return={ep_return:.6f} params={params_sum:.10g}", flush=True)


if __name__ == "__main__":
    main()
