/* The web table: the person's seat at the bottom of the drawn table. The server pushes the
   table at each of the person's decisions; between two, the tricks and hands that ended
   are shown for a pause (the server's --pause) before the cards can be played again. A
   hand's end is drawn from the hand itself (the server's frame of it): its own header, its
   last trick, the cards left; never the next hand's. */
"use strict";
(function () {
  const T = window.NapTable, $ = id => document.getElementById(id);
  let state = {}, picked = new Set(), shownTricks = -1, shownHand = null, shownEnd = null, frames = [], busy = false,
    closed = false;
  function post(path, body) {
    return fetch(path, {method: "POST", body: JSON.stringify(body || {})}).then(r => r.json()).catch(() => ({}));
  }
  const answer = text => post("/answer", {text});
  const kind = () => state.table && state.table.view ? state.table.view.kind : null;
  const several = () => ["exchange", "garnet_discard"].includes(kind());
  const mine = () => !state.waiting && !state.over && !busy && !closed;
  const signed = x => (x >= 0 ? "+" : "") + x;
  const named = (t, s, name) => s === t.seat && name !== "you" ? name + " (you)" : name;
  // Cards each other seat still holds: the hand's size less what it has played (none when it sits out).
  function held(t, s) {
    const v = t.view || {};
    if (v.active && !v.active.includes(s)) return 0;
    const plays = (v.tricks || []).flatMap(x => x[1]).concat(v.trick || []);
    return Math.max(0, (t.hand_size || 5) - plays.filter(p => p[0] === s).length);
  }
  // Each seat's bid, on the felt until the first card is led.
  function bids(v) {
    const out = {};
    if ((v.tricks || []).length || (v.trick || []).length) return out;
    for (const [s, b] of v.bids || []) out[s] = b;
    return out;
  }
  function model(t, trick, winner, caption) {
    const v = t.view || {}, you = t.seat, bid = trick ? {} : bids(v);
    const seats = t.seats.map((name, s) => ({
      name: named(t, s, name),
      chips: (t.won || [])[s],
      note: [s === v.dealer ? "dealer" : "", s === v.bidder && v.contract ? "bidder" : "",
             (v.peeps || []).includes(s) ? "peeped" : "", v.garnet_taker === s ? "Sir Garnet" : "", (v.won || [])[s] ? (v.won[s] + " trick" + (v.won[s] > 1 ? "s" : "")) : ""].filter(Boolean).join(" · "),
      bid: bid[s],
      cards: s === you ? (t.hand || []).map(c => c.card) : null,
      hidden: s === you ? 0 : held(t, s),
      turn: s === you && !trick && mine(),
    }));
    const info = [{label: "match", text: t.match + ", hand " + ((v.hand_no || 0) + 1) + " of " + t.hands}];
    if (v.contract) info.push({label: "contract", text: v.contract + " by " + t.seats[v.bidder]});
    if (v.trumps !== null && v.trumps !== undefined) info.push({label: "trumps", text: T.suit(v.trumps)});
    info.push({label: "kitty", text: String(v.kitty || 0)});
    if ((v.seen || []).length) info.push({label: "seen", cards: v.seen});
    if ((v.exchanges || []).length) info.push({label: "bought", text: v.exchanges.map(([s, n]) => t.seats[s] + " " + n).join(", ")});
    const legal = (v.legal || []).filter(x => typeof x === "number");
    return {seats, bottom: you, trick: trick || v.trick || [], winner: trick ? winner : null, info, caption,
      play: {seat: you, legal: kind() === "play" ? legal : [], picked: [...picked], active: !trick && mine() && (kind() === "play" || several()),
             choosing: several(), pick: c => choose(c)}};
  }
  // A finished hand as it stood at its end, from the server's frame of it.
  function ended(t, h) {
    const seats = t.seats.map((name, s) => ({
      name: named(t, s, name), chips: (h.won || [])[s],
      note: [s === h.dealer ? "dealer" : "", s === h.bidder && h.contract ? "bidder" : "",
             h.tricks[s] ? h.tricks[s] + " trick" + (h.tricks[s] > 1 ? "s" : "") : ""].filter(Boolean).join(" · "),
      cards: s === t.seat ? h.yours : null, hidden: s === t.seat ? 0 : h.held[s], turn: false}));
    const info = [{label: "match", text: h.match + ", hand " + (h.n + 1) + " of " + h.hands}];
    if (h.contract) info.push({label: "contract", text: h.contract + " by " + t.seats[h.bidder]});
    if (h.trumps !== null && h.trumps !== undefined) info.push({label: "trumps", text: T.suit(h.trumps)});
    info.push({label: "kitty", text: String(h.kitty || 0)});
    const caption = "hand " + (h.n + 1) + " over: " + (h.contract ? h.contract + " by " + t.seats[h.bidder] + ", " + h.result : h.result)
      + " — " + t.seats.map((a, i) => a + " " + signed(h.chips[i])).join(", ");
    return {seats, bottom: t.seat, trick: h.trick || [], winner: h.winner, info, caption,
      play: {seat: t.seat, legal: [], picked: [], active: false, pick: () => {}}};
  }
  function choose(c) {
    if (!mine()) return;
    const name = state.table.hand.find(h => h.card === c).name;
    if (several()) { picked.has(c) ? picked.delete(c) : picked.add(c); draw(); return; }
    if (kind() === "play") answer(name);
  }
  function draw() {
    const t = state.table, h = state.hand_over;
    document.body.dataset.turn = mine() && t ? (t.match + "." + t.turn) : "";
    $("message").textContent = closed ? (state.message ? state.message + " (the table has closed)" : "the table has closed")
      : (state.message || "");
    $("error").textContent = state.error || "";
    if (t && !busy && state.over && h && h.match === t.match) {  // the match's end: its last hand as it ended
      T.draw($("table"), ended(t, h));
    } else if (t && !busy) {
      const happened = (t.happened || []).join("; ");
      T.draw($("table"), model(t, null, null, mine() ? (happened ? "since your turn: " + happened : t.ask) : (state.message || "")));
    }
    $("ask").textContent = mine() && t ? t.ask : "";
    $("why").textContent = mine() && t ? (t.unplayable || []).join("; ") : "";
    for (const id of ["send", "quit", "typed"]) $(id).disabled = closed;
    const ch = $("choices"); ch.replaceChildren();
    if (mine() && several()) {
      const go = document.createElement("button");
      go.type = "button"; go.id = "throw";
      go.textContent = picked.size ? "throw out " + [...picked].map(T.text).join(" ") : (kind() === "exchange" ? "stand: throw out none" : "pick 5 cards to throw out");
      go.onclick = () => { answer([...picked].map(T.text).join(" ") || "none"); picked.clear(); };
      ch.appendChild(go);
    } else if (mine() && kind() !== "play") {
      (t.choices || []).forEach((label, i) => {
        const b = document.createElement("button"); b.type = "button"; b.className = "choice";
        b.textContent = (i + 1) + ") " + label; b.onclick = () => answer(String(i + 1)); ch.appendChild(b);
      });
    }
    if (state.over && state.left && !closed) {
      const b = document.createElement("button"); b.type = "button"; b.textContent = "next match"; b.id = "next";
      b.onclick = () => post("/next"); ch.appendChild(b);
    }
    const run = state.running || (t && t.running);
    $("running").textContent = run ? "all matches so far: " + Object.entries(run).map(([a, c]) => a + " " + signed(c)).join("   ") : "";
    $("helptext").textContent = t ? t.help : "";
    $("standings").hidden = !state.standings; $("standings").textContent = state.standings || "";
    $("resume").hidden = !state.resume;
    if (state.resume) {
      $("resume").replaceChildren("Go on with: ");
      const code = document.createElement("code"); code.textContent = state.resume; $("resume").appendChild(code);
    }
    const endedText = $("ended"); endedText.replaceChildren();
    for (const text of (state.ended || []).slice().reverse()) {
      const p = document.createElement("pre"); p.className = "ended"; p.textContent = text; endedText.appendChild(p);
    }
    if (mine() && kind() === "play" && !document.activeElement.closest("#table")) {
      const first = $("table").querySelector("button.nt-card.legal");
      if (first && document.activeElement.tagName !== "INPUT") first.focus();
    } else if (mine() && !several() && kind() !== "play" && document.activeElement.tagName !== "INPUT") {
      const first = ch.querySelector("button"); if (first) first.focus();
    }
  }
  // Before a new decision: the trick that ended meanwhile, and the hand that ended, each held still a while.
  function queue(s) {
    const t = s.table, v = (t && t.view) || {}, pause = (s.pause || 0) * 1000, h = s.hand_over;
    const hand = t ? t.match + "." + (v.hand_no || 0) : null;
    const end = h ? h.match + "." + h.n : null;
    // A hand's end is shown once, when it is news (not the one a page opened late finds);
    // at the match's end it stays (draw shows it).
    if (h && t && shownHand !== null && end !== shownEnd && !s.over) {
      frames.push({model: ended(t, h), ms: pause * 1.5});
      shownTricks = 0;
    }
    if (h) shownEnd = end;
    const tricks = v.tricks || [];
    if (t && hand === shownHand && tricks.length > shownTricks && tricks.length) {
      const tr = tricks[tricks.length - 1];
      frames.push({model: model(t, tr[1], tr[2], "trick " + tricks.length + " to " + t.seats[tr[2]]), ms: pause});
    }
    if (t) { shownHand = hand; shownTricks = tricks.length; }
  }
  function play() {
    if (busy || !frames.length) { draw(); return; }
    const f = frames.shift();
    if (!f.ms) { play(); return; }
    busy = true;
    document.body.dataset.frame = f.model.caption;
    T.draw($("table"), f.model);
    setTimeout(() => { busy = false; delete document.body.dataset.frame; play(); }, f.ms);
  }
  function typed() { answer($("typed").value); $("typed").value = ""; }
  $("send").onclick = typed;
  $("typed").onkeydown = e => { if (e.key === "Enter") typed(); };
  $("quit").onclick = () => post("/quit").then(r => { if (r.message) { state.message = r.message; draw(); } });
  $("help").onclick = () => {
    const h = $("helptext"); h.hidden = !h.hidden; $("help").setAttribute("aria-expanded", String(!h.hidden));
  };
  document.addEventListener("keydown", e => {
    if (e.target.tagName === "INPUT" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "h") { $("help").onclick(); return; }
    const n = Number(e.key);
    if (!Number.isInteger(n) || n < 1 || !mine()) return;
    if (kind() === "play" || several()) {
      const card = (state.table.hand || [])[n - 1];
      if (card) { e.preventDefault(); choose(card.card); }
    } else {
      const b = $("choices").querySelectorAll("button")[n - 1];
      if (b) { e.preventDefault(); b.click(); }
    }
  });
  const source = new EventSource("/events");
  source.onmessage = e => {
    const s = JSON.parse(e.data);
    if (!s.waiting) picked.clear();
    queue(s);
    state = s;
    if (s.gone) { closed = true; source.close(); }
    play();
  };
  // The server went (the run ended or stopped): say so once, and stop asking.
  source.onerror = () => { closed = true; source.close(); draw(); };
})();
