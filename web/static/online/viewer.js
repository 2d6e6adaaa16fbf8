/* The online viewer: the board's updates from the organiser's NATS cluster (docs/spectators.md). Read-only: a
   viewer is the cluster's anonymous user, which may subscribe to svoyak.audience.> and publish nothing. Whole
   from the next snapshot (the box publishes one every few seconds), then numbered updates; a gap waits for the
   next snapshot. The payloads are the box's /board ones (docs/socketio-events.md). */
(function () {
  "use strict";
  const params = new URLSearchParams(location.search);
  const box = (params.get("box") || "").replace(/[^A-Za-z0-9_-]/g, "_");
  const servers = (params.get("servers") || "").split(",").filter(Boolean);
  const $ = (id) => document.getElementById(id);
  let view = null, seq = -1;

  function state(text) { $("state").textContent = text; }
  function item(cls, text) { const li = document.createElement("li"); li.className = cls || ""; li.textContent = text; return li; }

  function render() {
    const battle = view && view.battle;
    $("waiting").hidden = !!battle;
    if (!battle) return;
    const th = view.theme, q = view.question;
    $("theme").textContent = th ? (th.name || ("Тема " + (th.index + 1))) : "";
    $("price").textContent = q && !q.over ? String(q.price) : "";
    $("answer").hidden = !(q && q.over && q.answer);
    $("answer").textContent = q && q.over && q.answer ? q.answer : "";
    $("players").replaceChildren(...(view.players || []).map((p) => {
      const li = item(p.answering ? "answering" : "", p.name);
      li.style.setProperty("--led", p.led || "#888");
      const score = document.createElement("span");
      score.className = "score";
      score.textContent = String(p.score);
      li.appendChild(score);
      return li;
    }));
    const names = (view.players || []).map((p) => p.name);
    const presses = view.presses || [], first = presses[0];
    $("presses").replaceChildren(...presses.map((press, i) =>
      item("", (names[press.player] || "?") + (i ? " +" + Math.round((press.t_ns - first.t_ns) / 1e6) + " мс" : ""))));
  }

  function onSnapshot(snap) {
    if (seq >= 0 && snap.seq <= seq) return;
    seq = snap.seq; view = snap.view;
    state("на связи · online");
    render();
  }
  function onUpdate(update) {
    if (seq < 0 || update.seq <= seq) return;
    if (update.seq !== seq + 1) { seq = -1; state("синхронизация… · resyncing…"); return; }
    Object.assign(view, update.changes);
    for (const key of update.removed) delete view[key];
    seq = update.seq;
    render();
  }

  $("box").textContent = box;
  if (!box || !servers.length || !window.nats) { state("укажите ?box=…&servers=wss://… · give ?box=…&servers=wss://…"); return; }
  window.nats.wsconnect({ servers, name: "svoyak-viewer", maxReconnectAttempts: -1, reconnectTimeWait: 1000 })
    .then((nc) => {
      nc.subscribe("svoyak.audience." + box + ".board.*", { callback: (err, msg) => {
        if (err) return;
        const kind = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
        if (kind === "snapshot") onSnapshot(msg.json()); else if (kind === "update") onUpdate(msg.json());
      } });
      (async () => {
        for await (const s of nc.status()) {
          if (s.type === "disconnect") state("нет связи · offline");
          if (s.type === "reconnect") { seq = -1; state("синхронизация… · resyncing…"); }
        }
      })().catch(() => {});
    })
    .catch(() => state("нет связи · offline"));
})();
