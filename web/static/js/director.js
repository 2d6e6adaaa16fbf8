/* The director's pages: what they do in the browser (no inline script: the Content-Security-Policy forbids it). */
(function () {
  "use strict";

  // Registration deadline: a date-time input has no offset; send the browser's, so the deadline means this
  // device's clock.
  const offset = document.querySelector("#deadline input[name=offset]");
  if (offset) {
    const m = -new Date().getTimezoneOffset(), a = Math.abs(m);
    offset.value = (m < 0 ? "-" : "+") + String(Math.floor(a / 60)).padStart(2, "0") + ":" + String(a % 60).padStart(2, "0");
  }

  // Written-round sheets, keyboard only: number, Enter (jumps to the marks), marks, Enter (saves, back to the number).
  const form = document.getElementById("sheet");
  if (!form) return;
  const player = document.getElementById("player"), marks = document.getElementById("marks"),
        count = document.getElementById("count"), echo = document.getElementById("echo"),
        table = document.getElementById("entered"), need = Number(form.dataset.marks);
  marks.addEventListener("input", () => { count.textContent = marks.value.length + "/" + need; });
  player.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); marks.focus(); } });
  marks.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); form.requestSubmit(); } });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (marks.value.length !== need) { echo.className = "bad"; echo.textContent = marks.value.length + " ≠ " + need; return; }
    const body = {player: player.value, marks: marks.value, command_id: crypto.randomUUID ? crypto.randomUUID() : String(Math.random())};
    const reply = await fetch(location.pathname, {method: "POST", headers: {"Content-Type": "application/json", "Accept": "application/json"}, body: JSON.stringify(body)});
    const data = await reply.json();
    // the page speaks one language at a time
    if (!data.ok) { echo.className = "bad"; echo.textContent = (SVOYAK.language === "en" ? data.en : data.ru) || data.error; return; }
    echo.className = "flash"; echo.textContent = data.name + ": " + data.score;
    const row = table.insertRow(1); row.insertCell().textContent = data.name + " " + data.player;
    const cell = row.insertCell(); cell.className = "num"; cell.textContent = data.score;
    player.value = ""; marks.value = ""; count.textContent = "0/" + need; player.focus();
  });
})();
