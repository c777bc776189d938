import torch

from sandbox.grading import api_rule, case, edge, expect_close, fail, performance, prop, shapes
from sandbox.grading import sequence, values


def problem(d, *, total=None, at=None):
    """Data, two sets of weights (the run's, and another for the trainer that resumes), two
    seeds, the number of steps and where the checkpoint is taken."""
    d_in, hidden, d_out = d.size(1, 6), d.size(2, 9), d.size(1, 3)
    n = d.size(5, 24)

    def weights():
        return [d.weights(d_in, hidden), d.tensor((hidden,), low=-0.3, high=0.3),
                d.weights(hidden, d_out), d.tensor((d_out,), low=-0.3, high=0.3)]

    steps = total if total is not None else d.integer(5, 9)
    checkpoint_at = at if at is not None else d.integer(1, steps - 1)
    return case(data={
        "weights": weights(), "other_weights": weights(),
        "x": d.tensor((n, d_in), normal=True), "y": d.tensor((n, d_out), normal=True),
        "seed": d.integer(0, 10_000), "other_seed": d.integer(10_001, 20_000),
        "batch_size": d.integer(1, 6), "lr": d.choice([1e-2, 3e-2, 0.1]),
        "total": steps, "at": checkpoint_at,
    })


def new_trainer(sol, c, other=False):
    data = c.data
    return sol.new("Trainer", data["other_weights" if other else "weights"], data["x"],
                   data["y"], batch_size=data["batch_size"], lr=data["lr"],
                   seed=data["other_seed" if other else "seed"])


def uninterrupted(sol, c):
    """Every step's loss, then the final weights, of one run that is never stopped."""
    t = new_trainer(sol, c)
    losses = [sol.method(t, "train_step") for _ in range(c.data["total"])]
    return [torch.stack(losses), sol.method(t, "weights")]


def uninterrupted_defaults(sol, c):
    """As uninterrupted, with batch_size, lr and seed left to the given defaults."""
    data = c.data
    t = sol.new("Trainer", data["weights"], data["x"], data["y"])
    losses = [sol.method(t, "train_step") for _ in range(data["total"])]
    return [torch.stack(losses), sol.method(t, "weights")]


def weights_are_snapshots(sol, c):
    """The weights taken after some steps, kept in the trainer's process while it trains on,
    still hold the values they had when taken."""
    t = new_trainer(sol, c)
    for _ in range(c.data["at"]):
        sol.method(t, "train_step")
    taken = sol.method(t, "weights")
    kept = sol.method_ref(t, "weights")
    for _ in range(c.data["total"] - c.data["at"]):
        sol.method(t, "train_step")
    later = sol.get(kept)
    if not isinstance(later, (list, tuple)) or len(later) != len(taken):
        fail(f"weights() gave {len(taken)} tensors, then {type(later).__name__}")
    for i, (w, expected) in enumerate(zip(later, taken)):
        expect_close(w, expected, f"parameter {i} as taken before more steps")


def resumed(sol, c):
    """Train to the checkpoint, take it; build another trainer (other weights, other seed,
    one step taken so its state is stirred), load the checkpoint there and finish the run.
    Returns the losses after resuming, the final weights and the step count."""
    t = new_trainer(sol, c)
    for _ in range(c.data["at"]):
        sol.method(t, "train_step")
    checkpoint = sol.method(t, "state_dict")
    other = new_trainer(sol, c, other=True)
    sol.method(other, "train_step")
    sol.method(other, "load_state_dict", checkpoint)
    losses = [sol.method(other, "train_step") for _ in range(c.data["total"] - c.data["at"])]
    lost = torch.stack(losses) if losses else torch.zeros(0)
    return [lost, sol.method(other, "weights"), sol.get(other, "step")]


def resume_equals_uninterrupted(sol, c):
    whole = uninterrupted(sol, c)
    losses, weights, step = resumed(sol, c)
    expect_close(losses, whole[0][c.data["at"]:], "the losses after resuming", scale=1)
    for i, (w, expected) in enumerate(zip(weights, whole[1])):
        expect_close(w, expected, f"final parameter {i} of the resumed run")
    if step != c.data["total"]:
        fail(f"after resuming and finishing, step is {step}, expected {c.data['total']}")


def kept_checkpoint_resumes(sol, c):
    """A checkpoint kept in the trainer's process while that trainer trains on (as a caller
    keeps one in memory) still resumes the run from where it was taken."""
    whole = uninterrupted(sol, c)
    t = new_trainer(sol, c)
    for _ in range(c.data["at"]):
        sol.method(t, "train_step")
    kept = sol.method_ref(t, "state_dict")
    for _ in range(c.data["total"] - c.data["at"]):
        sol.method(t, "train_step")
    other = new_trainer(sol, c, other=True)
    sol.method(other, "load_state_dict", kept)
    losses = [sol.method(other, "train_step") for _ in range(c.data["total"] - c.data["at"])]
    expect_close(torch.stack(losses), whole[0][c.data["at"]:],
                 "the losses after resuming from a checkpoint kept while training went on",
                 scale=1)


