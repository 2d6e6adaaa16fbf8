/* On-screen buzzers: press and release through the capture simulator. Keys 1-4 (and Q W E R) per player. */
(function () {
  "use strict";
  const S = window.SVOYAK, el = S.el;
  const $ = (id) => document.getElementById(id);
  const KEYS = ["1", "2", "3", "4"], ALT = ["q", "w", "e", "r"];
  let view = null;
  const link = S.connect("/sim", { onView: (v) => { view = v; render(); } });

  async function act(player, action) {
    // in order, one at a time (link.request): a release never overtakes its press
    const ack = await link.request(S.events.simulate, { player, action }, 1);
    if (ack && !ack.ok) S.toast(S.both(ack.error), "error");
  }
  function render() {
    const players = (view.players && view.players.length) ? view.players :
      KEYS.map((_, i) => ({ index: i, name: S.t("sim.player") + " " + (i + 1), led: "#888" }));
    $("sim-buttons").replaceChildren(...players.map((p) => el("button", {
      class: "sim-button" + (p.answering ? " lit" : ""), style: "--led:" + (p.led || "#888"),
      dataset: { player: p.index },
      onpointerdown: (e) => { e.preventDefault(); act(p.index, "press"); },
      onpointerup: () => act(p.index, "release"),
      onpointerleave: (e) => { if (e.buttons) act(p.index, "release"); } },
      el("span", { class: "key" }, KEYS[p.index] || ""), el("span", { class: "name" }, p.name))));
  }
  // the host's reset button: a press starts a new round; held, it asks for the PIN on the box's board
  let hostDown = false;
  const host = (pressed) => { if (hostDown === pressed) return; hostDown = pressed; $("sim-host").classList.toggle("lit", pressed); act("host", pressed ? "press" : "release"); };
  $("sim-host").addEventListener("pointerdown", (e) => { e.preventDefault(); host(true); });
  $("sim-host").addEventListener("pointerup", () => host(false));
  $("sim-host").addEventListener("pointerleave", () => host(false));
  document.addEventListener("keydown", (e) => { if (e.key.toLowerCase() === "h" && !e.repeat) host(true); });
  document.addEventListener("keyup", (e) => { if (e.key.toLowerCase() === "h") host(false); });
  const down = new Set();
  function playerOf(key) { const k = key.toLowerCase(); const i = KEYS.indexOf(k); return i >= 0 ? i : ALT.indexOf(k); }
  document.addEventListener("keydown", (e) => {
    const p = playerOf(e.key);
    if (p < 0 || down.has(p) || e.repeat) return;
    down.add(p); act(p, "press");
  });
  document.addEventListener("keyup", (e) => {
    const p = playerOf(e.key);
    if (p < 0) return;
    down.delete(p); act(p, "release");
  });
})();
