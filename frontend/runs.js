/* Runs tables: live status by polling the API every 2 s for rows that are not finished. */
(function () {
  "use strict";
  const TERMINAL = ["succeeded", "failed", "cancelled"];
  async function poll() {
    const rows = Array.from(document.querySelectorAll("table[data-live-runs] tr[data-run]"))
      .filter((tr) => !TERMINAL.includes(tr.querySelector("[data-field=status]").textContent.trim()));
    for (const tr of rows.slice(0, 50)) {
      try {
        const r = await (await fetch("/api/runs/" + tr.dataset.run + "/")).json();
        const st = tr.querySelector("[data-field=status]");
        st.textContent = r.status; st.className = "status s-" + r.status;
        tr.querySelector("[data-field=progress]").value = r.progress;
      } catch (e) { /* transient */ }
    }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
  const form = document.getElementById("compare-form");
  if (form) form.addEventListener("submit", () => {
    document.getElementById("compare-runs").value = Array.from(document.querySelectorAll("input.pick:checked")).map((c) => c.value).join(",");
  });
})();
