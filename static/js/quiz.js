// A quiz in progress: the countdown (drawn from the seconds the server says are left, so a
// reload or a wrong browser clock changes nothing), its warnings, and the keyboard.
(function () {
  "use strict";
  var clock = document.getElementById("quiz-clock");
  var text = document.getElementById("quiz-clock-text");
  var announce = document.getElementById("quiz-clock-announce");
  var submit = document.getElementById("quiz-submit");

  function format(seconds) {
    var s = Math.max(0, Math.ceil(seconds));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  if (clock && text) {
    var end = performance.now() + parseFloat(clock.dataset.secondsLeft) * 1000;
    var warned = false;
    var lastSaid = null;
    var tick = function () {
      var left = (end - performance.now()) / 1000;
      text.textContent = format(left);
      if (left <= 60 && !warned) {
        warned = true;
        clock.classList.add("is-warning");
        var warning = document.getElementById("quiz-clock-warning");
        if (warning) warning.hidden = false;
        announce.textContent = "One minute left.";
      }
      // Screen readers hear the time politely at whole minutes, not every second.
      var minute = Math.ceil(left / 60);
      if (left > 60 && minute !== lastSaid && Math.ceil(left) % 60 === 0) {
        lastSaid = minute;
        announce.textContent = minute + " minutes left.";
      }
      if (left <= 0) {
        // A coding round's form also carries the editor's code (static/js/exercise.js).
        announce.textContent = document.getElementById("quiz-clock-warning")
          ? "Time is up: the code in your editor is being submitted."
          : "Time is up: your answers are being scored.";
        submit.requestSubmit();
        return;
      }
      window.setTimeout(tick, 250);
    };
    tick();
  }

  // A mock interview's prompt: its own timer, which may run over (shown, never enforced).
  var promptTimer = document.getElementById("prompt-timer");
  if (promptTimer) {
    var promptText = document.getElementById("prompt-timer-text");
    var promptSay = document.getElementById("prompt-timer-announce");
    var promptEnd = performance.now() + parseFloat(promptTimer.dataset.seconds) * 1000;
    var promptWarned = false;
    var promptTick = function () {
      var left = (promptEnd - performance.now()) / 1000;
      if (left >= 0) {
        promptText.textContent = format(left);
      } else {
        promptText.textContent = "+" + format(-left) + " over";
        promptTimer.classList.add("is-warning");
        if (!promptWarned) {
          promptWarned = true;
          promptSay.textContent = "Time for this prompt is up; wrap up your answer.";
        }
      }
      window.setTimeout(promptTick, 250);
    };
    promptTick();
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"))) return;
    var question = document.getElementById("question");
    if (!question) return;
    if (/^[1-4]$/.test(event.key)) {
      var radio = question.querySelector('input[type=radio][data-key="' + event.key + '"]');
      if (radio) {
        radio.checked = true;
        radio.focus();
        event.preventDefault();
      }
    } else if (event.key === "Enter") {
      var form = question.querySelector("form.quiz-answer");
      if (form && form.querySelector("input[type=radio]:checked")) {
        event.preventDefault();
        form.requestSubmit();
      }
    } else if (event.key === "n") {
      var next = document.getElementById("quiz-next") || document.getElementById("mock-next");
      if (next) {
        event.preventDefault();
        next.click();
      }
    }
  });

  // After htmx swaps the question in, keyboard and screen-reader focus moves to it.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "question") {
      var heading = document.getElementById("question-title");
      if (heading) {
        heading.setAttribute("tabindex", "-1");
        heading.focus();
      }
    }
  });
  // Keys work from here on (a test waits for this before pressing them).
  document.documentElement.dataset.quiz = "ready";
})();
