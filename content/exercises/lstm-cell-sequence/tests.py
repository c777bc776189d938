import torch
from torch import nn

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def weights(d, inp, hid):
    bound = hid**-0.5
    return [
        d.tensor((4 * hid, inp), low=-bound, high=bound),
        d.tensor((4 * hid, hid), low=-bound, high=bound),
        d.tensor((4 * hid,), low=-bound, high=bound),
        d.tensor((4 * hid,), low=-bound, high=bound),
    ]


def sequence(d, *, low=1, high=8):
    b, inp, hid, t = d.size(1, 3), d.size(1, 6), d.size(1, 7), d.size(low, high)
    x = d.tensor((b, t, inp), low=-2, high=2)
    h0, c0 = d.tensor((b, hid), low=-1, high=1), d.tensor((b, hid), low=-1, high=1)
    return case(x, h0, c0, *weights(d, inp, hid))


def one_step(d):
    b, inp, hid = d.size(1, 4), d.size(1, 6), d.size(1, 7)
    x = d.tensor((b, inp), low=-2, high=2)
    h, c = d.tensor((b, hid), low=-1, high=1), d.tensor((b, hid), low=-2, high=2)
    return case(x, h, c, *weights(d, inp, hid))


def torch_cell(c):
    x, h, cell, w_ih, w_hh, b_ih, b_hh = c.args
    module = nn.LSTMCell(x.shape[1], h.shape[1], dtype=x.dtype)
    with torch.no_grad():
        for name, value in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"),
                               (w_ih, w_hh, b_ih, b_hh)):  # fmt: skip
            getattr(module, name).copy_(value)
    h2, c2 = module(x, (h, cell))
    return h2.detach(), c2.detach()


def torch_lstm(c):
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = c.args
    module = nn.LSTM(x.shape[2], h0.shape[1], batch_first=True, dtype=x.dtype)
    with torch.no_grad():
        for name, value in zip(("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
                               (w_ih, w_hh, b_ih, b_hh)):  # fmt: skip
            getattr(module, name).copy_(value)
    out, (h, cell) = module(x, (h0[None], c0[None]))
    return out.detach(), (h[0].detach(), cell[0].detach())


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def run(sol, x, h0, c0, w):
    """The learner's lstm on x, its answer checked to be (output, (h_n, c_n))."""
    answer = sol.call("lstm", x, h0, c0, *w)
    if not isinstance(answer, (tuple, list)) or len(answer) != 2 or not isinstance(
        answer[1], (tuple, list)
    ) or len(answer[1]) != 2:
        fail("lstm must return (output, (h_n, c_n))")
    batch, steps, hid = x.shape[0], x.shape[1], h0.shape[1]
    out = shaped(answer[0], (batch, steps, hid), "output")
    return out, shaped(answer[1][0], h0.shape, "h_n"), shaped(answer[1][1], c0.shape, "c_n")


def halves_chain(sol, c):
    """Running the first steps, then the rest from the states they left, equals one run."""
    x, h0, c0, *w = c.args
    split = x.shape[1] // 2
    whole, h, cell = run(sol, x, h0, c0, w)
    first, h1, c1 = run(sol, x[:, :split], h0, c0, w)
    second, h2, c2 = run(sol, x[:, split:], h1, c1, w)
    expect_close(torch.cat([first, second], dim=1), whole, "outputs of two chained halves")
    expect_close(h2, h, "h after two chained halves")
    expect_close(c2, cell, "c after two chained halves")
    expect_close(whole[:, -1], h, "the last output against h_n")


def saturated_forget_gate_remembers(sol, c):
    """Forget gate fully open, input gate shut: the cell state passes through unchanged."""
    x, h, cell, w_ih, w_hh, b_ih, b_hh = c.args
    hid = h.shape[1]
    b_ih = b_ih.clone()
    b_ih[:hid] = -60.0  # input gate
    b_ih[hid : 2 * hid] = 60.0  # forget gate
    answer = sol.call("lstm_cell", x, h, cell, w_ih, w_hh, b_ih, b_hh)
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        fail("lstm_cell must return (h, c)")
    c2 = answer[1]
    expect_close(c2, cell, "c after a step with the forget gate open and the input gate shut")


def timing_case(d):
    """Batch 4, 16 steps, 16 inputs, 32 hidden units, for the performance test."""
    x = d.tensor((4, 16, 16), low=-2, high=2)
    h0, c0 = d.tensor((4, 32), low=-1, high=1), d.tensor((4, 32), low=-1, high=1)
    return case(x, h0, c0, *weights(d, 16, 32))


DECLARATIONS = [
    values("one step equals nn.LSTMCell", "lstm_cell", one_step, expect=torch_cell,
           visible=True, description="weights injected into nn.LSTMCell"),
    values("a sequence equals nn.LSTM", "lstm", sequence, expect=torch_lstm, visible=True,
           description="single layer, batch_first, weights injected"),
    values("drawn sequences equal nn.LSTM", "lstm", sequence, expect=torch_lstm, cases=4),
    values("drawn steps equal nn.LSTMCell", "lstm_cell", one_step, expect=torch_cell, cases=4),
    values("float64 against the reference", "lstm", sequence, dtypes=("float64",)),
    shapes("output and state shapes", "lstm", sequence, dtypes=("float32", "float64")),
    gradients("gradients through one step", "lstm_cell", one_step),
    gradients("gradients through the whole sequence", "lstm",
              lambda d: sequence(d, low=2, high=5)),
    prop("two chained halves equal one run", halves_chain, lambda d: sequence(d, low=2, high=10)),
    prop("an open forget gate keeps the cell state", saturated_forget_gate_remembers, one_step),
    edge("a sequence of one step", "lstm", lambda d: sequence(d, high=1), expect=torch_lstm,
         cases=1),
    nontrivial("the outputs are not zero", "lstm", sequence),
    performance("time against the reference", "lstm", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes the recurrence itself", visible=True,
             description="no nn.LSTM, nn.LSTMCell or torch.lstm"),
]
