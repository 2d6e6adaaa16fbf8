/* A player's phone as a fallback buzzer (only while the host enables phones; marked lower precision).
 * A phone presses for one seat: the player picks it and types its code (the host page shows the codes);
 * the code goes with every press and the box checks it. A refused code is forgotten and asked for again. */
(function () {
  "use strict";
  const S = window.SVOYAK, t = S.t, el = S.el;
  const $ = (id) => document.getElementById(id);
  const SEAT_KEY = "svoyak.player.seat", CODE_KEY = "svoyak.player.code";
  const CODE_REFUSALS = ["error.seat_code", "error.seat_code_locked"];
  let view = null, phonesWere = null, battleWas;
  const link = S.connect("/player", { onView: (v) => { view = v; renewed(); render(); } });

  function seat() { const s = sessionStorage.getItem(SEAT_KEY); return s === null ? null : Number(s); }
  function code() { return sessionStorage.getItem(CODE_KEY); }
  function forgetCode() { sessionStorage.removeItem(CODE_KEY); }

  /* phones switched on again, or a new battle: the box made new codes, the one we hold is dead */
  function renewed() {
    const battle = view.battle ? view.battle.id : null;
    if ((phonesWere === false && view.phones_enabled) || (battleWas !== undefined && battle !== battleWas)) forgetCode();
    phonesWere = !!view.phones_enabled;
    battleWas = battle;
  }

  function render() {
    const players = view.players || [];
    $("seats").replaceChildren(...players.map((p) => el("button", {
      class: "seat" + (seat() === p.index ? " chosen" : ""), style: "--led:" + (p.led || "#888"),
      onclick: () => {
        if (seat() !== p.index) forgetCode();
        sessionStorage.setItem(SEAT_KEY, String(p.index));
        $("code-error").textContent = "";
        render();
        if (!$("code-form").hidden) $("code").focus();
      } }, p.name)));
    const on = !!view.phones_enabled;
    $("phones-off").hidden = on;
    $("code-form").hidden = !on || seat() === null || code() !== null;
    $("buzz").disabled = !on || seat() === null || code() === null || !view.battle;
  }

  $("code-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const typed = $("code").value.trim();
    $("code").value = "";
    const ack = await link.request(S.events.claim, { player: seat(), code: typed }, 2);
    if (ack.ok) {
      sessionStorage.setItem(CODE_KEY, typed);
      $("code-error").textContent = "";
    } else {
      $("code-error").textContent = S.both(ack.error);
    }
    render();
  });

  $("buzz").addEventListener("pointerdown", async () => {
    if ($("buzz").disabled) return;
    const ack = await link.request(S.events.press, { player: seat(), code: code() }, 2);
    if (!ack.ok && CODE_REFUSALS.includes(ack.error.code)) {
      forgetCode();                                  // wrong or stale: ask for the code again
      $("code-error").textContent = S.both(ack.error);
      $("buzz-result").textContent = "";
      render();
      return;
    }
    $("buzz-result").textContent = ack.ok ? t(ack.counted ? "player.counted" : "player.not_counted") : S.both(ack.error);
  });
})();
