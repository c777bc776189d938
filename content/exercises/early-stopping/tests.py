import math

import torch

from sandbox.grading import case, edge, expect_close, fail, nontrivial, performance
from sandbox.grading import prop, sequence, shapes, values


def model_state(d):
    """A small model's state_dict: a weight, a bias and an integer buffer."""
    n, m = d.size(1, 6), d.size(1, 5)
    return {"fc.weight": d.tensor((m, n), normal=True), "fc.bias": d.tensor((m,), normal=True),
            "steps": d.integers((), 0, 100)}  # fmt: skip


def curve(d, steps, mode):
    """A validation curve on a grid of 1/8: it improves, stalls, ties its best exactly and
    worsens, so that equalities with best - min_delta happen in floating point exactly."""
    level = d.integer(8, 24)
    out = []
    for _ in range(steps):
        level += d.choice([-3, -2, -1, -1, 0, 0, 1, 2])
        out.append(level / 8 if mode == "min" else -level / 8 + 4)
    return out


def problem(d, *, steps=None, mode=None, patience=None, min_delta=None, nans=0, every_state=True):
    n = steps if steps is not None else d.size(4, 14)
    mode = mode or d.choice(["min", "max"])
    metrics = curve(d, n, mode)
    for _ in range(nans):
        metrics[d.integer(0, n - 1)] = math.nan
    with_state = [every_state or d.choice([True, False]) for _ in range(n)]
    states = [model_state(d) for _ in range(n)]
    settings = {"patience": patience if patience is not None else d.integer(1, 4),
                "min_delta": min_delta if min_delta is not None else d.choice([0.0, 0.125, 0.25]),
                "mode": mode}  # fmt: skip
    return case(data={"metrics": metrics, "states": states, "with_state": with_state,
                      "settings": settings})  # fmt: skip


def nan_first(d):
    """The first metric is NaN: best stays at its start until a real value arrives."""
    c = problem(d, patience=d.integer(2, 4))
    c.data["metrics"][0] = math.nan
    return c


def best_state_floats(sol, c):
    return [v.double() for v in run(sol, c)[-1].values()]


def checked_stop(stop, k):
    if not isinstance(stop, bool):
        fail(f"step {k} returned a {type(stop).__name__}, not a bool")
    return stop


def run(sol, c, *, as_tensor=False):
    """Every step's answer and counters, then best_state after the last step."""
    es = sol.new("EarlyStopping", **c.data["settings"])
    out = []
    for k, (m, s, given) in enumerate(zip(c.data["metrics"], c.data["states"],
                                          c.data["with_state"], strict=True)):  # fmt: skip
        metric = torch.tensor(m, dtype=torch.float64) if as_tensor else m
        stop = sol.method(es, "step", metric, s if given else None)
        out.append([checked_stop(stop, k), sol.get(es, "best"), sol.get(es, "best_epoch"),
                    sol.get(es, "bad_epochs")])  # fmt: skip
    out.append(sol.get(es, "best_state"))
    return out


def run_tensor_metrics(sol, c):
    return run(sol, c, as_tensor=True)


def trusted(c):
    """The statement's rules, written out in the grader."""
    st = c.data["settings"]
    sign = 1.0 if st["mode"] == "min" else -1.0
    best, best_epoch, bad, kept = math.inf * sign, -1, 0, None
    out = []
    for k, (m, s, given) in enumerate(zip(c.data["metrics"], c.data["states"],
                                          c.data["with_state"], strict=True)):  # fmt: skip
        if not math.isnan(m) and sign * (best - m) > st["min_delta"]:
            best, best_epoch, bad = m, k, 0
            kept = {n: t.clone() for n, t in s.items()} if given else None
        else:
            bad += 1
        out.append([bad >= st["patience"], best, best_epoch, bad])
    out.append(kept)
    return out


