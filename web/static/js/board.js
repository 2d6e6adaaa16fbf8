/* The scoreboard (and /watch): read-only; renders every update of the view. */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const $ = (id) => document.getElementById(id);
  let view = null, link = null;

  link = S.connect("/board", {
    onHello: (hello) => {
      $("ssid").textContent = hello.ssid || "";
      $("password").textContent = hello.password || "";
      $("host-url").textContent = hello.host_url || "";
      document.querySelectorAll(".pin-row").forEach((n) => { n.hidden = !hello.pin; });
      $("pin").textContent = hello.pin || "";
    },
    onView: (v) => { view = v; render(); },
  });

  function render() {
    const battle = view.battle;
    $("waiting").hidden = !!battle;
    $("scoreboard").hidden = !battle || !!battle.finished;
    $("standings").hidden = !(battle && battle.finished);
    if (!battle) return;
    if (battle.finished) renderStandings();
    const q = view.question, th = view.theme;
    $("board-theme").replaceChildren(th ? el("span", { class: th.red ? "red" : "" }, th.name) : "");
    $("board-price").textContent = q && !q.over ? String(q.price) : "";
    $("board-players").replaceChildren(...view.players.map((p) => el("li", {
        class: "board-player" + (p.answering ? " answering" : "") + (p.answered ? " answered" : ""),
        style: "--led:" + (p.led || "#888"), dataset: { player: p.index } },
      el("span", { class: "led" }),
      el("span", { class: "name" }, p.name),
      el("span", { class: "score" }, String(p.score)))));
    S.renderPresses($("board-presses"), view);
    $("board-themes").replaceChildren(...(view.themes || []).map((th) => el("li", {
        class: "board-theme-chip" + (th.red ? " red" : "") + (th.current ? " current" : "") +
               (th.played.length === th.prices.length ? " done" : "") },
      el("span", { class: "theme-chip-name" }, th.name),
      el("span", { class: "pips" }, ...th.prices.map((price) => el("i", { class: th.played.includes(price) ? "played" : "" }))))));
  }

  function renderStandings() {
    $("standings-body").replaceChildren(...(view.standings || []).map((row) => el("tr", {},
      el("td", { class: "place" }, String(row.place)),
      el("td", { class: "name" }, row.name),
      el("td", { class: "score" }, String(row.score)),
      el("td", { class: "tiebreak" }, row.tiebreak || ""))));
  }

  function tick() {
    requestAnimationFrame(tick);
    if (view && view.battle && !view.battle.finished) S.drawCountdown($("board-countdown"), link, view);
  }
  requestAnimationFrame(tick);
})();
