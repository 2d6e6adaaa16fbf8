/* The scoreboard (and /watch): read-only; renders every update of the view. */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const $ = (id) => document.getElementById(id);
  let view = null, link = null, pinTimer = null;

  link = (S.spectate || S.connect)("/board", {  // phones: the spectators' fast path (spectate.js)
    onHello: (hello) => {
      $("ssid").textContent = hello.ssid || "";
      $("password").textContent = hello.password || "";
      $("host-url").textContent = hello.host_url || "";
    },
    // Only the box's own HDMI board hears this, and only when the host button is held at the box (lost PIN)
    onPinShown: (shown) => {
      $("pin").textContent = shown.pin;
      $("pin-asked").textContent = S.word("board.pin_asked", { shown: Math.round(shown.shown_ms / 1000) });
      $("board-pin").hidden = false;
      clearTimeout(pinTimer);
      pinTimer = setTimeout(() => { $("board-pin").hidden = true; $("pin").textContent = ""; }, shown.shown_ms);
    },
    onView: (v, event, seq, changed) => { const before = shown; view = v; announce(event, before); render(changed); tell(); },
  });

  /* A correction or an appeal's decision, told to the hall: who, which question, the scores from and to,
     answers it voided, the sections. Shown for ANNOUNCE_MS (again after a reconnect while it holds). */
  const ANNOUNCE_MS = 15000;
  let toldId = null, tellTimer = null;
  function tell() {
    const a = view && view.announcement, box = $("board-announce");
    if (!a) { box.hidden = true; toldId = null; return; }
    if (a.id === toldId) return;
    toldId = a.id;
    S.renderAnnouncement(box, a);
    // under the theme and the price, never over them
    box.style.top = Math.ceil($("scoreboard").hidden ? 0 : document.querySelector(".board-head").getBoundingClientRect().bottom + 8) + "px";
    box.hidden = false;
    $("board-result").hidden = true;
    clearTimeout(tellTimer);
    tellTimer = setTimeout(() => { box.hidden = true; }, ANNOUNCE_MS);
  }

  /* How a question ended, said for a few seconds: «+50 Вера», «Минус: Вера», «Вопрос снят», «Время!».
     ``shown`` keeps who answered and the price from the view before the update (the event has neither). */
  let shown = { answerer: null, price: null }, resultTimer = null;
  function remember() {
    shown = { answerer: view.answerer, price: view.question ? view.question.price : null,
              answered: (view.players || []).some((p) => p.answered) };
  }
  function announce(event, before) {
    if (!event) return;
    if (["PriceAnnounced", "ReadingStarted", "ThemeStarted", "ActionUndone"].includes(event.type)) {
      $("board-result").hidden = true;  // the next question (or the host took it back): the result is old news
      return;
    }
    const name = (i) => (i !== null && i !== undefined && view.players[i] ? view.players[i].name : "");
    let text = null, kind = "";
    if (event.type === "AnswerJudged") {
      const who = name(before.answerer);
      text = event.correct ? t("board.result_right").replace("{price}", before.price || "").replace("{name}", who)
                           : t("board.result_wrong").replace("{name}", who);
      kind = event.correct ? "right" : "wrong";
    } else if (event.type === "TimeCalled") { text = t("board.result_time"); kind = "time"; }
    else if (event.type === "QuestionWithdrawn") { text = t("board.result_withdrawn"); }
    // after a wrong answer the others had their window and let it pass: say so, not «nobody answered»
    else if (event.type === "PressWindowExpired") { text = t(before.answered ? "board.result_no_more" : "board.result_nobody"); kind = "time"; }
    else if (event.type === "DeadlinePassed" && event.deadline === S.names.deadlines.ANSWER) { text = t("board.result_time"); kind = "time"; }
    if (!text) return;
    const box = $("board-result");
    box.textContent = text;
    box.className = "board-result " + kind;
    box.hidden = false;
    clearTimeout(resultTimer);
    resultTimer = setTimeout(() => { box.hidden = true; }, 3500);
  }

  /* Only the parts whose view keys changed are rebuilt (``changed`` null: all of them). A press changes the
     players and the press list, not the theme board: fewer nodes to make before the press shows. */
  function render(changed) {
    const touched = (...keys) => !changed || keys.some((key) => changed.includes(key));
    $("board-test").hidden = !view.button_test;
    if (view.button_test) $("board-test-pressed").textContent = S.testPressed(view);
    const battle = view.battle;
    $("waiting").hidden = !!battle;
    $("scoreboard").hidden = !battle || !!battle.finished;
    $("standings").hidden = !(battle && battle.finished);
    if (!battle) { remember(); return; }
    $("board-players").style.setProperty("--players", String(view.players.length));
    if (battle.finished) renderStandings();
    const q = view.question, th = view.theme;
    $("board-theme").replaceChildren(th ? el("span", { class: th.red ? "red" : "" }, S.themeName(th.name, th.index, th.shootout)) : "",
      battle.shootout && (!th || th.complete) ? el("span", { class: "shootout" }, t("board.shootout")) : "");
    $("board-price").textContent = q && !q.over ? String(q.price) : "";
    // the right answer, once the question is over and the box's setting shows it (never the question's text)
    $("board-answer").hidden = !(q && q.over && q.answer);
    $("board-answer-text").textContent = q && q.over && q.answer ? q.answer : "";
    $("board-claps").hidden = !(battle.on_claps && !battle.finished);
    // the button test lights the dot of each player whose button answered it (as the box's own LED did)
    const tested = new Set(view.button_test ? view.button_test_pressed || [] : []);
    if (touched("players", "button_test", "button_test_pressed")) $("board-players").replaceChildren(...view.players.map((p) => el("li", {
        class: "board-player" + (p.answering ? " answering" : "") + (p.answered ? " answered" : "") + (tested.has(p.index) ? " tested" : ""),
        style: "--led:" + (p.led || "#888"), dataset: { player: p.index } },
      el("span", { class: "led" }),
      el("span", { class: "name", title: p.name }, p.name),
      el("span", { class: "score" }, String(p.score)))));
    if (touched("presses", "players", "question", "answerer")) S.renderPresses($("board-presses"), view);
    if (touched("themes")) $("board-themes").replaceChildren(...(view.themes || []).map((th) => el("li", {
        class: "board-theme-chip" + (th.red ? " red" : "") + (th.current ? " current" : "") +
               (th.played.length === th.prices.length ? " done" : "") },
      el("span", { class: "theme-chip-name" }, S.themeName(th.name, th.index, th.shootout)),
      el("span", { class: "pips" }, ...th.prices.map((price) => el("i", { class: th.played.includes(price) ? "played" : "" }))))));
    remember();
  }

  function renderStandings() {
    const anyTiebreak = (view.standings || []).some((row) => (row.tiebreak || []).length);
    $("standings").classList.toggle("no-tiebreak", !anyTiebreak);
    $("standings-body").replaceChildren(...(view.standings || []).map((row) => el("tr", {},
      el("td", { class: "place" }, String(row.place)),
      el("td", { class: "name" }, row.name),
      el("td", { class: "score" }, String(row.score)),
      el("td", { class: "tiebreak" }, (row.tiebreak || []).map(([method, value]) => t("tiebreak." + method) + ": " + value).join(", ")))));
  }

  function tick() {
    requestAnimationFrame(tick);
    if (view && view.battle && !view.battle.finished) S.drawCountdown($("board-countdown"), link, view);
  }
  requestAnimationFrame(tick);
})();
