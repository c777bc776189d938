// Runs in <head> before first paint: apply the remembered theme, else follow the system.
(function () {
  try {
    var saved = localStorage.getItem("backprop-theme");
    if (saved === "light" || saved === "dark") {
      document.documentElement.setAttribute("data-theme", saved);
    }
  } catch (e) { /* storage disabled: follow the system */ }
})();