def loads_into_itself(sol, c):
    """Loading a trainer's own checkpoint into it changes nothing that follows."""
    plain = uninterrupted(sol, c)
    t = new_trainer(sol, c)
    losses = []
    for _ in range(c.data["total"]):
        sol.method(t, "load_state_dict", sol.method(t, "state_dict"))
        losses.append(sol.method(t, "train_step"))
    expect_close(torch.stack(losses), plain[0], "losses with a save and load before each step")


def session(sol, c):
    """A trainer and the checkpoint last taken of it (the first taken before any step)."""
    t = new_trainer(sol, c)
    return {"trainer": t, "checkpoint": sol.method(t, "state_dict")}


def saved(sol, s, c, k):
    """A move: take a checkpoint, through the wire, and keep it; it answers nothing."""
    s["checkpoint"] = sol.method(s["trainer"], "state_dict")


def loaded(sol, s, c, k):
    """A move: load the checkpoint last taken back into the same trainer; its step after."""
    sol.method(s["trainer"], "load_state_dict", s["checkpoint"])
    return sol.get(s["trainer"], "step")


MOVES = {
    "train_step": lambda sol, s, c, k: sol.method(s["trainer"], "train_step"),
    "weights": lambda sol, s, c, k: sol.method(s["trainer"], "weights"),
    "state_dict": saved,
    "load_state_dict": loaded,
}


def checkpoint_is_plain(sol, c):
    t = new_trainer(sol, c)
    sol.method(t, "train_step")
    state = sol.method(t, "state_dict")
    if not isinstance(state, dict):
        fail(f"state_dict returned {type(state).__name__}, not a dict")
    return [sol.method(t, "train_step")]


def timed_checkpoint(d):
    """A timed call takes a checkpoint, without arguments. The case carries only the seed that
    the setup draws the trainer's weights and data from."""
    return case(data={"seed": d.integer(0, 10_000)})


def trainer_under_way(sol, c):
    """The performance test's setup, outside the clock: a trainer of 16 -> 128 -> 4 features
    on 64 examples, one step in, so that the optimiser has its moments to save."""
    g = torch.Generator().manual_seed(c.data["seed"])
    sizes = [(128, 16), (128,), (4, 128), (4,)]
    weights = [(torch.rand(s, generator=g) - 0.5) / 4 for s in sizes]
    trainer = sol.new("Trainer", weights, torch.randn(64, 16, generator=g),
                      torch.randn(64, 4, generator=g), batch_size=8, lr=1e-2,
                      seed=c.data["seed"])  # fmt: skip
    sol.method(trainer, "train_step")
    return trainer


DECLARATIONS = [
    values("an uninterrupted run matches the reference", uninterrupted, problem, visible=True,
           cases=2, description="the given train_step, unchanged: losses and final weights"),
    values("a resumed run matches the reference's", resumed, problem, visible=True, cases=2,
           description="checkpoint after some steps, resume in another trainer, finish"),
    prop("resuming gives the uninterrupted run exactly", resume_equals_uninterrupted, problem,
         cases=3, description="losses, final weights and step count"),
    edge("checkpoint at a learning-rate drop", resumed, lambda d: problem(d, total=8, at=3),
         cases=2, description="StepLR halves the rate every 3 steps"),
    edge("checkpoint before the first step", resumed, lambda d: problem(d, total=4, at=0),
         cases=1),
    edge("checkpoint after the last step", resumed, lambda d: problem(d, total=4, at=4),
         cases=1),
    values("an uninterrupted run with the default settings", uninterrupted_defaults,
           lambda d: problem(d, total=5), cases=2,
           description="Trainer(weights, x, y): batch_size, lr and seed left to their defaults"),
    prop("weights taken mid-run do not follow later steps", weights_are_snapshots,
         lambda d: problem(d, total=5, at=2), cases=1),
    prop("a checkpoint kept in memory does not follow later steps", kept_checkpoint_resumes,
         lambda d: problem(d, total=5, at=2), cases=1),
    prop("saving and loading in place changes nothing", loads_into_itself,
         lambda d: problem(d, total=5), cases=2),
    sequence("steps, checkpoints and loads back in a drawn order", session, MOVES, problem,
             length=8, description="a checkpoint taken mid-run changes nothing, and loading "
             "it back into the same trainer rewinds the run to it"),
    shapes("state_dict returns a dict that can be sent", checkpoint_is_plain, problem, cases=1),
    performance("time against the reference", "state_dict", timed_checkpoint, calls=4,
                setup=trainer_under_way,
                description="taking a checkpoint of a trainer one step in (a 16 -> 128 -> 4 "
                "model, AdamW, StepLR and both generators), the checkpoint sent back; "
                "reported with its spread, not graded in this exercise"),
    api_rule("restores state rather than reseeding", visible=True,
             description="no new seed drawn: torch.seed, torch.random.seed or torch.cuda.manual_seed"),
]
