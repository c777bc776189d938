"""The default checks every exercise gets (sandbox/grading/side_effects.py), each shown to
catch its bug class in an exercise whose own tests never looked for it, with a message in the
learner's words, and to spare what an exercise declares."""

from __future__ import annotations

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import GradingVerdict, TestStatus


def failures(exercise: Exercise, code: str) -> list[str]:
    report = grade_in_process(exercise, code, seed=0)
    return [t.message for t in report.tests if t.status is not TestStatus.PASS]


def test_an_input_changed_in_place_fails_with_a_message_that_says_so(
    loaded: dict[str, Exercise],
) -> None:
    exercise = loaded["stable-softmax"]
    code = exercise.reference.replace(
        "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = shifted.exp()",
        "    shifted = x.sub_(x.amax(dim=dim, keepdim=True))\n    e = shifted.exp()",
    )
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("your function changed the tensor it was given: argument 1 of softmax" in m
               for m in messages), messages  # fmt: skip


def test_an_answer_that_is_the_input_itself_fails(loaded: dict[str, Exercise]) -> None:
    exercise = loaded["inverted-dropout"]
    code = exercise.reference.replace("        return x.clone()", "        return x")
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("dropout returned a tensor that shares memory with argument 1" in m
               for m in messages), messages  # fmt: skip


def test_a_backward_that_writes_into_grad_output_fails(loaded: dict[str, Exercise]) -> None:
    exercise = loaded["layernorm-backward"]
    code = exercise.reference.replace(
        "        g = grad_y * weight", "        g = grad_y.mul_(weight)"
    )
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("your backward wrote into the incoming gradient" in m for m in messages), messages


def test_a_module_buffer_that_keeps_a_graph_fails(loaded: dict[str, Exercise]) -> None:
    """Through the audit directly: a kept module whose buffer has a grad_fn."""
    import torch

    from sandbox.grading.compare import Mismatch
    from sandbox.grading.side_effects import check
    from sandbox.grading.solution import LocalSolution

    source = (
        "import torch\nclass Norm(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('running_mean', torch.zeros(3))\n"
        "    def forward(self, x):\n"
        "        self.running_mean = 0.9 * self.running_mean + 0.1 * x.mean(0)\n"
        "        return x - self.running_mean\n"
    )
    learner = LocalSolution.from_source(source)
    norm = learner.new("Norm")
    learner.method(norm, "forward", torch.randn(4, 3, requires_grad=True))
    with pytest.raises(Mismatch, match="running_mean` of your Norm still holds an autograd graph"):
        check(learner, {}, {})


def test_declared_side_effects_are_spared(loaded: dict[str, Exercise]) -> None:
    exercise = loaded["kaiming-xavier-init"]
    assert "kaiming_normal_" in exercise.config.side_effects
    assert grade_in_process(exercise, exercise.reference, seed=0).verdict is GradingVerdict.PASSED


def test_an_audit_finds_nothing_twice(loaded: dict[str, Exercise]) -> None:
    import torch

    from sandbox.grading.solution import LocalSolution

    learner = LocalSolution.from_source("def f(x):\n    x += 1\n    return x * 2\n")
    learner.call("f", torch.zeros(2))
    assert learner.request("audit", {}) == ["changed:f:args[0]"]
    assert learner.request("audit", {}) == []


def test_a_solution_under_no_grad_is_told_so(loaded: dict[str, Exercise]) -> None:
    exercise = loaded["layernorm-backward"]
    code = exercise.reference.replace(
        "    return LayerNormFunction.apply(x, weight, bias, eps)",
        "    with torch.no_grad():\n        return LayerNormFunction.apply(x, weight, bias, eps)",
    )
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("no gradient reached argument 1: is the code under torch.no_grad()" in m
               for m in messages), messages  # fmt: skip


def test_a_solution_that_needs_contiguous_inputs_is_told_so(loaded: dict[str, Exercise]) -> None:
    """Inputs arrive as a caller may pass them: the same values in a non-contiguous layout."""
    from tests.grading.test_outside_bugs import BUGS

    exercise = loaded["conv2d-backward"]
    code = (BUGS / "conv2d-backward" / "view_fails_on_noncontiguous_grad_out.py").read_text()
    messages = failures(exercise, code)
    assert any("in a non-contiguous layout (a transposed or sliced tensor" in m
               for m in messages), messages  # fmt: skip


def test_a_state_dict_edited_in_place_fails(loaded: dict[str, Exercise]) -> None:
    """The caller's state dict, updated as well as returned (grad-scaler's new state)."""
    exercise = loaded["grad-scaler-step"]
    bug = PROJECT_ROOT / "tests/grading/outside_bugs/grad-scaler-step/caller_state_mutated.py"
    messages = failures(exercise, bug.read_text(encoding="utf-8"))
    assert any("your function changed what it was given: argument 3 of scaler_step (a list "
               "or dict) was edited in place" in m for m in messages), messages  # fmt: skip


