// Filters the register table by kind, document and section (a prefix: "3.2.7" keeps 3.2.7.x).
document.addEventListener("DOMContentLoaded", () => {
  const form = document.querySelector("form.register-filter");
  if (!form) return;
  const rows = Array.from(document.querySelectorAll("table.register-table tbody tr"));
  const count = form.querySelector(".register-count");
  const apply = () => {
    const want = {};
    form.querySelectorAll("[data-filter]").forEach((el) => { want[el.dataset.filter] = el.value.trim(); });
    let shown = 0;
    rows.forEach((row) => {
      const ok = (!want.kind || row.dataset.kind === want.kind)
        && (!want.document || row.dataset.document === want.document)
        && (!want.section || row.dataset.section === want.section || row.dataset.section.startsWith(want.section + "."));
      row.classList.toggle("hidden", !ok);
      if (ok) shown += 1;
    });
    count.textContent = `${shown} of ${rows.length} entries`;
  };
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  apply();
});
