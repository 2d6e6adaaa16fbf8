/* svoyak: the client side of the sync protocol (docs/socketio-events.md), shared by every page.
 * A full snapshot on (re)connect, then numbered updates; a missing number asks for a resync.
 * Commands carry an id and are resent with the same id until acknowledged (the server applies each id once).
 */
(function () {
  "use strict";
  // The page's settings ride as JSON data, not inline script (the Content-Security-Policy allows script files only)
  const S = window.SVOYAK = JSON.parse(document.getElementById("svoyak-config").textContent);
  const E = S.events;
  // The box's catalogue for this page's language (appliance/words.py catalogue_json): messages by key, a plural
  // message as its list of forms, and the catalogue's own Plural-Forms rule, so the pages and the box agree.
  const catalogue = S.strings;
  S.strings = catalogue.messages;
  S.t = (key) => (typeof S.strings[key] === "string" ? S.strings[key] : key);
  S.lang = S.language;
  /* A worded message {ru, en} in the page's language only: a page speaks one language at a time. */
  S.both = (msg) => (!msg ? "" : typeof msg === "string" ? msg : msg[S.lang] || msg.ru || msg.en || "");
  /* [main line, second line] of a worded message: the page's language, nothing under it */
  S.say = (msg) => [S.both(msg), ""];

  /* The catalogue's plural rule: gettext's Plural-Forms expression ("nplurals=3; plural=(n%10==1 && ...);"),
     read by a small parser (the Content-Security-Policy allows no eval). tests/web/test_host_browser.py checks
     that it gives the box's form for every count from 0 to 1000. */
  S.pluralRule = function (header) {
    const source = (/plural\s*=\s*([^;]*)/.exec(header || "") || [null, "n != 1"])[1];
    const tokens = source.match(/\d+|n|&&|\|\||[=!<>]=|[-+*\/%<>!?:()]/g) || [];
    let at = 0;
    const peek = () => tokens[at], next = () => tokens[at++];
    const binary = { "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6 };
    const apply = (op, a, b) => ({ "||": (n) => (a(n) || b(n) ? 1 : 0), "&&": (n) => (a(n) && b(n) ? 1 : 0),
      "==": (n) => (a(n) === b(n) ? 1 : 0), "!=": (n) => (a(n) !== b(n) ? 1 : 0), "<": (n) => (a(n) < b(n) ? 1 : 0),
      ">": (n) => (a(n) > b(n) ? 1 : 0), "<=": (n) => (a(n) <= b(n) ? 1 : 0), ">=": (n) => (a(n) >= b(n) ? 1 : 0),
      "+": (n) => a(n) + b(n), "-": (n) => a(n) - b(n), "*": (n) => a(n) * b(n),
      "/": (n) => Math.trunc(a(n) / b(n)), "%": (n) => a(n) % b(n) })[op];
    function unary() {
      const token = next();
      if (token === "(") { const inner = ternary(); next(); return inner; }
      if (token === "!") { const inner = unary(); return (n) => (inner(n) ? 0 : 1); }
      if (token === "n") return (n) => n;
      const value = Number(token);
      return () => value;
    }
    function climb(level) {
      let left = unary();
      while (peek() in binary && binary[peek()] >= level) {
        const op = next(), right = climb(binary[op] + 1), a = left;
        left = apply(op, a, right);
      }
      return left;
    }
    function ternary() {
      const test = climb(1);
      if (peek() !== "?") return test;
      next();
      const yes = ternary();
      next();  // ":"
      const no = ternary();
      return (n) => (test(n) ? yes(n) : no(n));
    }
    const rule = ternary();
    return (n) => Number(rule(n));
  };
  const rule = S.pluralRule(catalogue.plural);
  S.pluralIndex = (count) => rule(Math.abs(Math.trunc(Number(count))));
  /* {name} figures filled in from values (a placeholder values lack stays as it is) */
  S.format = (template, values) => String(template)
    .replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
  /* message key with values, each counted {name} worded by the plural message key.name: the same rule as the
     box's appliance.words.word (word("count.themes", {count: 6}) is «6 тем») */
  S.word = (key, values) => S.format(S.t(key).replace(/\{(\w+)\}/g, (whole, name) => {
    const forms = S.strings[key + "." + name];
    if (!Array.isArray(forms) || !(name in values)) return whole;
    return forms[Math.min(S.pluralIndex(values[name]), forms.length - 1)];
  }), values);

  /* a theme as the pages call it: its name, or «Тема 2» / «Перестрелка» while it has none (the view sends "") */
  S.themeName = (name, index, shootout) => name ||
    (shootout ? S.t("theme.shootout") : S.word("theme.unnamed", { n: Number(index) + 1 }));

  let idCounter = 0;
  const idPrefix = Date.now().toString(36) + "-" + Math.floor(Math.random() * 1e9).toString(36);
  S.newId = () => idPrefix + "-" + (++idCounter);

  function setIndicator(state) {
    const el = document.getElementById("conn");
    if (!el) return;
    if (state === "refused") {  // the box answered and said no (a wrong PIN): the link is fine, no red banner
      el.hidden = true;
      document.body.dataset.conn = state;
      const refusedBanner = document.getElementById("offline-banner");
      if (refusedBanner) refusedBanner.hidden = true;
      return;
    }
    el.hidden = false;  // pages without a socket never call this: no pill that says "connecting" forever
    el.className = "indicator conn-" + state;
    el.textContent = S.t("conn." + state);
    document.body.dataset.conn = state;
    const banner = document.getElementById("offline-banner");
    if (banner) banner.hidden = state === "online" || state === "connecting" && !S._wasOnline;
    if (state === "online") S._wasOnline = true;
    // offline, the buttons' state is unknown here: hide it rather than show a stale "connected"
    const capture = document.getElementById("capture-indicator");
    if (capture && state !== "online") capture.hidden = true;
  }

  S.setIndicator = setIndicator;  // the spectators' paths (spectate.js)

  function setCapture(view) {
    const el = document.getElementById("capture-indicator");
    if (!el || !view || !view.capture) return;
    el.hidden = !view.capture.present;
    // RPi.GPIO (old Pis) stamps a press in its callback, not in the kernel: say so (issue 3, gpio/README.md).
    const coarse = view.capture.connected && view.capture.precision === "callback";
    el.className = "indicator " + (!view.capture.connected ? "conn-offline" : coarse ? "conn-degraded" : "conn-online");
    el.textContent = S.t(!view.capture.connected ? "capture.down" : coarse ? "capture.coarse" : "capture.up");
    el.title = (view.capture.degraded || []).join("; ");
  }

  S.toast = function (text, kind) {
    const el = document.getElementById("toast");
    if (!el) return;
    // Never takes a tap (pointer-events: none in the stylesheet), sits at the top, gone in 3 s.
    el.textContent = text;
    el.className = "toast " + (kind || "");
    el.hidden = !text;
    clearTimeout(S._toastTimer);
    S._toastTimer = setTimeout(() => { el.hidden = true; }, 3000);
  };

  /* forget this tab's pass for a namespace (the host logs out: the next login needs the PIN again) */
  S.forgetPass = (namespace) => sessionStorage.removeItem("svoyak.pass" + namespace);

  /* connect(namespace, {auth(): object, onHello(h), onView(view, event, seq, changed), onRefused(err)});
     ``changed``: the view keys this update changed, or null after a snapshot (everything may have). */
  S.connect = function (namespace, options) {
    const passKey = "svoyak.pass" + namespace;
    const socket = io(namespace, {
      // the pass of the last hello: a reconnect of a page that proved the PIN (or a seat code) is not a guess
      auth: (cb) => cb(Object.assign(options.auth ? options.auth() : {}, { pass: sessionStorage.getItem(passKey) || "" })),
      transports: ["websocket"],
      query: options.query,                         // a spectator's page says so (web/spectators.py admission)
      reconnectionDelay: 300,
      reconnectionDelayMax: 2000,
      timeout: 4000,
    });
    const link = { socket, seq: -1, view: null, offsetMs: 0, hello: null };
    (S.links = S.links || []).push(link);  // for tools (bench/bench_web.py times the messages)

    function clock(serverNowNs) {
      // server monotonic ms minus our monotonic ms at receipt: converts engine deadlines to local time.
      // A message's stamp is late by its trip; the clock round trips (syncClock) give a better offset.
      if (link.bestTripMs === undefined) link.offsetMs = serverNowNs / 1e6 - performance.now();
    }
    link.serverNowMs = () => performance.now() + link.offsetMs;

    // hello and snapshot are sent from the server's connect handler and may arrive before "connect" fires
    socket.on("connect", () => setIndicator(link.seq >= 0 ? "online" : "connecting"));
    socket.on("disconnect", () => { link.seq = -1; setIndicator("offline"); });
    socket.on("connect_error", (err) => {
      if (err && err.data && err.data.code) {  // refused (a wrong PIN): the box is there, say why, not "offline"
        socket.disconnect();
        setIndicator("refused");
        if (options.onRefused) options.onRefused(err.data);
        return;
      }
      setIndicator("offline");
    });
    socket.on(E.hello, (hello) => {
      link.hello = hello;
      if (hello.pass) sessionStorage.setItem(passKey, hello.pass);
      clock(hello.server_now_ns);
      if (options.onHello) options.onHello(hello);
    });
    if (options.onPinShown) socket.on(E.pin_shown, options.onPinShown);
    socket.on(E.snapshot, (snap) => {
      clock(snap.server_now_ns);
      link.seq = snap.seq;
      link.serverEpoch = snap.epoch || "";  // the server's serving run: seq starts again at 0 after a restart
      link.view = snap.view;
      setIndicator("online");
      setCapture(link.view);
      document.body.dataset.seq = String(link.seq);
      options.onView(link.view, null, link.seq);
    });
    socket.on(E.update, (update) => {
      if (link.seq < 0 || update.seq <= link.seq) return;     // before the snapshot, or already in it
      if (update.seq !== link.seq + 1) {                       // a number went missing: start again
        link.seq = -1;
        setIndicator("resync");
        socket.emit(E.resync, {});
        return;
      }
      clock(update.server_now_ns);
      Object.assign(link.view, update.changes);
      for (const key of update.removed) delete link.view[key];
      link.seq = update.seq;
      setCapture(link.view);
      document.body.dataset.seq = String(link.seq);
      options.onView(link.view, update.event, link.seq, Object.keys(update.changes).concat(update.removed));
    });

    /* emit with an id, resent with the same id until acknowledged; resolves with the ack.
       Requests go one at a time, in order: the server handles each event in a thread of its own, so two
       taps sent together could otherwise be applied in the other order (a release before its press).
       options.hold: a request made while the link is down, or not acknowledged before the link dropped, is
       not sent later on its own: it resolves {ok: false, held: true, id} and the page asks the person (a tap
       the host made seconds ago must not be applied behind their back once the box is back). */
    let chain = Promise.resolve();
    link.epoch = 0;                                  // counts connections: a new one means the box may have restarted
    socket.on("connect", () => { link.epoch++; });
    link.request = function (eventName, payload, attempts, options) {
      const body = Object.assign({ id: S.newId() }, payload);
      const hold = !!(options && options.hold);
      const held = () => ({ ok: false, held: true, id: body.id,
                            error: { code: "held", ru: S.t("pending.title"), en: S.t("pending.title") } });
      const run = () => new Promise((resolve) => {
        let left = attempts || 5;
        const epoch = link.epoch;
        const attempt = () => {
          if (hold && (!socket.connected || link.seq < 0 || link.epoch !== epoch)) return resolve(held());
          socket.timeout(3000).emit(eventName, body, (err, ack) => {
            if (!err) return resolve(ack);
            if (hold && (!socket.connected || link.epoch !== epoch)) return resolve(held());
            if (--left > 0) return setTimeout(attempt, 200);
            resolve({ ok: false, error: { code: "timeout", ru: "Нет ответа от бокса", en: "No answer from the box" } });
          });
        };
        attempt();
      });
      const result = chain.then(run);
      chain = result;
      return result;
    };
    /* id: the same id for the same intent (a double tap), so the server applies it once */
    link.command = (name, args, id, options) => link.request(E.command, Object.assign(id ? { id } : {}, { name, args: args || {} }),
                                                             undefined, options);
    /* the server's clock, NTP-style: offset from the fastest of a few round trips (countdowns use it) */
    link.syncClock = function (rounds) {
      let best = Infinity;
      const once = (left) => {
        const sent = performance.now();
        socket.timeout(2000).emit(E.clock, {}, (err, reply) => {
          if (err) return;
          const now = performance.now(), trip = now - sent;
          if (trip < best) { best = trip; link.offsetMs = reply.server_now_ns / 1e6 + trip / 2 - now; link.bestTripMs = trip; }
          if (left > 1) once(left - 1);
        });
      };
      once(rounds || 5);
    };
    socket.on("connect", () => link.syncClock(5));
    return link;
  };

  /* remaining ms until a server deadline (ns, server monotonic), or null */
  S.remainingMs = (link, deadlineNs) => (deadlineNs == null ? null : deadlineNs / 1e6 - link.serverNowMs());

  /* Presses in time order. Only the answerer's and the queued presses count (eurocup 2.9); every other one is struck
     through with a short word of why. The press that answers now, or will answer next, is highlighted. */
  const OUTCOME = S.names.outcomes;  // press outcomes by name (web/names.py)
  const COUNTING = new Set([OUTCOME.ANSWERER, OUTCOME.QUEUED]);
  S.nextPress = function (v) {
    const presses = v.presses || [];
    if (v.question && v.question.over) return -1;
    if (v.answerer !== null && v.answerer !== undefined) {
      for (let i = presses.length - 1; i >= 0; i--) if ((presses[i].outcome === OUTCOME.ANSWERER || presses[i].carried) && presses[i].player === v.answerer) return i;
      return -1;
    }
    const eligible = new Set((v.players || []).filter((p) => p.eligible).map((p) => p.index));
    return presses.findIndex((p) => COUNTING.has(p.outcome) && eligible.has(p.player));
  };
  S.renderPresses = function (list, v) {
    const next = S.nextPress(v);
    const presses = v.presses || [];
    // the view holds the current round of pressing only (after a «Минус»: a new list); a queued signal that
    // answers now (``carried``, eurocup 2.10.1) leads it with no gap, and the gaps count from the round's own first press
    const fresh = presses.filter((p) => !p.carried);
    const first = fresh.find((p) => COUNTING.has(p.outcome)) || fresh[0];
    list.classList.toggle("over", !!(v.question && v.question.over));
    list.replaceChildren(...presses.map((p, i) => {
      const counts = COUNTING.has(p.outcome);
      const gapMs = first ? Math.round((p.t_ns - first.t_ns) / 1e6) : 0;
      return S.el("li", { class: [p.source === S.names.sources.PHONE ? "phone" : "", counts ? "counts" : "void", i === next ? "next" : ""].join(" ").trim(),
                          dataset: { outcome: p.outcome || "" } },
        S.el("span", { class: "name" }, v.players[p.player] ? v.players[p.player].name : "#" + (p.player + 1)),
        S.el("span", { class: "gap" }, p === first || !first || p.carried ? "" : (gapMs >= 0 ? "+" : "−") + Math.abs(gapMs) + "\u00a0" + S.t("unit.ms")),
        counts ? null : S.el("span", { class: "why" }, S.t("press." + p.outcome)),
        p.source === S.names.sources.PHONE ? S.el("span", { class: "tag" }, S.t("board.phone")) : null);
    }));
  };

  /* A correction or an appeal's decision (view.announcement) as lines people read: {title, what, scores, notes}. */
  S.announcementLines = function (a) {
    const t = S.t, section = (sec) => (sec ? " (" + S.word("announce.section", { section: sec }) + ")" : "");
    const verdict = a.kind === "appeal_rejected" ? t("announce.stands") : a.kind === "question_voided" ? ""
      : a.now === true ? t("announce.now_right") : a.now === false ? t("announce.now_wrong") : "";
    // what it was about: a question (with whose answer), the action an undo took back, or the battle itself
    const q = a.question;
    const about = q ? S.format(t(a.name ? "announce.question" : "announce.question_only"),
                               { name: a.name, theme: S.themeName(q.theme_name, q.theme, q.theme_shootout), price: q.price }) : "";
    const what = (a.action ? S.actionWords(a.action) : a.battle_named || about) + (verdict ? " — " + verdict : "");
    const said = a.reason || a.claim;  // the host's or the player's own words, quoted on a line of their own
    const notes = (said ? ["«" + said + "»"] : []).concat((a.voided || []).map((p) => S.word("announce.voided", { name: p.name }) + section(a.void_section)))
      .concat((a.restored || []).map((p) => S.word("announce.restored", { name: p.name })));
    return { title: t("announce." + a.kind) + section(a.section), what,
             scores: (a.scores || []).map((row) => ({ name: row.name, old: row.old === null ? null : String(row.old), new: String(row.new) })), notes };
  };
  /* A host action in words («Верно» — Аня, 20): the undo bar and the hall's announcement of an undo say the same */
  S.actionWords = function (a) {
    if (!a) return "";
    const key = a.type === "AnswerJudged" ? "action.AnswerJudged." + (a.correct ? "right" : "wrong") : "action." + a.type;
    return S.format(key in S.strings ? S.t(key) : S.t("action.other"), { name: a.name || "", price: a.price === null ? "" : a.price });
  };
  S.renderAnnouncement = function (box, a) {
    const lines = S.announcementLines(a), el = S.el;
    box.replaceChildren(...[  // (replaceChildren writes a null as the text «null»: left out instead)
      el("div", { class: "announce-title" }, lines.title),
      lines.what ? el("div", { class: "announce-what" }, lines.what) : null,
      lines.scores.length ? el("div", { class: "announce-scores" }, ...lines.scores.map((row) => el("span", { class: "announce-score" },
        el("span", { class: "name" }, row.name), " ", row.old === null ? null : [el("span", { class: "old" }, row.old), " → "],
        el("b", { class: "new" }, row.new)))) : null,
      ...lines.notes.map((note) => el("div", { class: "announce-note" }, note))].filter(Boolean));
    box.className = box.className.replace(/\bkind-\S+/g, "").trim() + " kind-" + a.kind;
  };

  /* Whose buttons answered the test: names (or «Кнопка 2» before a battle), or «no presses yet». */
  S.testPressed = function (v) {
    const pressed = v.button_test_pressed || [];
    if (!pressed.length) return S.t("test.none_yet");
    return S.t("test.pressed") + " " + pressed.map((i) => (v.players && v.players[i] ? v.players[i].name
      : S.word("test.button_n", { n: i + 1 }))).join(", ");
  };

  S.drawCountdown = function (box, lnk, v) {
    const d = v.deadlines || {};
    const which = d.answer ? "answer" : d.press_window ? "press_window" : null;
    const bar = box.querySelector(".bar"), label = box.querySelector(".label");
    if (!which) { box.classList.remove("active", "expired"); bar.style.width = "0"; label.textContent = ""; return; }
    const left = Math.max(0, S.remainingMs(lnk, d[which].at_ns));
    box.classList.add("active");
    box.classList.toggle("expired", left === 0);
    box.dataset.kind = which;
    bar.style.width = (100 * left / d[which].total_ms) + "%";
    label.textContent = (left / 1000).toFixed(1);
  };

  S.el = function (tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "style") node.style.cssText = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child.nodeType ? child : document.createTextNode(String(child)));
    }
    return node;
  };
})();