def test_running_statistics_with_a_graph_fail_once_inputs_require_grad(
    loaded: dict[str, Exercise],
) -> None:
    """A plain object's tensor attribute holding a graph, seen on the case whose inputs
    arrive requiring grad, as a model's activations do."""
    exercise = loaded["batchnorm2d-running-stats"]
    bug = PROJECT_ROOT / (
        "tests/grading/outside_bugs/batchnorm2d-running-stats/"
        "running_stats_keep_autograd_history.py"
    )
    messages = failures(exercise, bug.read_text(encoding="utf-8"))
    assert any("case 2 of" in m and "the buffer `running_mean` of your BatchNorm2d still "
               "holds an autograd graph" in m for m in messages), messages  # fmt: skip


def test_an_exercise_may_skip_inputs_that_require_grad_with_a_reason(
    loaded: dict[str, Exercise],
) -> None:
    config = loaded["kv-cache-decoding"].config
    assert "inference" in config.inputs_without_grad
    assert grade_in_process(loaded["kv-cache-decoding"], loaded["kv-cache-decoding"].reference,
                            seed=0).verdict is GradingVerdict.PASSED  # fmt: skip


def test_a_sequence_draws_every_call_and_names_the_one_that_differs(
    loaded: dict[str, Exercise],
) -> None:
    """kv-cache's forward that runs through the cache: only steps interleaved with a full
    forward show it, and the message names the call."""
    from sandbox.grading import Draw
    from sandbox.grading.sequences import sequence

    test = next(t for t in loaded["kv-cache-decoding"].tests() if t.name.startswith("steps, "))
    assert test.inputs is not None
    for seed in range(5):
        calls = test.inputs(Draw(seed)).data["calls"]
        assert {"step", "forward", "reset"} <= set(calls) and len(calls) == 7
    with pytest.raises(ValueError, match="cannot call each"):
        sequence("too short", lambda sol, c: None, {"a": print, "b": print}, test.inputs, length=1)
    bug = (
        PROJECT_ROOT / "tests/grading/outside_bugs/kv-cache-decoding/forward_goes_through_cache.py"
    )
    messages = failures(loaded["kv-cache-decoding"], bug.read_text(encoding="utf-8"))
    assert any("call " in m and "(step)" in m for m in messages), messages


def test_a_weight_in_a_dict_of_parameters_gets_its_gradient_checked(
    loaded: dict[str, Exercise],
) -> None:
    """pre_ln_block(x, params, ...): a block that detaches one weight of the dict gives x
    the right gradient, and only the check of every floating tensor in the dict sees it."""
    exercise = loaded["pre-ln-transformer-block"]
    code = exercise.reference.replace("def pre_ln_block(x, params, n_heads, causal=False):\n",
                                      "def pre_ln_block(x, params, n_heads, causal=False):\n"
                                      "    params = {**params, 'linear1.weight': "
                                      "params['linear1.weight'].detach()}\n")  # fmt: skip
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("no gradient reached argument 2 (its part .linear1.weight)" in m
               for m in messages), messages  # fmt: skip


def test_gradients_come_back_in_the_shape_of_the_arguments() -> None:
    import torch

    from sandbox.grading import leaves

    x, w = torch.ones(2), torch.ones(3)
    args = (x, {"w": w, "n": 3, "mask": torch.ones(2, dtype=torch.bool)}, [w], 4)
    assert [p for p, _ in leaves.floating(args)] == ["args[0]", "args[1].w", "args[2][0]"]
    answer = leaves.answered(args, iter(["gx", "gw", "gl"]))
    assert answer == ["gx", {"w": "gw", "n": None, "mask": None}, ["gl"], None]
    grads = [torch.zeros(2), {"w": torch.zeros(3)}, "not a list", None]
    assert [g is None for _, g in leaves.paired(args, grads)] == [False, False, True]


def test_a_backward_that_views_its_incoming_gradient_fails_when_it_comes_from_a_graph(
    loaded: dict[str, Exercise],
) -> None:
    """A custom backward fed from a larger graph: its grad_output arrives non-contiguous (as
    after a transpose downstream) or expanded (as from out.sum()), not fresh and contiguous."""
    exercise = loaded["gelu-autograd-function"]
    code = exercise.reference.replace(
        "        return grad_output * (cdf + x * pdf)",
        "        return (grad_output.view(-1) * (cdf + x * pdf).view(-1)).view(x.shape)",
    )
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("with the gradient arriving from a larger graph (a non-contiguous grad_output"
               in m and "view" in m for m in messages), messages  # fmt: skip


def test_the_same_tensor_passed_twice_is_checked_against_the_reference(
    loaded: dict[str, Exercise],
) -> None:
    """attention(x, x, x) as self-attention calls it: a solution that borrows q in place (and
    restores it) also scales k when the two are one tensor."""
    exercise = loaded["masked-attention"]
    code = exercise.reference.replace(
        "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])",
        "    q.mul_(2.0)\n"
        "    scores = q @ k.transpose(-2, -1) / (2.0 * math.sqrt(q.shape[-1]))\n"
        "    q.div_(2.0)",
    )
    assert code != exercise.reference
    messages = failures(exercise, code)
    assert any("with the same tensor passed as argument 1 and argument 2" in m
               for m in messages), messages  # fmt: skip
