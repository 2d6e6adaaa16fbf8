/* The stream overlay (OBS browser source, 1920x1080, transparent): renders every update of /overlay.
 * The layout is the URL's (?layout=lower-third|full|scores) unless the stream operator switched it
 * (POST /overlay/layout: hello.layout, then overlay_layout); "" gives the URL's back. */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const $ = (id) => document.getElementById(id);
  const body = document.body, fromUrl = body.dataset.layout, layouts = body.dataset.layouts.split(" ");
  let view = null, toldId = null, tellTimer = null;
  const ANNOUNCE_MS = 15000;

  function layout(chosen) {
    const name = layouts.includes(chosen) ? chosen : fromUrl;
    for (const other of layouts) body.classList.toggle("layout-" + other, other === name);
    body.dataset.layout = name;
  }

  const link = S.connect("/overlay", {
    onHello: (hello) => layout(hello.layout),
    onView: (v) => { view = v; render(); tell(); },
  });
  link.socket.on(S.events.overlay_layout, (chosen) => layout(chosen && chosen.layout));

  function render() {
    const battle = view.battle;
    $("ov").hidden = !battle;
    if (!battle) return;
    body.dataset.seq = String(link.seq);
    const q = view.question, th = view.theme, players = view.players || [];
    $("ov-theme").replaceChildren(th ? el("span", { class: th.red ? "red" : "" }, S.themeName(th.name, th.index, th.shootout)) : "");
    $("ov-price").textContent = q && !q.over ? String(q.price) : "";
    const answering = view.answerer !== null && view.answerer !== undefined ? players[view.answerer] : null;
    $("ov-answering").hidden = !answering;
    if (answering) {
      $("ov-answering").style.setProperty("--led", answering.led || "#888");
      $("ov-answering").querySelector(".name").textContent = answering.name;
    }
    $("ov-players").replaceChildren(...players.map((p) => el("li", {
        class: "ov-player" + (p.answering ? " answering" : "") + (p.answered ? " answered" : ""),
        style: "--led:" + (p.led || "#888"), dataset: { player: p.index } },
      el("i", { class: "led" }),
      el("span", { class: "name", title: p.name }, p.name),
      el("b", { class: "score" }, String(p.score)))));
    S.renderPresses($("ov-presses"), view);
    const finished = !!battle.finished;
    $("ov-standings").hidden = !finished;
    if (finished) $("ov-standings-list").replaceChildren(...(view.standings || []).map((row) => el("li", {},
      el("span", { class: "place" }, String(row.place)), el("span", { class: "name" }, row.name),
      el("b", { class: "score" }, String(row.score)))));
  }

  /* the press window's or the answer's countdown, as on the board */
  function tick() {
    requestAnimationFrame(tick);
    if (view && view.battle && !view.battle.finished) S.drawCountdown($("ov-countdown"), link, view);
  }
  requestAnimationFrame(tick);

  /* a correction or an appeal's decision, shown for ANNOUNCE_MS as on the board */
  function tell() {
    const a = view && view.announcement, box = $("ov-announce");
    if (!a) { box.hidden = true; toldId = null; return; }
    if (a.id === toldId) return;
    toldId = a.id;
    S.renderAnnouncement(box, a);
    box.hidden = false;
    clearTimeout(tellTimer);
    tellTimer = setTimeout(() => { box.hidden = true; }, ANNOUNCE_MS);
  }
})();
