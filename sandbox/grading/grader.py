"""The last step of the grader's jail in a graded run (sandbox/README.md, "Grading").

It reads its payload from the memfd the worker handed this jail alone: the exercise's
configuration, reference and tests, the learner's source, the seed, the mode and the
learner's device. It runs the tests with the reference in this process and the learner's
code across the socket, and writes one JSON line per result to its stdout, which only the
worker reads:

    {"test": {...TestResult...}}      as each test ends
    {"report": {...GradingReport...}} last, when grading finished
    {"fault": "..."}                  instead, when our side failed (never the learner's)

What the reference or the tests print goes to stderr (the worker's log), never to stdout."""

from __future__ import annotations

import json
import os
import socket
import sys
import traceback
from typing import Any

from sandbox.grading.exercise import Config, declarations
from sandbox.grading.remote import RemoteSolution
from sandbox.grading.runner import Grading, grade
from sandbox.grading.solution import LocalSolution
from sandbox.protocol.grading import GradingRequest, TestResult
from sandbox.user_code import _text_stream


def _emit(message: dict[str, Any]) -> None:
    data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
    while data:
        data = data[os.write(RESULTS_FD, data) :]


RESULTS_FD = 3  # fd 1 is moved here at start; Python's own stdout then goes to stderr


def run(payload_text: str, learner_fd: int, threads: int) -> int:
    os.dup2(1, RESULTS_FD)
    os.dup2(2, 1)
    sys.stdout, sys.stderr = _text_stream(1), _text_stream(2)
    try:
        import torch

        torch.set_num_threads(threads)
        payload = json.loads(payload_text)
        request = GradingRequest.from_json(payload["grading"])
        config = Config.from_json(request.config)
        tests = declarations(request.tests)
        reference = LocalSolution.from_source(request.reference, "reference.py")
        learner = RemoteSolution(
            socket.socket(fileno=learner_fd), payload["device"], config.call_seconds
        )
        problem = learner.load()
        grading = Grading(
            tests=tests,
            learner=learner,
            reference=reference,
            learner_source=payload["code"],
            tolerances=config.tolerances,
            forbid=config.forbid,
            forbid_reason=config.forbid_reason,
            side_effects=config.side_effects,
            may_alias=config.may_alias,
            inputs_without_grad=config.inputs_without_grad,
            seed=int(payload["seed"]),
            mode=request.mode,
            performance=config.performance,
        )

        def on_result(result: TestResult) -> None:
            _emit({"test": result.to_json()})

        report = grade(grading, on_result, problem)
        _emit({"report": report.to_json()})
        return 0
    except BaseException:  # our side failed: say so, the worker reports it
        _emit({"fault": traceback.format_exc()[-4000:]})
        return 1
