/* svoyak: a spectator's page follows the battle without taking a thread of the box's web server
 * (docs/spectators.md). S.spectate(namespace, options) takes S.connect's options (onHello, onView) and gives the
 * same kind of link (seq, view, hello, serverNowMs), by the fastest path that works here:
 *   1. "nats": the board's updates from the spectators' nats-server WebSocket port (vendor/nats, loaded only
 *      here), the page's start and every resync from /board/snapshot.json;
 *   2. "socket": Socket.IO /board, marked as a spectator's (the box refuses those beyond its cap);
 *   3. "poll": /board/snapshot.json every few seconds: any phone, slowly.
 * The box's own HDMI board keeps S.connect: it alone hears the PIN when the host button is held.
 */
(function () {
  "use strict";
  const S = window.SVOYAK;
  const configEl = document.getElementById("svoyak-spectators");
  const C = configEl ? JSON.parse(configEl.textContent) : null;
  const FAST_TIMEOUT_MS = 5000;   // the fast path must be up this soon, or the page takes the next one
  const SOCKET_TRIES = 3;         // refused (or failing) this many times before any snapshot: poll instead
  // A box gone silent (Wi-Fi lost, the box hung: no FIN) is noticed after this many pings unanswered, one every
  // PING_MS: about 10 s, as the board's Socket.IO (5 s + 5 s). nats.js's own default is 2 min, and the phone
  // said «на связи» for minutes of a lost box (issue 21). 1,000 phones: 330 pings a second to nats-server.
  const PING_MS = 3000, PINGS_OUT = 2;

  S.spectate = function (namespace, options) {
    if (!C || C.local) return S.connect(namespace, options);
    const link = { seq: -1, view: null, offsetMs: 0, hello: null, path: "" };
    (S.links = S.links || []).push(link);
    link.serverNowMs = () => performance.now() + link.offsetMs;
    let early = [];         // updates heard before the snapshot they follow
    let fetching = null;

    function path(name) {
      link.path = name;
      document.body.dataset.spectate = name;
    }
    function snapshot(body) {
      if (!link.hello) {
        link.hello = body.hello;
        if (options.onHello) options.onHello(body.hello);
      }
      const snap = body.snapshot;
      link.offsetMs = snap.server_now_ns / 1e6 - performance.now();
      const changed = snap.seq !== link.seq;
      link.seq = snap.seq;
      link.view = snap.view;
      S.setIndicator("online");
      document.body.dataset.seq = String(link.seq);
      if (changed) options.onView(link.view, null, link.seq);
      const waiting = early;
      early = [];
      for (const message of waiting) if (message.seq > link.seq) update(message);
    }
    let waitMs = 0;          // after a 503 (too many asking at once): doubled each time, up to a minute
    function fetchSnapshot() {
      if (fetching) return fetching;
      fetching = fetch(C.snapshot_url, { cache: "no-store", credentials: "same-origin" })
        .then((response) => {
          waitMs = response.status === 503 ? Math.min(60000, Math.max(1000, waitMs * 2)) : 0;
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then(snapshot)
        .finally(() => { fetching = null; });
      return fetching;
    }
    function update(message) {
      if (link.seq < 0) { if (early.length < 100) early.push(message); return; }
      if (message.seq <= link.seq) return;
      if (message.seq !== link.seq + 1) {      // a number went missing: the snapshot again
        link.seq = -1;
        early = [message];
        S.setIndicator("resync");
        whole();
        return;
      }
      link.offsetMs = message.server_now_ns / 1e6 - performance.now();
      Object.assign(link.view, message.changes);
      for (const key of message.removed) delete link.view[key];
      link.seq = message.seq;
      document.body.dataset.seq = String(link.seq);
      options.onView(link.view, message.event, link.seq, Object.keys(message.changes).concat(message.removed));
    }

    /* the snapshot until it comes: at once, then after each wait the box asked for (or 2 s when unreachable) */
    function whole() {
      return fetchSnapshot().catch(() => {
        if (link.seq >= 0) return;
        S.setIndicator(waitMs ? "resync" : "offline");
        return new Promise((ok) => setTimeout(ok, (waitMs || 2000) * (0.75 + Math.random() / 2))).then(whole);
      });
    }

    /* 1. nats-server's WebSocket port; resolves true once subscribed (the snapshot follows), false to take the
       next path */
    function fast() {
      if (!C.ws_port || !C.update_subject || !window.fetch || !window.WebSocket) return Promise.resolve(false);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), FAST_TIMEOUT_MS);
        const script = document.createElement("script");
        script.src = "/static/vendor/nats/nats.js";
        script.onerror = () => { clearTimeout(timer); resolve(false); };
        script.onload = () => {
          if (!window.nats || !window.nats.wsconnect) { clearTimeout(timer); return resolve(false); }
          window.nats.wsconnect({ servers: "ws://" + location.hostname + ":" + C.ws_port, name: "svoyak-spectator",
                                  maxReconnectAttempts: -1, reconnectTimeWait: 1000, timeout: FAST_TIMEOUT_MS,
                                  pingInterval: PING_MS, maxPingOut: PINGS_OUT })
            .then((nc) => {
              link.nats = nc;
              nc.subscribe(C.update_subject, { callback: (err, msg) => { if (!err) update(msg.json()); } });
              watch(nc);
              return nc.flush();
            })
            .then(() => { clearTimeout(timer); path("nats"); resolve(true); whole(); })
            .catch(() => { clearTimeout(timer); if (link.nats) link.nats.close(); link.nats = null; resolve(false); });
        };
        document.head.appendChild(script);
      });
    }
    function watch(nc) {
      (async () => {
        for await (const status of nc.status()) {
          // stale: the pings went unanswered (the socket's close may wait long for a box that says nothing)
          if (status.type === "disconnect" || status.type === "staleConnection") S.setIndicator("offline");
          if (status.type === "reconnect") { link.seq = -1; whole(); }
        }
      })().catch(() => {});
    }

    /* 2. Socket.IO, as a spectator; 3. polling once it is refused */
    function socket() {
      path("socket");
      const inner = S.connect(namespace, Object.assign({}, options, { query: { [C.audience_query]: "1" } }));
      let failures = 0;
      inner.socket.on("connect_error", () => {
        if (inner.seq >= 0 || ++failures < SOCKET_TRIES) return;
        inner.socket.disconnect();
        poll();
      });
      inner.socket.on("connect", () => { failures = 0; });
      Object.defineProperty(link, "seq", { get: () => inner.seq, configurable: true });
      link.serverNowMs = () => inner.serverNowMs();
    }
    function poll() {
      path("poll");
      Object.defineProperty(link, "seq", { value: -1, writable: true, configurable: true });
      link.serverNowMs = () => performance.now() + link.offsetMs;
      const again = () => setTimeout(tick, (waitMs || C.poll_ms) * (0.75 + Math.random() / 2));
      const tick = () => fetchSnapshot().catch(() => S.setIndicator("offline")).then(again);
      setTimeout(tick, Math.random() * 3000);  // a hall's phones refused together do not all come back together
    }

    S.setIndicator("connecting");
    fast().then((ok) => { if (!ok) socket(); });
    return link;
  };
})();
