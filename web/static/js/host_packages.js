/* The host page's question packages: a battle's themes from a package (chosen, or the next unplayed N, with
   spare themes for red or shoot-out play picked beforehand), and the reading view beside the controls: the
   question being read and its answer (comment, source) in large type, the next one ready. host.js tells this
   file of its link, its views and a setup about to be sent (svoyak:host-* events). */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const $ = (id) => document.getElementById(id);
  let packages = [];

  // ---------------------------------------------------------------- setup: themes from a package
  document.addEventListener("svoyak:host-hello", (e) => {
    const link = e.detail;
    link.socket.emit("packages", {}, (ack) => {
      packages = ack && ack.ok ? ack.packages : [];
      fillPackages();
    });
  });

  function chosenPackage() { return packages.find((p) => p.id === $("package").value) || null; }
  function how() { return (document.querySelector("input[name=package-how]:checked") || {}).value || "next"; }

  function fillPackages() {
    const keep = $("package").value;
    $("package").replaceChildren(el("option", { value: "" }, t("setup.package_none")),
      ...packages.map((p) => el("option", { value: p.id }, p.title + " · " + p.themes.length)));
    if (packages.some((p) => p.id === keep)) $("package").value = keep;
    shapeThemes();
  }

  function shapeThemes() {
    const p = chosenPackage();
    $("package-how").hidden = !p;
    $("package-themes").hidden = !p;
    $("theme-list").classList.toggle("from-package", !!p);
    if (!p) { $("package-themes").replaceChildren(); $("package-hint").textContent = ""; nameRows(null); return; }
    const chosen = how() === "chosen";
    // a final round's theme (one question for stakes) is never an ordinary theme of the battle: a spare at most
    $("package-themes").replaceChildren(...p.themes.map((theme) => el("li", { class: [theme.played ? "played" : "",
      theme.final ? "final" : ""].join(" ").trim() },
      el("label", {}, el("select", { dataset: { theme: theme.number }, onchange: hint },
        el("option", { value: "" }, "—"),
        chosen && !theme.final ? el("option", { value: "play" }, t("setup.package_play")) : null,
        el("option", { value: "spare" }, t("setup.package_spare"))),
        " " + (theme.number + 1) + ". " + theme.name + (theme.final ? " (" + t("setup.package_final") + ")" : "") +
        (theme.played ? " (" + t("setup.package_played") + ")" : "")))));
    hint();
  }

  /* The form's theme rows show the package's names (typed names would not be used); the red flags stay. */
  function nameRows(names) {
    [...$("theme-list").children].forEach((row, i) => {
      const input = row.querySelector("input[name=theme]");
      if (!input) return;
      if (!input.dataset.placeholder) input.dataset.placeholder = input.placeholder;
      input.disabled = !!names;
      input.placeholder = names ? (names[i] || "—") : input.dataset.placeholder;
    });
  }

  function picks(kind) {
    return [...$("package-themes").querySelectorAll("select")].filter((s) => s.value === kind).map((s) => Number(s.dataset.theme));
  }

  /* what the battle will play, in words, before it starts */
  function hint() {
    const p = chosenPackage();
    if (!p) return;
    const count = $("theme-list").children.length;
    const spare = picks("spare");
    let regular = picks("play");
    if (how() === "next") regular = p.themes.filter((th) => !th.played && !th.final && !spare.includes(th.number)).slice(0, count).map((th) => th.number);
    const names = (list) => list.map((n) => p.themes[n].name).join(", ");
    nameRows(regular.map((n) => p.themes[n].name));
    $("package-hint").textContent = t("setup.package_will_play") + " " + (names(regular) || "—") +
      (spare.length ? "; " + S.word("setup.package_spares", { count: spare.length }) + " " + names(spare) : "");
  }

  $("package").addEventListener("change", shapeThemes);
  document.querySelectorAll("input[name=package-how]").forEach((r) => r.addEventListener("change", shapeThemes));
  // the rows change with the count and the regulation: say again what the battle plays
  new MutationObserver(hint).observe($("theme-list"), { childList: true });

  document.addEventListener("svoyak:host-setup", (e) => {
    const p = chosenPackage();
    if (!p) return;
    const choice = { id: p.id, spare: picks("spare") };
    if (how() === "chosen") choice.themes = picks("play");
    e.detail.package = choice;
  });

  // ---------------------------------------------------------------- the reading view
  function question(block, label) {
    const where = [block.theme_name, block.price ? String(block.price) : ""].filter(Boolean).join(" · ");
    return [
      el("div", { class: "where" }, (label ? label + ": " : "") + where),
      el("div", { class: "text" }, block.text),
      el("div", { class: "answer" }, t("reading.answer") + ": " + block.answer),
      block.comment ? el("div", { class: "note" }, t("reading.comment") + ": " + block.comment) : null,
      block.source ? el("div", { class: "note" }, t("reading.source") + ": " + block.source) : null,
      block.theme_authors ? el("div", { class: "note authors" }, t("reading.theme_authors") + ": " + block.theme_authors) : null,
      block.author && block.author !== block.theme_authors
        ? el("div", { class: "note authors" }, t("reading.author") + ": " + block.author) : null,
    ].filter(Boolean);
  }

  document.addEventListener("svoyak:host-view", (e) => {
    const view = e.detail, r = view && view.reading;
    const panel = $("reading");
    const shown = !!(r && (r.current || r.next)) && !(view.battle && view.battle.finished);
    panel.hidden = !shown;
    $("run").classList.toggle("with-reading", shown);
    if (!shown) return panel.replaceChildren();
    const parts = [];
    if (r.package) parts.push(el("div", { class: "where package" }, t("reading.package") + ": " + r.package));
    const current = r.current;
    if (current) {
      parts.push(...question(current, current.over ? t("reading.was") : t("reading.now")));
      const canShow = view.allowed && view.allowed.announce === null;
      if (current.over && canShow) {
        parts.push(el("button", { class: "cmd", id: "show-answer", onclick: () => {
          const button = document.querySelector(".extras [data-cmd=announce]");
          if (button) button.click();
        } }, t("reading.show_answer")));
      }
    }
    if (r.next) {
      parts.push(el("div", { class: "next" }, el("b", {}, t("reading.next") + ": "),
        [r.next.theme_name, r.next.price ? String(r.next.price) : ""].filter(Boolean).join(" · ") + " — " + r.next.text));
    }
    panel.replaceChildren(...parts);
  });
})();
