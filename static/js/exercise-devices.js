// One submission graded on the CPU and the GPU at once (backend "both"): a row per device with
// its verdict, score, time against the reference and the tolerance its comparisons allowed.
// static/js/exercise.js starts it and hands it each result; the GPU's run is followed here.
window.BackpropDevices = (function () {
  "use strict";
  const section = document.getElementById("device-compare");
  const rows = document.getElementById("device-rows");
  if (!section || !rows) return null;
  const VERDICTS = { passed: "Passed", failed: "Failed", error: "Error", timeout: "Timed out" };
  const NAMES = { cpu: "CPU", cuda: "GPU" };
  let sources = [];

  function cell(text, className) {
    const td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  function rowFor(backend) {
    let tr = rows.querySelector(`tr[data-backend="${backend}"]`);
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.backend = backend;
      rows.append(tr);
    }
    return tr;
  }

  function waiting(backend) {
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = NAMES[backend] || backend;
    rowFor(backend).replaceChildren(th, cell("Grading…", "muted"), cell(""), cell(""), cell(""));
  }

  function absent(backend, why) {
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = NAMES[backend] || backend;
    const td = cell(`${NAMES[backend] || backend} row absent: ${why}`, "device-absent");
    td.colSpan = 4;
    rowFor(backend).replaceChildren(th, td);
  }

  function show(result) {
    if (section.hidden || !result.backend) return;
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = `${NAMES[result.backend] || result.backend}${result.device ? " · " + result.device : ""}`;
    const perf = result.performance;
    const time = perf
      ? `${perf.ratio.toFixed(2)}× (${perf.learner_ms.toFixed(2)} ms vs ${perf.reference_ms.toFixed(2)} ms)`
      : "Not measured (a passing submit of an exercise with a performance test measures it)";
    const tolerances = Object.entries(result.tolerances || {}).map(([d, t]) => `${d}: ${t}`).join("; ");
    const verdict = cell(VERDICTS[result.verdict] || result.verdict || "Finished", `verdict-cell verdict-${result.verdict}`);
    const score = cell(result.score === null || result.score === undefined ? "" : `${Math.round(result.score)}%`, "num");
    rowFor(result.backend).replaceChildren(th, verdict, score, cell(time), cell(tolerances || "None compared"));
  }

  function follow(slug, run) {
    const base = `/api/exercises/${slug}/submissions/${run.id}`;
    const source = new EventSource(`${base}/events`);
    sources.push(source);
    source.addEventListener("result", (e) => { source.close(); show(JSON.parse(e.data)); });
    source.onerror = () => {
      source.close();
      fetch(base).then((r) => r.json()).then((r) => { if (r.status === "done") show(r); }).catch(() => {});
    };
  }

  // A new submission: `accepted` is the API's answer (paired: the GPU's run; absent: why not).
  function start(slug, accepted) {
    sources.forEach((s) => s.close());
    sources = [];
    rows.replaceChildren();
    section.hidden = false;
    waiting("cpu");
    if (accepted.paired) {
      waiting("cuda");
      follow(slug, accepted.paired);
    }
    Object.entries(accepted.absent || {}).forEach(([backend, why]) => absent(backend, why));
  }

  function stop() {
    sources.forEach((s) => s.close());
    sources = [];
    section.hidden = true;
  }

  return { start, show, stop };
})();
