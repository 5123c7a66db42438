/* The live page: the run's state as the server pushes it; it stops listening when the run
   is over, or when the server has gone. */
"use strict";
(function () {
  const T = window.NapTable, $ = id => document.getElementById(id);
  const num = x => (x >= 0 ? "+" : "") + x.toFixed(2);
  const clock = s => {
    s = Math.max(0, Math.round(s));
    const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
    return (h ? h + " h " : "") + (h || m ? m + " min " : "") + sec + " s";
  };
  // The clock runs on between two states: from the page's own monotonic clock (a wall
  // clock may jump), and never shows less than it showed (a state may come late).
  let last = null, heard = 0, over = false, shown = 0;
  const since = () => (performance.now() - heard) / 1000;
  function tick() {
    if (!last || over) return;
    shown = Math.max(shown, last.elapsed + since());
    let eta;
    if (last.phase === "tallying") eta = "every hand played: the final standings are being tallied";
    else if (last.eta === null || last.eta === undefined) eta = last.session_hands ? "estimating the time to go" : "estimated when the first hands are played";
    else {
      const left = Math.max(0, last.eta - since());
      eta = "about " + clock(left) + " to go (finish near " + new Date(Date.now() + left * 1000).toLocaleTimeString() + ")";
    }
    $("clock").textContent = "elapsed " + clock(shown) + "; " + eta
      + (last.phase === "tallying" ? "" : "; " + last.in_play + " table" + (last.in_play === 1 ? "" : "s") + " in play");
  }
  function standings(st) {
    const box = $("standings"); box.replaceChildren();
    if (!st) { box.textContent = "standings after the first match"; return; }
    for (const [variant, rows] of Object.entries(st.variants)) {
      const h = document.createElement("h2"); h.textContent = variant; box.appendChild(h);
      if (!rows.length) { box.appendChild(document.createTextNode("no match of " + variant + " booked yet")); continue; }
      const t = document.createElement("table"); t.className = "standings";
      t.innerHTML = "<tr><th class=n>bot</th><th>hands</th><th>per 100</th><th>95% CI</th></tr>";
      for (const r of rows) {
        const tr = document.createElement("tr");
        const ci = r.ci95 ? "[" + num(r.ci95[0]) + ", " + num(r.ci95[1]) + "]" : "—";
        for (const [text, cls] of [[r.bot, "n"], [String(r.hands), ""], [num(r.per100), ""], [ci, ""]]) {
          const td = document.createElement("td"); td.textContent = text; td.className = cls; tr.appendChild(td);
        }
        t.appendChild(tr);
      }
      box.appendChild(t);
    }
    const p = st.sprt;
    $("sprt").textContent = p ? ("SPRT " + p.a + " vs " + p.b + " (delta " + p.delta + "): " + p.boards
      + " boards, LLR " + p.llr + " in [" + p.bounds.join(", ") + "], " + (p.verdict || "undecided")) : "";
  }
  // The newest booked hand on the drawn table, at its end: the last trick by its players, the chips.
  function lastHands(l) {
    const list = $("last"); list.replaceChildren();
    if (!l || !l.last.length) { $("table").textContent = "the last hands appear as matches are booked"; return; }
    const h = l.last[l.last.length - 1], trick = (h.tricks || []).slice(-1)[0];
    const seats = l.seats.map((name, s) => ({name, chips: h.chips[s], note: [s === h.dealer ? "dealer" : "", s === h.bidder ? "bidder" : ""].filter(Boolean).join(" · ")}));
    const info = [{label: l.variant}, {label: "match", text: l.match + ", hand " + (h.n + 1) + " of " + l.hands}];
    if (h.contract) info.push({label: "contract", text: h.contract + " by " + l.seats[h.bidder]});
    if (h.trumps !== null && h.trumps !== undefined) info.push({label: "trumps", text: T.suit(h.trumps)});
    info.push({label: "kitty", text: String(h.kitty)});
    T.draw($("table"), {seats, trick: trick ? trick[1] : [], winner: trick ? trick[2] : null, info,
      caption: "last trick" + (trick ? " to " + l.seats[trick[2]] : "") + "; " + (h.contract ? h.contract + " " + h.result : h.result)});
    for (const x of l.last.slice().reverse()) {
      const li = document.createElement("li");
      li.textContent = "match " + l.match + " hand " + (x.n + 1) + ": " + (x.contract ? x.contract + " by " + l.seats[x.bidder] + ", " + x.result : x.result)
        + " — " + l.seats.map((a, i) => a + " " + (x.chips[i] >= 0 ? "+" : "") + x.chips[i]).join(", ");
      list.appendChild(li);
    }
  }
  const PHASES = {
    starting: "starting", playing: "playing", tallying: "all matches played: tallying the final standings…",
    finished: "finished", interrupted: "interrupted", stopped: "stopped: the run ended without standings"};
  function draw(s) {
    last = s; heard = performance.now();
    $("name").textContent = s.name;
    $("bar").max = s.total || 1; $("bar").value = s.done;
    $("done").textContent = s.done + " of " + s.total + " matches booked, " + s.hands.toLocaleString() + " of " + s.hands_total.toLocaleString() + " hands";
    const state = $("state");
    state.className = "state " + s.phase;
    state.textContent = PHASES[s.phase] || s.phase;
    standings(s.standings);
    lastHands(s.last);
    if (s.over === "finished") {
      $("final").hidden = false; $("final").textContent = s.final;
      $("clock").textContent = "finished in " + clock(s.elapsed);
      $("standings").hidden = true; $("sprt").hidden = true;
    } else if (s.over === "interrupted") {
      $("resume").hidden = false;
      $("resume").replaceChildren("Interrupted after " + clock(s.elapsed) + ": " + s.kept + " of " + s.total + " matches kept. Resume with: ");
      const code = document.createElement("code"); code.textContent = s.resume; $("resume").appendChild(code);
      $("clock").textContent = "";
    } else if (s.over) $("clock").textContent = "stopped after " + clock(s.elapsed);
    else tick();
  }
  const source = new EventSource("events");
  source.onmessage = e => {
    const s = JSON.parse(e.data);
    if (s.over) { over = true; source.close(); }
    draw(s);
  };
  // A closed server is not retried: the page says so once and stops.
  source.onerror = () => {
    if (over) return;
    over = true; source.close();
    const state = $("state");
    state.className = "state interrupted";
    state.textContent = "the run's page has closed: the run ended or was stopped (its terminal says which)";
  };
  setInterval(tick, 1000);
})();
