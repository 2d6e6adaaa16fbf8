/* The host page: PIN, battle setup, then big controls enabled from the engine's own verdicts (view.allowed). */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const C = S.names.commands;  // the host commands by name (web/names.py): never spelt here
  const $ = (id) => document.getElementById(id);
  const PIN_KEY = "svoyak.host.pin";
  let link = null, view = null, profiles = [];
  // What the host asked to see instead of the live battle: "unfinished" (go on or set aside?) or "setup";
  // setAside: the id of the unfinished live battle the host chose to set aside (sent with setup and resume).
  let screen = "run", setAside = null, testWasOn = false;

  // a touch screen has no keys to hint at (a laptop keeps its shortcuts)
  if (window.matchMedia("(pointer: coarse)").matches || navigator.maxTouchPoints > 0) document.body.classList.add("touch");

  function show(id) { for (const s of ["login", "unfinished", "setup", "run"]) $(s).hidden = s !== id; }

  let reasonShown = 0;  // counts messages, so a late acknowledgement never wipes a newer refusal
  /* One place says why: the line under the controls. The toast (top, never takes a tap) repeats it only when
     that line is scrolled out of sight (a phone). msg: {ru, en} or a plain string. */
  function reason(msg, kind) {
    reasonShown++;
    const [main, second] = typeof msg === "string" ? [msg, ""] : S.say(msg);
    $("reason").replaceChildren(main || "", second ? el("span", { class: "second" }, second) : "");
    $("reason").className = "reason " + (kind || "");
    if (!main) return;
    const box = $("reason").getBoundingClientRect();
    if ($("run").hidden || box.bottom > window.innerHeight || box.top < 0) S.toast(main, kind);
  }

  /* A tap's intent (command + the view it was made on) keeps one command id: a double tap is applied once by
     the server. The view is named by the server's serving run and its update number (epoch, seq): the number
     starts again at 0 when the server restarts, the run's id does not repeat, so a tap after a restart is never
     taken for one made before it. A tap made while the link is down (or not acknowledged before it dropped) is
     held: after the reconnect the pending panel shows it, and the host applies it (with its own id: applied
     once even if it had reached the box) or drops it. Nothing tapped offline is applied behind the host's back. */
  const intents = new Map();
  function tappedOn() {
    return link.seq >= 0 ? link.serverEpoch + ":" + link.seq : "off" + (view ? JSON.stringify(view.question) : "");
  }
  async function send(name, args, button, id) {
    const before = reasonShown;
    const intent = name + "|" + JSON.stringify(args || {}) + "|" + tappedOn();
    if (!id && intents.has(intent)) return intents.get(intent).promise;  // the same tap again: already on its way
    const entry = { id: id || S.newId() };
    intents.set(intent, entry);
    if (intents.size > 50) intents.delete(intents.keys().next().value);
    const pending = button && document.body.dataset.conn !== "online";
    if (pending) { button.classList.add("pending"); button.dataset.pending = t("conn.pending"); }
    entry.promise = link.command(name, args, entry.id, { hold: true });
    const ack = await entry.promise;
    if (button) button.classList.remove("pending");
    if (ack.held) { intents.delete(intent); hold(name, args, entry.id); return ack; }
    // refused: a new tap may try again (not after a timeout: the first may yet have been applied, keep its id)
    if (!ack.ok) { if (ack.error.code !== "timeout") intents.delete(intent); reason(ack.error, "error"); }
    else if (reasonShown === before) reason("");
    return ack;
  }

  // ---------------------------------------------------------------- taps held while the link was down
  const held = [];  // {name, args, id}, oldest first
  function hold(name, args, id) {
    if (!held.some((h) => h.id === id)) held.push({ name, args, id });
    renderHeld();
  }
  /* what the held tap was, in the words of the button the host tapped */
  function commandLabel(name, args) {
    const a = args || {};
    const player = (i) => (view && view.players && view.players[i] ? " · " + view.players[i].name : "");
    const special = {
      setup: () => t("setup.start"),
      phones: () => t(a.enabled ? "cmd.phones_on" : "cmd.phones_off"),
      button_test: () => t(a.on === false ? "cmd.button_test_off" : "cmd.button_test"),
      pick: () => t("cmd.pick") + player(a.player),
      appeal_decide: () => t(a.accepted ? "cmd.appeal_accept" : "cmd.appeal_reject"),
    };
    if (special[name]) return special[name]();
    const key = "cmd." + name;
    const text = t(key);
    return text === key ? t("pending.command") : text;  // never a raw command name on the page
  }
  function heldPanel() {
    let panel = $("held");
    if (!panel) {
      panel = el("section", { id: "held", class: "held", role: "alertdialog", "aria-labelledby": "held-title" });
      $("reason").before(panel);
    }
    return panel;
  }
  function renderHeld() {
    const panel = heldPanel();
    panel.hidden = !held.length;
    if (!held.length) return panel.replaceChildren();
    const online = document.body.dataset.conn === "online";
    panel.replaceChildren(
      el("h3", { id: "held-title" }, t("pending.title")),
      el("p", { class: "hint" }, t(online ? "pending.hint" : "pending.waiting")),
      el("ul", {}, held.map((h) => el("li", { dataset: { cmd: h.name } },
        el("span", { class: "what" }, commandLabel(h.name, h.args)),
        el("button", { class: "small apply", disabled: online ? null : true, onclick: () => applyHeld(h) }, t("pending.apply")),
        el("button", { class: "small drop", onclick: () => dropHeld(h) }, t("pending.drop"))))));
  }
  async function applyHeld(h) {
    dropHeld(h);
    const ack = await send(h.name, h.args, null, h.id);  // its own id: the box applies it once
    if (ack.ok && ack.duplicate) reason(t("pending.already"));
  }
  function dropHeld(h) {
    const at = held.indexOf(h);
    if (at >= 0) held.splice(at, 1);
    renderHeld();
  }
  // the panel's buttons follow the link (applying needs it)
  new MutationObserver(() => { if (held.length) renderHeld(); }).observe(document.body, { attributes: true, attributeFilter: ["data-conn"] });

  // ---------------------------------------------------------------- login
  function login(pin) {
    if (link) link.socket.disconnect();
    if (pin) sessionStorage.setItem(PIN_KEY, pin);
    link = S.connect("/host", {
      auth: () => ({ pin: sessionStorage.getItem(PIN_KEY) || "" }),
      onHello: (hello) => {
        profiles = hello.profiles || []; fillProfiles(); $("logout").hidden = false;
        document.dispatchEvent(new CustomEvent("svoyak:host-hello", { detail: link }));  // host_packages.js
      },
      onView: (v, event) => {
        view = v; render(event);
        switched();
        // the button test ends by itself when a question starts: say so where the host looks
        if (testWasOn && !v.button_test && event && ["PriceAnnounced", "ReadingStarted"].includes(event.type)) reason(t("test.ended"));
        testWasOn = !!v.button_test;
        document.dispatchEvent(new CustomEvent("svoyak:host-view", { detail: v }));  // host_packages.js
      },
      onRefused: (err) => {
        sessionStorage.removeItem(PIN_KEY);
        $("logout").hidden = true;
        show("login");
        $("login-error").textContent = S.both(err);
      },
    });
  }
  /* The live battle changed, and not by a tap on this page (the director put a battle on the box, another
     tablet resumed one): the host is told, where he looks, which battle the page shows now. */
  let ownUntil = 0;  // a setup or resume this page sent: the switch it makes, until shortly after its answer, is its own
  let shownBattle = null;  // the live battle's id the page showed last (the view is updated in place)
  function switched() {
    const before = shownBattle, now = view && view.battle ? view.battle.id : null;
    shownBattle = now;
    if (!before || !now || before === now) return;  // (after a reconnect too: the box may have switched meanwhile)
    if (performance.now() < ownUntil) return;
    const entry = liveEntry();
    const named = entry && entry.named ? entry.named : view.players.map((p) => p.name).join(", ");
    const text = S.word("host.switched", { battle: named });
    reason(text, "notice");
    S.toast(text, "notice");
  }
  /* One login per person (web/auth.py): the PIN is posted once, the box keeps the login in this device's cookie
     (the socket, the packages, a reload need no PIN again); «Выйти» logs the device out of every page. */
  $("login-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = new URLSearchParams({ pin: $("pin").value.trim() });
    let answer = null;
    try {
      const response = await fetch("/login/host", { method: "POST", body, headers: { Accept: "application/json" } });
      answer = await response.json();
    } catch (error) {
      answer = { ok: false, error: { ru: S.t("conn.banner"), en: S.t("conn.banner") } };
    }
    if (!answer.ok) { $("login-error").textContent = S.both(answer.error); return; }
    $("login-error").textContent = "";
    login("");
  });
  $("logout").addEventListener("click", async () => {
    sessionStorage.removeItem(PIN_KEY); S.forgetPass("/host");
    try { await fetch("/logout", { method: "POST", headers: { Accept: "application/json" } }); } finally { location.reload(); }
  });

  // ---------------------------------------------------------------- setup
  function fillProfiles() {
    const select = $("profile");
    select.replaceChildren(...profiles.map((p) => el("option", { value: p.name }, S.lang === "en" ? p.title_en : p.title_ru)));
    select.onchange = () => shapeSetup();
    shapeSetup();
  }
  function currentProfile() { return profiles.find((p) => p.name === $("profile").value) || profiles[0] || {}; }
  function shapeSetup() {
    const p = currentProfile();
    const count = Math.max(p.max_players || 4, 2);
    const fs = $("players");
    const names = [...fs.querySelectorAll("input")].map((i) => i.value);
    fs.replaceChildren(el("legend", {}, t("setup.players")));
    for (let i = 0; i < count; i++) {
      fs.append(el("input", { name: "player", placeholder: t("setup.player_n") + " " + (i + 1), value: names[i] || "" }));
    }
    const counts = p.theme_counts && p.theme_counts.length ? p.theme_counts : [];
    $("theme-count-hint").textContent = counts.length ? t("setup.theme_counts") + " " + counts.join(", ") : "";
    const list = $("theme-list");
    const want = p.themes || 4;
    setThemeCount(want);
  }
  function setThemeCount(want) {
    const list = $("theme-list");
    want = Math.max(1, Math.min(30, want | 0));
    while (list.children.length < want) addTheme();
    while (list.children.length > want) list.lastChild.remove();
    $("theme-count").value = String(list.children.length);
  }
  $("theme-count").addEventListener("input", () => { if (Number($("theme-count").value) >= 1) setThemeCount(Number($("theme-count").value)); });
  function addTheme() {
    const list = $("theme-list"), n = list.children.length + 1;
    list.append(el("div", { class: "theme-row" },
      el("input", { name: "theme", placeholder: t("setup.theme_n") + " " + n }),
      currentProfile().red_themes ? el("label", { class: "red-flag" }, el("input", { type: "checkbox", name: "red" }), t("setup.red")) : null));
  }
  $("add-theme").addEventListener("click", () => setThemeCount($("theme-list").children.length + 1));
  $("remove-theme").addEventListener("click", () => setThemeCount($("theme-list").children.length - 1));
  $("setup-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const seats = [...$("players").querySelectorAll("input")];
    let players = seats.map((i) => i.value.trim()).filter(Boolean);
    // no names typed: play with the placeholders the form shows («Игрок 1»...), as many as the regulation seats
    if (!players.length) players = seats.slice(0, Math.max(currentProfile().min_players || 2, seats.length)).map((i) => i.placeholder);
    const themes = [...$("theme-list").children].map((row, i) => ({
      name: row.querySelector("input[name=theme]").value.trim() || t("setup.theme_n") + " " + (i + 1),
      red: !!(row.querySelector("input[name=red]") || {}).checked,
    }));
    const args = { profile: $("profile").value, players, themes };
    if (setAside) args.set_aside = setAside;
    document.dispatchEvent(new CustomEvent("svoyak:host-setup", { detail: args }));  // a package's choice joins
    ownUntil = Infinity;
    const ack = await send("setup", args);
    ownUntil = performance.now() + 2000;
    if (ack.ok) { screen = "run"; setAside = null; render(); }  // the new battle's update may have come before this ack
  });

  // ---------------------------------------------------------------- this box's battles
  /* «Новый бой» never replaces an unfinished battle silently: the host sees it, with its scores, and chooses. */
  function wantNewBattle() {
    const live = view && view.battle;
    screen = live && !live.finished ? "unfinished" : "setup";
    setAside = null;
    render();
  }
  for (const id of ["new-battle", "new-battle-end"]) $(id).addEventListener("click", wantNewBattle);
  $("go-on").addEventListener("click", () => { screen = "run"; setAside = null; render(); });
  $("set-aside").addEventListener("click", () => { setAside = view.battle.id; screen = "setup"; render(); });
  $("back-to-battle").addEventListener("click", () => { screen = "run"; setAside = null; render(); });

  function liveEntry() { return (view.battles || []).find((b) => b.current) || null; }
  function progress(b) {
    if (!b.questions && !b.themes_started) return t("battles.not_started");
    return t("battles.progress").replace("{started}", b.themes_started).replace("{themes}", b.themes) +
      (b.theme_index != null && !b.finished ? " · «" + S.themeName(b.theme_name, b.theme_index, b.theme_shootout) + "»" : "");
  }
  /* a battle as the host recognises it: regulation, where it stands, every player with the score */
  function battleCard(b) {
    const players = b.current ? view.players.map((p) => ({ name: p.name, score: p.score })) : b.players;
    if (b.current) {  // the live battle: where it stands now, from the view (the list is made at setup/resume)
      const regular = (view.themes || []).filter((th) => !th.shootout);
      b = Object.assign({}, b, { finished: !!view.battle.finished, questions: (view.questions || []).length,
        themes_started: regular.filter((th) => th.played.length || th.current).length,
        theme_name: view.theme ? view.theme.name : "", theme_index: view.theme ? view.theme.index : null,
        theme_shootout: !!(view.theme && view.theme.shootout) });
    }
    return [
      el("div", { class: "battle-title" }, b.named ? b.named + " · " : "", S.lang === "en" ? b.title_en : b.title_ru, " · ",
        el("span", { class: "status" + (b.finished ? "" : " open") }, t(b.current ? "battles.current" : b.finished ? "battles.finished" : "battles.unfinished")),
        " · ", progress(b)),
      el("div", { class: "battle-scores" }, ...players.map((p) => el("span", { class: "battle-score" },
        el("span", { class: "name" }, p.name), " ", el("b", {}, String(p.score)))))];
  }
  async function resume(b) {
    const args = { battle: b.id };
    if (setAside) args.set_aside = setAside;
    ownUntil = Infinity;
    const ack = await send("resume", args);
    ownUntil = performance.now() + 2000;
    if (ack.ok) { screen = "run"; setAside = null; render(); }
  }
  function renderBattles() {
    const list = (view.battles || []).map((b) => (b.current ? Object.assign({}, b, { finished: !!view.battle.finished }) : b));
    const open = list.filter((b) => !b.finished && !(b.current && !setAside)), done = list.filter((b) => b.finished);
    $("open-battles").hidden = !open.length;
    $("done-battles").hidden = !done.length;
    $("open-battle-list").replaceChildren(...open.map(battleItem));
    $("done-battle-list").replaceChildren(...done.map(battleItem));
  }
  function battleItem(b) {
    return (el("li", { class: "battle" + (b.finished ? " finished" : " open") + (b.current ? " current" : ""), dataset: { battle: b.id } },
      el("div", { class: "battle-card" }, ...battleCard(b)),
      b.current ? null : el("button", { type: "button", class: "resume" + (b.finished ? "" : " primary"), onclick: () => resume(b) },
        t(b.finished ? "battles.open" : "battles.resume"))));
  }

  // ---------------------------------------------------------------- run
  function allowed(cmd) { return view && view.allowed && cmd in view.allowed && view.allowed[cmd] === null; }
  function refusal(cmd) {
    if (!view || !view.allowed || !(cmd in view.allowed)) return t("error.no_battle");
    const why = view.allowed[cmd];
    return why ? S.say(why).filter(Boolean).join(" / ") : "";
  }
  function tryCommand(cmd, args, button) {
    if (!allowed(cmd)) {
      const why = view && view.allowed && view.allowed[cmd];
      reason(why || t("error.no_battle"), "error");
      return;
    }
    if (cmd === C.WITHDRAW) { askWithdraw(); return; }  // sent from the confirmation only
    send(cmd, args, button);
  }

  /* «Снять вопрос» is the host's decision (mubc 4.3) and takes the question's points back from whoever scored
     on it, with a word to the hall: the page asks once, naming the question, and «Не снимать» is the default
     (Escape). The undo bar then offers it back until the next question. */
  let withdrawAsked = null;  // the question the confirmation names (its index), or null when none is open
  function askWithdraw() {
    const q = view.question;
    withdrawAsked = q ? q.index : -1;
    $("withdraw-ask").textContent = S.format(t("withdraw.ask"), { price: q ? q.price : "" });
    $("withdraw-confirm").hidden = false;
    $("withdraw-no").focus();
  }
  function closeWithdraw() { withdrawAsked = null; $("withdraw-confirm").hidden = true; }
  $("withdraw-no").addEventListener("click", closeWithdraw);
  $("withdraw-yes").addEventListener("click", () => {
    const asked = withdrawAsked;
    closeWithdraw();
    // the question it named is still the one a withdrawal takes (an update may have come meanwhile)
    if (asked !== null && allowed(C.WITHDRAW) && (view.question ? view.question.index : -1) === asked) send(C.WITHDRAW, undefined, $("withdraw"));
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && withdrawAsked !== null) closeWithdraw(); });
  document.querySelectorAll(".controls [data-cmd]").forEach((b) =>
    b.addEventListener("click", () => tryCommand(b.dataset.cmd, undefined, b)));
  // «Ответ объявлен» in the tools (and host_packages.js's «Показать ответ на табло», which taps it)
  document.querySelector(".extras [data-cmd=announce]").addEventListener("click", (e) => tryCommand(C.ANNOUNCE, undefined, e.currentTarget));
  $("claps").addEventListener("click", () => tryCommand(C.CLAPS, { on: !(view.battle && view.battle.on_claps) }));
  $("button-test").addEventListener("click", () => send("button_test", { on: !view.button_test }));
  $("phones").addEventListener("click", () => send("phones", { enabled: !view.phones_enabled }));
  $("corr-question").addEventListener("change", () => renderCorrection());
  $("correction-form").addEventListener("submit", (e) => {
    e.preventDefault();
    send(C.CORRECT, { question: Number($("corr-question").value), player: Number($("corr-player").value),
                      correct: $("corr-verdict").value === "1", reason: $("corr-reason").value });
  });
  $("appeal").addEventListener("click", () => send(C.APPEAL, {
    question: Number($("corr-question").value), player: Number($("corr-player").value), claim: $("corr-reason").value }));

  const KEYS = { n: C.NEXT, r: C.READING_DONE, " ": C.POINT, "+": C.RIGHT, "=": C.RIGHT, "-": C.WRONG,
                 f: C.SHORT_FORM, c: C.CLARIFY, e: C.EXTEND, t: C.TIME, w: C.WITHDRAW, z: C.UNDO };
  document.addEventListener("keydown", (e) => {
    if (!view || $("run").hidden || e.target.closest("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    // the same physical keys on a Russian layout (ЙЦУКЕН)
    const cmd = KEYS[key] || KEYS[{ "т": "n", "к": "r", "а": "f", "с": "c", "у": "e", "е": "t", "ц": "w", "я": "z" }[key]];
    if (cmd) { e.preventDefault(); tryCommand(cmd); }
    if (/^[1-4]$/.test(key) && view.battle && view.battle.on_claps) tryCommand(C.PICK, { player: Number(key) - 1 });
  });

  // Keep the host's own choice across updates; until he chooses, the first option (the latest question) holds.
  function fillSelect(select, options) {
    const keep = select.value;
    select.replaceChildren(...options.map(([value, label]) => el("option", { value }, label)));
    if (select.dataset.touched && [...select.options].some((o) => o.value === keep)) select.value = keep;
  }
  for (const id of ["corr-question", "corr-player"]) $(id).addEventListener("change", (e) => { e.target.dataset.touched = "1"; });

  $("test-off").addEventListener("click", () => send("button_test", { on: false }));
  /* The tools panel opens below the buttons (their size never changes): the page scrolls to it, and the reason
     line stays on screen, pinned to the bottom edge while the panel is open. */
  $("extras").addEventListener("toggle", () => {
    document.body.classList.toggle("tools-open", $("extras").open);
    if ($("extras").open) $("extras").scrollIntoView({ block: "end" });
  });
  function render() {
    if (!view) return;
    $("test-banner").hidden = !view.button_test;
    if (view.button_test) $("test-pressed").textContent = S.testPressed(view);
    const live = view.battle, entry = live ? liveEntry() : null;
    const unfinished = !!(live && !live.finished);
    // the battle the host chose to set aside is no longer the live one (the director put another): ask again
    if (setAside && (!unfinished || setAside !== live.id)) { setAside = null; if (screen === "setup" && unfinished) screen = "unfinished"; }
    if (screen === "unfinished" && !unfinished) screen = "setup";
    if (!live || screen === "setup") {
      show("setup");
      $("back-to-battle").hidden = !live;
      $("set-aside-note").hidden = !setAside;
      if (setAside && entry) $("set-aside-note").replaceChildren(t("setup.set_aside_note"), " ", el("span", { class: "battle-card" }, ...battleCard(entry)));
      renderBattles();
      return;
    }
    if (screen === "unfinished") {
      show("unfinished");
      $("unfinished-battle").replaceChildren(...(entry ? battleCard(entry) : []));
      return;
    }
    show("run");
    const q = view.question, th = view.theme;
    const over = !!view.battle.finished;  // the end screen says so, without the last theme's name before it
    $("question-title").replaceChildren(...[
      th && !over ? el("span", { class: "theme-name" + (th.red ? " red" : "") }, S.themeName(th.name, th.index, th.shootout)) : null,
      q && !q.over ? el("span", { class: "price" }, String(q.price)) : null,
      view.battle.finished ? el("span", {}, t("host.finished")) : null].filter(Boolean));
    const answerer = view.answerer !== null && view.answerer !== undefined ? view.players[view.answerer] : null;
    $("point").replaceChildren(el("span", { class: "ellipsis" }, answerer ? t("cmd.point_name").replace("{name}", answerer.name) : t("cmd.point")));
    $("point").title = answerer ? answerer.name : "";
    // withdraw names the question it takes away
    $("withdraw-label").textContent = q && !q.over && !q.withdrawn ? t("cmd.withdraw") + " " + q.price : t("cmd.withdraw");
    // "next" starts the next theme when one is over: say so (a double tap no longer does both, see send())
    $("next-label").textContent = t(view.battle.phase === S.names.phases.BETWEEN_THEMES ? "cmd.next_theme" : "cmd.next");
    document.querySelectorAll("[data-cmd]").forEach((b) => {
      const ok = allowed(b.dataset.cmd);
      b.classList.toggle("is-disabled", !ok);
      b.setAttribute("aria-disabled", ok ? "false" : "true");
      b.title = ok ? "" : refusal(b.dataset.cmd);
    });
    $("claps").classList.toggle("on", !!view.battle.on_claps);
    // claps: the score cards are what the host taps now; say so where the cards are
    $("claps-hint").hidden = !(view.battle.on_claps && !view.battle.finished);
    $("host-players").classList.toggle("on-claps", !!view.battle.on_claps);
    $("phones").textContent = t(view.phones_enabled ? "cmd.phones_off" : "cmd.phones_on");
    // each seat's code, for the host to tell its player (a phone presses only for the seat whose code it knows)
    const codes = view.phones_enabled && view.seat_codes ? view.seat_codes : [];
    $("seat-codes").hidden = !codes.length;
    $("seat-code-list").replaceChildren(...codes.map((code, i) => el("li", {
      style: "--led:" + ((view.players[i] || {}).led || "#888"), dataset: { player: i } },
      el("span", { class: "name" }, (view.players[i] || {}).name || String(i + 1)), el("b", { class: "code" }, code))));
    $("button-test").textContent = t(view.button_test ? "cmd.button_test_off" : "cmd.button_test");
    $("button-test").classList.toggle("on", !!view.button_test);
    $("host-players").replaceChildren(...view.players.map((p) => el("li", {
        class: "host-player" + (p.answering ? " answering" : "") + (p.answered ? " answered" : "") + (p.eligible ? " eligible" : ""),
        style: "--led:" + (p.led || "#888"), dataset: { player: p.index },
        onclick: () => { if (view.battle.on_claps) tryCommand(C.PICK, { player: p.index }); } },
      el("span", { class: "name", title: p.name }, p.name), el("span", { class: "score" }, String(p.score)))));
    fillSelect($("corr-question"), (view.questions || []).map((q) => [q.index, S.themeName(q.theme_name, q.theme, q.theme_shootout) + " · " + q.price +
      (q.withdrawn ? " · " + t("host.withdrawn") : "")]).reverse());
    renderCorrection();
    // the protocol while the battle is on (a judge checks a question, the director prints a half): the same paper
    $("protocol-live-link").href = "/battles/" + encodeURIComponent(view.battle.id) + "/protocol";
    renderEnd();
    $("appeals").replaceChildren(...(view.appeals || []).map((a) => el("li", {},
      view.players[a.player].name + " · " + t("host.question_n") + " " + (a.question + 1) + (a.claim ? " · " + a.claim : "") + " ",
      a.decided ? el("b", {}, t(a.accepted ? "cmd.appeal_accept" : "cmd.appeal_reject")) : [
        el("button", { class: "small", onclick: () => send(C.APPEAL_DECIDE, { appeal: a.index, accepted: true, correct: true }) }, t("cmd.appeal_accept")),
        el("button", { class: "small", onclick: () => send(C.APPEAL_DECIDE, { appeal: a.index, accepted: false }) }, t("cmd.appeal_reject"))])));
    S.renderPresses($("host-presses"), view);
    renderAnnouncement();
    renderExpected(answerer);
    renderUndo();
    renderPolicy();
    // a confirmation about a question no longer the one to withdraw (the next began, another tablet withdrew it)
    if (withdrawAsked !== null && (!allowed(C.WITHDRAW) || (view.question ? view.question.index : -1) !== withdrawAsked)) closeWithdraw();
  }

  /* The next expected action stands out (the point button is the biggest on screen whatever the state). */
  function renderExpected(answerer) {
    const q = view.question;
    let expected = [];
    if (answerer && !view.pointed && allowed(C.POINT)) expected = [C.POINT];
    else if (view.pointed && allowed(C.RIGHT)) expected = [C.RIGHT, C.WRONG];
    else if (q && !q.over && q.reading === S.names.reading.READING && allowed(C.READING_DONE)) expected = [C.READING_DONE];
    // a wrong answer stopped the reading (eurocup 2.10): reading on is what comes next, not a greyed «Вопрос прочитан»
    else if (q && !q.over && q.reading === S.names.reading.INTERRUPTED && allowed(C.RESUME_READING)) expected = [C.RESUME_READING];
    else if (allowed(C.NEXT)) expected = [C.NEXT];
    document.querySelectorAll(".controls [data-cmd]").forEach((b) => b.classList.toggle("expected", expected.includes(b.dataset.cmd)));
  }

  /* What «Отменить» takes back, said before (on the button) and right after (with one tap to do it again). */
  function actionWords(a) {
    if (!a) return "";
    const key = a.type === "AnswerJudged" ? "action.AnswerJudged." + (a.correct ? "right" : "wrong") : "action." + a.type;
    const name = a.player !== null && a.player !== undefined && view.players[a.player] ? view.players[a.player].name : "";
    return S.format(key in S.strings ? t(key) : t("action.other"), { name, price: a.price === null ? "" : a.price });
  }
  let undoBarCommand = null;  // not a data-cmd: the generic enabling loop must not judge it by an old name
  $("undo-redo").addEventListener("click", () => { if (undoBarCommand) tryCommand(undoBarCommand, undefined, $("undo-redo")); });
  function renderUndo() {
    const u = view.undo || {};
    $("undo-what").textContent = u.next ? actionWords(u.next) : "";
    $("undo").title = u.next ? S.word("undo.will", { action: actionWords(u.next) }) : $("undo").title;
    const q = view.question;
    let text = "", cmd = null, label = "";
    if (u.last) {                                     // just undone: say what, and offer it back
      text = S.word("undo.done", { action: actionWords(u.last) });
      if (u.last.redo && allowed(u.last.redo)) { cmd = u.last.redo; label = t("undo.redo"); }
    } else if (q && q.withdrawn && u.next && u.next.type === "QuestionWithdrawn") {  // just withdrawn
      text = S.word("undo.withdrawn", { price: q.price });
      if (allowed(C.UNDO)) { cmd = C.UNDO; label = t("cmd.undo"); }
    }
    $("undo-bar").hidden = !text;
    $("undo-text").textContent = text;
    $("undo-redo").hidden = !cmd;
    undoBarCommand = cmd;
    $("undo-redo").textContent = label;
  }

  /* What the regulation allows now, from the profile's policy (never its name) */
  function renderPolicy() {
    const p = profiles.find((x) => x.name === view.battle.profile) || {};
    const section = (sec) => (sec ? " (" + S.word("announce.section", { section: sec }) + ")" : "");
    const parts = [];
    if (p.corrections_policy) parts.push(t("policy." + p.corrections_policy) + section(p.corrections_section));
    if (p.appeals_policy && p.appeals_policy !== "none") parts.push(t("appeals." + p.appeals_policy) + section(p.appeals_section));
    $("policy").textContent = parts.join("; ");
  }

  /* What the hall is told (the board shows the same): kept in sight until the next question, or hidden by hand. */
  let announceHidden = null;
  $("announce-close").addEventListener("click", () => { announceHidden = view.announcement && view.announcement.id; renderAnnouncement(); });
  function renderAnnouncement() {
    const a = view.announcement;
    $("host-announce-bar").hidden = !a || a.id === announceHidden;
    if (a) S.renderAnnouncement($("host-announce"), a);
  }

  /* Who answered the chosen question, and how: the form offers only those (a correction of anyone else is
     refused by the engine anyway); with nobody to correct the buttons stay off. */
  function renderCorrection() {
    const q = (view.questions || []).find((x) => String(x.index) === $("corr-question").value);
    const answers = q ? q.answers || [] : [];
    fillSelect($("corr-player"), answers.map((a) => [a.player, view.players[a.player].name + " · " +
      t(a.correct ? "cmd.right" : "cmd.wrong")]));
    $("corr-answers").textContent = !q ? "" : answers.length ? "" : t("host.nobody_answered");
    const profile = profiles.find((p) => p.name === view.battle.profile) || {};
    $("appeal").hidden = profile.appeals === false;
    if (!answers.length) for (const id of ["corr-submit", "appeal"]) {
      $(id).classList.add("is-disabled"); $(id).setAttribute("aria-disabled", "true");
    }
  }

  /* The end of the battle: the standings and a visible "Новый бой" where the controls were. */
  function renderEnd() {
    const over = !!view.battle.finished;
    $("host-end").hidden = !over;
    $("run").classList.toggle("finished", over);
    if (!over) return;
    // the day's papers: this battle's protocol, printable or as CSV (web/papers.py)
    const papers = "/battles/" + encodeURIComponent(view.battle.id) + "/protocol";
    $("protocol-link").href = papers;
    $("protocol-csv-link").href = papers + ".csv";
    $("host-standings").replaceChildren(...(view.standings || []).map((row) => el("tr", {},
      el("td", { class: "place" }, String(row.place)), el("td", { class: "name" }, row.name),
      el("td", { class: "score" }, String(row.score)))));
  }

  function tick() {
    requestAnimationFrame(tick);
    if (!view || !link) return;
    S.drawCountdown($("countdown"), link, view);
    // The answer time is out: "Время" is what the host presses now (eurocup 2.8: he calls it), so it pulses.
    const d = view.deadlines && view.deadlines.answer;
    const out = (!!d && S.remainingMs(link, d.at_ns) <= 0 || (view.expired || []).includes(S.names.deadlines.ANSWER)) && allowed(C.TIME);
    $("time-button").classList.toggle("pulse", out);
  }
  requestAnimationFrame(tick);

  const saved = sessionStorage.getItem(PIN_KEY);
  if (saved || $("login").dataset.known === "1") login(saved || ""); else show("login");
})();
