/* Paper page: preset buttons fill the derived form. */
(function () {
  "use strict";
  document.querySelectorAll(".presets").forEach((box) => {
    const presets = JSON.parse(box.dataset.presets), prefix = box.dataset.prefix;
    const form = box.parentElement.querySelector("form.run-form");
    box.querySelectorAll("button.preset").forEach((btn) => btn.addEventListener("click", () => {
      form.reset();
      for (const [k, v] of Object.entries(presets[btn.dataset.preset])) {
        const el = form.elements[k === "seed" ? prefix + "-seed" : prefix + "-" + k];
        if (!el) continue;
        if (el.type === "checkbox") el.checked = !!v;
        else el.value = Array.isArray(v) ? v.join(", ") : String(v);
      }
      box.querySelectorAll("button.preset").forEach((b) => b.classList.toggle("active", b === btn));
    }));
  });
})();