def default_settings(sol, c):
    """EarlyStopping(patience) alone: min_delta 0 and mode "min"."""
    es = sol.new("EarlyStopping", c.data["settings"]["patience"])
    out = []
    for k, m in enumerate(c.data["metrics"]):
        stop = sol.method(es, "step", m)
        out.append([checked_stop(stop, k), sol.get(es, "best"), sol.get(es, "bad_epochs")])
    return out


def falling(d):
    """A loss falling by 1/16 most epochs, with ties: every change counts when min_delta is 0."""
    c = problem(d, mode="min", steps=d.size(6, 14))
    level = d.integer(32, 48)
    metrics = []
    for _ in range(len(c.data["metrics"])):
        level -= d.choice([0, 1, 1, 1])
        metrics.append(level / 16)
    c.data["metrics"] = metrics
    return c


def no_graph_kept(sol, c):
    """The caller's state requires grad (parameters do): best_state's copies must not."""
    es = sol.new("EarlyStopping", 2)
    kept = sol.keep({k: v.clone() for k, v in c.data["states"][0].items()})
    floats = [k for k, v in c.data["states"][0].items() if v.is_floating_point()]
    for k in floats:
        sol.method(sol.index(kept, k), "requires_grad_")
    sol.method(es, "step", 1.0, kept)
    best_state = sol.method_ref(es, "__getattribute__", "best_state")
    for k in floats:
        if sol.get(sol.index(best_state, k), "requires_grad"):
            fail(f"best_state[{k!r}] requires grad: it is part of the caller's autograd graph")


def trusted_defaults(c):
    c2 = case(data={**c.data, "settings": {**c.data["settings"], "min_delta": 0.0,
                                           "mode": "min"}})  # fmt: skip
    return [[r[0], r[1], r[3]] for r in trusted(c2)[:-1]]


def fresh(sol, c):
    """The attributes before any step."""
    es = sol.new("EarlyStopping", **c.data["settings"])
    return [sol.get(es, "best"), sol.get(es, "best_epoch"), sol.get(es, "bad_epochs"),
            sol.get(es, "best_state")]  # fmt: skip


def trusted_fresh(c):
    return [math.inf if c.data["settings"]["mode"] == "min" else -math.inf, -1, 0, None]


def copy_is_independent(sol, c):
    """After an improving step, the caller trains on in place: best_state must not follow."""
    es = sol.new("EarlyStopping", 2)
    state = c.data["states"][0]
    kept = sol.keep({k: v.clone() for k, v in state.items()})
    sol.method(es, "step", 1.0, kept)
    for k in state:
        sol.method(sol.index(kept, k), "add_", 1)
        sol.method(sol.index(kept, k), "mul_", 3)
    best_state = sol.get(es, "best_state")
    if not isinstance(best_state, dict) or set(best_state) != set(state):
        fail(f"best_state should be a dict with the keys {sorted(state)}")
    for k, v in state.items():
        expect_close(best_state[k], v, f"best_state[{k!r}] after the caller changed its tensors")
    sol.method(es, "step", 2.0, kept)  # not an improvement: the copy stays as it was
    for k, v in sol.get(es, "best_state").items():
        expect_close(v, state[k], f"best_state[{k!r}] after a worse epoch")


def invalid_settings_refused(sol, c):
    refused = [{"patience": 0}, {"patience": -1}, {"patience": 3, "min_delta": -0.1},
               {"patience": 3, "mode": "maximum"}]  # fmt: skip
    answers = sol.batch([{"op": "new", "target": "EarlyStopping", "args": [], "kwargs": kw}
                         for kw in refused])  # fmt: skip
    for kw, (ok, answer) in zip(refused, answers, strict=True):
        if ok or not str(answer).startswith("ValueError"):
            fail(f"EarlyStopping(**{kw}) should raise ValueError, got "
                 f"{'an object' if ok else answer}")


def stops_exactly_after_patience(sol, c):
    """A curve that improves once, then never: True first at the patience-th bad step."""
    p = c.data["settings"]["patience"]
    es = sol.new("EarlyStopping", p)
    answers = [sol.method(es, "step", v) for v in [1.0] + [1.0 + k for k in range(p + 2)]]
    if answers != [False] * p + [True] * 3:
        fail(f"patience={p}: step answered {answers}")


