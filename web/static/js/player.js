/* A player's phone as a fallback buzzer (only while the host enables phones; marked lower precision). */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const $ = (id) => document.getElementById(id);
  const SEAT_KEY = "svoyak.player.seat";
  let view = null;
  const link = S.connect("/player", { onView: (v) => { view = v; render(); } });

  function seat() { const s = sessionStorage.getItem(SEAT_KEY); return s === null ? null : Number(s); }
  function render() {
    const players = view.players || [];
    $("seats").replaceChildren(...players.map((p) => el("button", {
      class: "seat" + (seat() === p.index ? " chosen" : ""), style: "--led:" + (p.led || "#888"),
      onclick: () => { sessionStorage.setItem(SEAT_KEY, String(p.index)); render(); } }, p.name)));
    $("phones-off").hidden = !!view.phones_enabled;
    $("buzz").disabled = !view.phones_enabled || seat() === null || !view.battle;
  }
  $("buzz").addEventListener("pointerdown", async () => {
    if ($("buzz").disabled) return;
    const ack = await link.request(S.events.press, { player: seat() }, 2);
    $("buzz-result").textContent = ack.ok ? t(ack.counted ? "player.counted" : "player.not_counted") : S.both(ack.error);
  });
})();