def last_state(sol, c):
    return run(sol, c)[-1]


def stepped(with_state):
    """A move: step with the k-th metric (and state); the answer and every counter."""

    def move(sol, es, c, k):
        m = c.data["metrics"][k % len(c.data["metrics"])]
        state = c.data["states"][k % len(c.data["states"])] if with_state else None
        stop = sol.method(es, "step", m, state)
        return [checked_stop(stop, k), sol.get(es, "best"), sol.get(es, "best_epoch"),
                sol.get(es, "bad_epochs")]  # fmt: skip

    return move


def read_best_state(sol, es, c, k):
    return sol.get(es, "best_state")


MOVES = {
    "step with a state": stepped(True),
    "step without a state": stepped(False),
    "read best_state": read_best_state,
}


def build(sol, c):
    return sol.new("EarlyStopping", **c.data["settings"])


# The performance test's model: a 256x256 layer and its bias.
TIMED = {"weight": torch.randn(256, 256), "bias": torch.randn(256)}


def timed_step(d):
    """One epoch's loss, falling most epochs, and the model's state_dict."""
    return case(d.number(0.0, 1.0), TIMED)


def ready(sol, c):
    return sol.new("EarlyStopping", 5, min_delta=1e-3)


DECLARATIONS = [
    values("a loss curve, patience and min_delta", run, lambda d: problem(d, mode="min"),
           expect=trusted, visible=True, cases=3,
           description="mode min: every step's answer, best, best_epoch, bad_epochs, then "
           "best_state"),
    values("an accuracy curve, mode max", run, lambda d: problem(d, mode="max"), expect=trusted,
           visible=True, cases=3),
    values("drawn curves match the reference", run,
           lambda d: problem(d, steps=d.size(10, 30), every_state=False), cases=4),
    edge("a change of exactly min_delta is no improvement", run,
         lambda d: problem(d, min_delta=0.125, steps=d.size(8, 20)), expect=trusted, cases=4,
         description="best - metric == min_delta (mode min) keeps the old best"),
    edge("ties with the best, min_delta 0", run,
         lambda d: problem(d, min_delta=0.0, steps=d.size(8, 20)), expect=trusted, cases=3),
    edge("NaN metrics count as no improvement", run,
         lambda d: problem(d, nans=d.integer(1, 3), patience=d.integer(2, 5)), expect=trusted,
         cases=4),
    edge("a NaN first metric", run,
         nan_first,
         expect=trusted, cases=2),
    edge("metrics as 0-dim tensors", run_tensor_metrics, problem, expect=trusted, cases=2),
    edge("patience 1", run, lambda d: problem(d, patience=1), expect=trusted, cases=2),
    edge("improving steps without a state set best_state to None", run,
         lambda d: problem(d, every_state=False, steps=d.size(8, 16)), expect=trusted, cases=3),
    edge("min_delta and mode left at their defaults", default_settings, falling,
         expect=trusted_defaults, cases=3),
    prop("best_state holds no autograd graph", no_graph_kept, problem, cases=1),
    values("the attributes before any step", fresh, problem, expect=trusted_fresh, cases=2),
    sequence("steps with and without states in a drawn order", build, MOVES,
             lambda d: problem(d, steps=10, every_state=True), length=9),
    prop("best_state is an independent copy", copy_is_independent, problem, cases=2),
    prop("stops at the patience-th step without improvement", stops_exactly_after_patience,
         problem, cases=2, visible=True),
    prop("invalid settings raise ValueError", invalid_settings_refused, problem, cases=1),
    shapes("best_state keeps shapes and dtypes", last_state, problem,
           dtypes=("float32", "float64"), cases=2),
    nontrivial("best_state is not zero", best_state_floats, problem),
    performance("time against the reference", "step", timed_step, setup=ready,
                description="one step with the state_dict of a 256x256 linear layer, copied "
                "on improving epochs; reported with its spread, not graded in this exercise"),
]
