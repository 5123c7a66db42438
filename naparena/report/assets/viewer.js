/* The hand viewer: loads a run's data files as it needs them (the index, the filters' index a
   few hundred matches at a time, one match at a time) and steps through a hand on the drawn
   table. */
"use strict";
(function () {
  const T = window.NapTable, $ = id => document.getElementById(id);
  const BASE = JSON.parse($("v-config").textContent).base;
  const waiting = {}, cache = new Map(), kept = new Map();
  window.naparenaData = (name, data) => { if (waiting[name]) waiting[name](data); };
  // A data file as a promise; the last few matches are kept, so stepping through a match reads
  // it once, and the filters' index for good (`keep`).
  function load(name, keep) {
    if (kept.has(name)) return kept.get(name);
    if (cache.has(name)) return cache.get(name);
    const p = new Promise((resolve, reject) => {
      waiting[name] = data => { delete waiting[name]; resolve(data); };
      const s = document.createElement("script");
      s.src = BASE + name + ".js";
      s.onload = () => { s.remove(); if (waiting[name]) { delete waiting[name]; reject(new Error(name + " holds no data")); } };
      s.onerror = () => { s.remove(); delete waiting[name]; reject(new Error("cannot load " + BASE + name + ".js")); };
      document.head.appendChild(s);
    });
    p.catch(() => { cache.delete(name); kept.delete(name); });
    if (keep) { kept.set(name, p); return p; }
    cache.set(name, p);
    if (cache.size > 24) cache.delete(cache.keys().next().value);
    return p;
  }
  const pad = (n, w) => String(n).padStart(w, "0");
  let index = null, match = null, hand = 0, step = 0, steps = [], timer = null, found = [], searchAt = 0;
  const say = text => { $("v-step").textContent = text; };
  const fail = e => say("the hands could not be loaded: " + e.message);

  // --- one hand as steps ----------------------------------------------------------------
  const TURN = new Set(["peep", "garnet", "garnet_discard", "floater_peep"]);   // at a seat's turn to bid
  const BEFORE = new Set(["exchange"]);                                         // before the bidding
  function build(h, seats) {
    const who = s => seats[s] !== undefined ? seats[s] : "seat " + s;
    const n = seats.length, deal = h.deal || [];
    const held = deal.map(c => (c || []).slice()), out = seats.map(() => []), fresh = seats.map(() => []);
    const notes = seats.map(() => []);
    let contract = null, trumps = null, bidder = null, trick = [], winner = null, now = null, bids = {};
    const played = new Set(), list = [];
    const push = (text, extra) => list.push(Object.assign({
      text, held: held.map(x => x.slice()), out: out.map(x => x.slice()), fresh: fresh.map(x => x.slice()),
      notes: notes.map(x => x.slice()), contract, trumps, bidder, trick: trick.slice(), winner, now,
      played: new Set(played), bids: Object.assign({}, bids)}, extra || {}));
    const drop = (s, cards) => { held[s] = held[s].filter(c => !cards.includes(c)); out[s].push(...cards); };
    const take = (s, cards) => { held[s].push(...cards); fresh[s].push(...cards); held[s].sort((a, b) => a - b); };
    const bought = {};
    for (const [s, cards] of h.bought || []) bought[s] = cards;
    function decision([s, kind, answer]) {
      if (kind === "peep") {
        if (answer) notes[s].push("peeped");
        return who(s) + (answer ? " pays 1 to peep at the top card" : " does not peep");
      }
      if (kind === "floater_peep") {
        if (answer) notes[s].push("saw the floater");
        return who(s) + (answer ? " pays 1 to see the floater" : " does not look at the floater");
      }
      if (kind === "garnet") {
        if (answer) notes[s].push("took Sir Garnet");
        return who(s) + (answer ? " takes up Sir Garnet's hand" : " leaves Sir Garnet's hand");
      }
      if (kind === "garnet_discard") {
        take(s, h.garnet || []); drop(s, answer || []);
        return who(s) + " keeps five of ten and throws out " + (answer || []).map(T.text).join(" ");
      }
      if (kind === "exchange") {
        const got = bought[s] || [];
        drop(s, answer || []); take(s, got);
        if (!(answer || []).length) return who(s) + " stands (buys nothing)";
        return who(s) + " throws out " + answer.map(T.text).join(" ") + " and buys " + got.map(T.text).join(" ");
      }
      if (kind === "peep_exchange") {
        if (answer === null || answer === undefined) return who(s) + " keeps the hand (no swap for the peep card)";
        drop(s, [answer]); take(s, [h.peep_card]);
        return who(s) + " swaps " + T.text(answer) + " for the peep card " + T.text(h.peep_card);
      }
      if (kind === "floater_discard") {
        take(s, [h.floater]); drop(s, [answer]);
        return who(s) + " takes the floater " + T.text(h.floater) + " and discards " + T.text(answer);
      }
      if (kind === "trumps") { trumps = answer; return who(s) + " names trumps: " + T.suit(answer); }
      return who(s) + ": " + kind + " " + JSON.stringify(answer);
    }
    push("the deal: every hand face up" + (h.dealer !== undefined ? "; " + who(h.dealer) + " deals" : ""));
    const pre = (h.pre || []).slice();
    while (pre.length && BEFORE.has(pre[0][1])) push(decision(pre.shift()));
    for (const [s, b] of h.bids || []) {
      while (pre.length && TURN.has(pre[0][1]) && pre[0][0] === s) push(decision(pre.shift()));
      bids[s] = b;
      push(who(s) + (b === "pass" ? " passes" : " bids " + b));
    }
    if (h.contract) {
      contract = h.contract; bidder = h.bidder;
      notes[h.bidder].push("bidder: " + h.contract);
    }
    while (pre.length) push(decision(pre.shift()));
    if (h.contract) {
      if (h.trumps !== null && h.trumps !== undefined && !/mis|sedan/.test(h.contract)) trumps = h.trumps;
      push("contract: " + h.contract + " by " + who(h.bidder));
    }
    const tricks = (h.tricks || []).map(t => [t[0], t[1], t[2]]);
    if (h.trick && h.trick.length) tricks.push([h.trick[0][0], h.trick, null]);
    tricks.forEach(([, plays, won], i) => {
      trick = []; winner = null;
      for (const [s, c] of plays) {
        trick.push([s, c]); played.add(c); now = c; bids = {};  // the bids stay on the felt until the first lead
        push("trick " + (i + 1) + ": " + who(s) + " plays " + T.text(c));
      }
      now = null;
      if (won !== null) { winner = won; push("trick " + (i + 1) + " to " + who(won), {trickEnd: true}); }
    });
    for (const f of h.faults || []) push("fault: " + who(f[1]) + " at " + f[2] + ": " + f[3]);
    if (h.revoke !== undefined && h.revoke !== null) push("revoke by " + who(h.revoke));
    trick = []; winner = null;
    push("settlement: " + h.result + " — " + seats.map((a, i) => a + " " + signed(h.chips[i])).join(", ")
      + "; kitty " + h.kitty, {end: true});
    return list;
  }
  const signed = x => (x >= 0 ? "+" : "") + x;

  // --- drawing ---------------------------------------------------------------------------
  function draw() {
    if (!match) return;
    const h = match.hands[hand];
    if (!h) { say("match " + match.index + " has no hands"); return; }
    step = Math.max(0, Math.min(step, steps.length - 1));
    const now = steps[step];
    const before = match.hands.slice(0, hand).reduce((acc, x) => acc.map((v, i) => v + (x.chips[i] || 0)), match.seats.map(() => 0));
    const seats = match.seats.map((name, s) => ({
      name, chips: now.end ? before[s] + h.chips[s] : before[s],
      note: [s === h.dealer ? "dealer" : "", ...now.notes[s], now.end ? signed(h.chips[s]) + " this hand" : ""].filter(Boolean).join(" · "),
      cards: (h.deal[s] || []).length ? now.held[s].concat(now.out[s]).sort((a, b) => a - b) : null,
      gone: [...now.played], fresh: now.fresh[s], out: now.out[s], bid: now.bids[s],
      turn: false,
    }));
    seats.forEach((s, i) => { if (!s.cards) s.note = (s.note ? s.note + " · " : "") + "sits out"; });
    const info = [{label: match.variant}, {label: "hand", text: h.n + " of " + match.hands.length + " (counted from 0, as the logs and links do)"}];
    if (now.contract) info.push({label: "contract", text: now.contract + " by " + match.seats[now.bidder]});
    if (now.trumps !== null && now.trumps !== undefined) info.push({label: "trumps", text: T.suit(now.trumps)});
    if (h.peep_card !== undefined) info.push({label: "peep card", cards: [h.peep_card]});
    if (h.floater !== undefined) info.push({label: "floater", cards: [h.floater]});
    if (h.garnet) info.push({label: "Sir Garnet", cards: h.garnet});
    if (h.stock) info.push({label: "stock", cards: h.stock});
    if (h.bought && h.bought.length) info.push({label: "bought", text: h.bought.map(([s, c]) => match.seats[s] + " " + c.length).join(", ")});
    info.push({label: "kitty", text: now.end ? String(h.kitty) : "…"});
    T.draw($("v-table"), {seats, bottom: 0, trick: now.trick, winner: now.winner, now: now.now, info,
      caption: now.text, centre: now.trick.length ? "" : "match " + match.index});
    $("v-log").textContent = steps.slice(0, step + 1).map(x => x.text).join("\n");
    say("match " + match.index + ", hand " + h.n + ": step " + (step + 1) + " of " + steps.length);
  }
  function showHand(hi, at) {
    hand = Math.max(0, Math.min(hi, match.hands.length - 1));
    steps = match.hands.length ? build(match.hands[hand], match.seats) : [];
    step = at === "end" ? steps.length - 1 : (at || 0);
    $("v-hand").value = String(hand);
    draw();
  }
  async function open(mi, hn, at) {
    const entry = index.matches[mi];
    if (!entry) return;
    $("v-match").value = String(mi);
    const data = await load("m" + pad(entry[0], 6));
    match = data; match.pos = mi;
    $("v-hand").replaceChildren(...data.hands.map((x, i) => new Option(String(x.n) + (x.contract ? " · " + x.contract + " " + x.result : " · " + x.result), String(i))));
    const hi = Math.max(0, data.hands.findIndex(x => x.n === hn));
    showHand(hi, at);
  }

  // --- moving through hands ----------------------------------------------------------------
  function forward() {
    if (step < steps.length - 1) { step++; draw(); return true; }
    if (hand < match.hands.length - 1) { showHand(hand + 1, 0); return true; }
    if (match.pos < index.matches.length - 1) { open(match.pos + 1, 0).catch(fail); return true; }
    return false;
  }
  function tick() {
    if (!forward()) { stop(); return; }
    const now = steps[step] || {};
    const wait = Number($("v-speed").value) + (now.trickEnd || now.end ? Number($("v-pause").value) : 0);
    timer = setTimeout(tick, wait);
  }
  function stop() { clearTimeout(timer); timer = null; $("v-play").textContent = "▶ play"; }
  function play() {
    if (timer) { stop(); return; }
    $("v-play").textContent = "⏸ pause";
    timer = setTimeout(tick, Number($("v-speed").value));
  }

  // --- filters, over the index a file at a time ---------------------------------------------
  // A hand's code (viewer.py's `packed`): bidder + 1, contract + 1, result, faulted, Nap bidders.
  const decode = code => ({bidder: (code & 15) - 1, contract: ((code >>> 4) & 63) - 1, result: (code >>> 10) & 15,
                         faulted: (code >>> 14) & 1, naps: code >>> 15});
  function filters() {
    return {bot: $("f-bot").value, with: $("f-with").value, variant: $("f-variant").value, contract: $("f-contract").value,
            role: $("f-role").value, result: $("f-result").value, faults: $("f-faults").checked};
  }
  // A match a filter may find hands in: its variant and its seats.
  const candidate = (f, entry) => !(f.variant && entry[1] !== f.variant) && !(f.bot && !entry[2].includes(f.bot))
    && !(f.with && !entry[2].includes(f.with));
  function fits(f, entry, h) {
    if (f.contract && index.contracts[h.contract] !== f.contract) return false;
    if (f.result && index.results[h.result] !== f.result) return false;
    if (f.faults && !h.faulted) return false;
    if (f.role === "bot" && f.bot && entry[2][h.bidder] !== f.bot) return false;
    return true;
  }
  // Match i's hands from its part of the index: [[code, hand number], …].
  function hands(part, i) {
    const row = part[i % index.chunk], codes = Array.isArray(row[0]) ? row[0] : row;
    return codes.map((code, k) => [code, Array.isArray(row[0]) ? row[1][k] : k]);
  }
  const part = k => load("f" + pad(k, 4), true);
  const PAGE = 60;
  // What a search shows while it reads the index: how far it has come, on the page.
  function searching(done) {
    const box = $("v-found"), bar = document.createElement("progress"), text = document.createElement("span");
    bar.id = "v-progress"; bar.max = index.matches.length; bar.value = done;
    text.id = "v-count"; text.setAttribute("role", "status");
    text.textContent = "searching: " + done.toLocaleString() + " of " + index.matches.length.toLocaleString() + " matches…";
    box.replaceChildren(text, bar);
  }
  async function search(more) {
    const f = filters();
    if (!more) { found = []; searchAt = 0; }
    const box = $("v-found"), chunk = index.chunk, shown = found.length, n = index.matches.length;
    while (searchAt < n && found.length < shown + PAGE) {
      const k = Math.floor(searchAt / chunk), end = Math.min((k + 1) * chunk, n);
      let any = false;
      for (let i = searchAt; i < end && !any; i++) any = candidate(f, index.matches[i]);
      if (any) {  // a part without a match the filter could find hands in is not read at all
        searching(searchAt);
        const data = await part(k);
        for (let i = searchAt; i < end; i++) {
          const entry = index.matches[i];
          if (!candidate(f, entry)) continue;
          for (const [code, hn] of hands(data, i)) { const h = decode(code); if (fits(f, entry, h)) found.push([i, hn, h]); }
        }
      }
      searchAt = end;
    }
    box.replaceChildren();
    const head = document.createElement("span");
    head.textContent = found.length + (searchAt < n ? "+ hands found so far" : " hands found");
    head.id = "v-count"; head.setAttribute("role", "status");
    box.appendChild(head);
    for (const [i, hn, h] of found.slice(0, shown + PAGE)) {
      const entry = index.matches[i], b = document.createElement("button");
      const contract = h.contract >= 0 ? index.contracts[h.contract] : null, result = index.results[h.result];
      b.type = "button"; b.className = "v-hit";
      b.textContent = entry[1] + " m" + entry[0] + " h" + hn + ": " + (contract ? contract + " by " + entry[2][h.bidder] + ", " + result : result);
      b.onclick = () => { stop(); open(i, hn).catch(fail); };
      box.appendChild(b);
    }
    if (searchAt < n) {
      const b = document.createElement("button"); b.type = "button"; b.textContent = "more…"; b.id = "v-more";
      b.onclick = () => search(true).catch(fail);
      box.appendChild(b);
    }
    return found;
  }
  // The next hand after this one where someone (the chosen bot, if one is chosen) bid Nap or above.
  async function nextNap() {
    stop();
    const bot = $("f-bot").value, chunk = index.chunk;
    for (let i = match.pos; i < index.matches.length; i++) {
      const entry = index.matches[i];
      if (bot && !entry[2].includes(bot)) continue;
      if (i % chunk === 0 || i === match.pos) say("looking for a Nap bid: match " + entry[0] + " of " + index.matches.length.toLocaleString() + "…");
      for (const [code, hn] of hands(await part(Math.floor(i / chunk)), i)) {
        if (i === match.pos && hn <= match.hands[hand].n) continue;
        const naps = [];
        for (let s = 0, m = decode(code).naps; m; s++, m >>>= 1) if (m & 1 && (!bot || entry[2][s] === bot)) naps.push(s);
        if (!naps.length) continue;
        await open(i, hn);
        const bid = steps.findIndex(x => / bids /.test(x.text) && naps.some(s => x.text.startsWith(entry[2][s] + " bids ")) && index.naps.some(n => x.text.includes(" bids " + n)));
        step = bid < 0 ? 0 : bid; draw();
        return;
      }
    }
    say("no Nap bid after this hand" + (bot ? " by " + bot : ""));
  }

  // --- wiring --------------------------------------------------------------------------------
  function route(hash) {
    const one = /^#hand-(\d+)-(\d+)$/.exec(hash || "");
    if (one) {
      const mi = index.matches.findIndex(x => x[0] === Number(one[1]));
      if (mi < 0) { say("there is no match " + one[1] + " in this run"); return true; }
      stop(); open(mi, Number(one[2])).catch(fail);
      $("viewer").scrollIntoView();
      return true;
    }
    const many = /^#hands\?(.*)$/.exec(hash || "");
    if (many) {
      const q = new URLSearchParams(many[1]);
      for (const k of ["bot", "with", "variant", "contract", "result"]) if (q.has(k)) $("f-" + k).value = q.get(k);
      $("viewer").scrollIntoView();
      search(false).then(hits => { if (hits.length) open(hits[0][0], hits[0][1]); }).catch(fail);
      return true;
    }
    return false;
  }
  $("v-match").onchange = e => { stop(); open(Number(e.target.value), -1).catch(fail); };
  $("v-hand").onchange = e => { stop(); showHand(Number(e.target.value), 0); };
  $("v-next").onclick = () => { stop(); forward(); };
  $("v-back").onclick = () => {
    stop();
    if (step > 0) { step--; draw(); } else if (hand > 0) showHand(hand - 1, "end");
  };
  $("v-first").onclick = () => { stop(); step = 0; draw(); };
  $("v-last").onclick = () => { stop(); step = steps.length - 1; draw(); };
  $("v-play").onclick = play;
  $("v-nap").onclick = () => nextNap().catch(fail);
  $("v-filter").onsubmit = e => { e.preventDefault(); search(false).catch(fail); };
  document.addEventListener("keydown", e => {
    if (!match || ["SELECT", "INPUT", "TEXTAREA"].includes(e.target.tagName)) return;
    if (e.key === "ArrowRight") { e.preventDefault(); $("v-next").onclick(); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); $("v-back").onclick(); }
    else if (e.key === " " && e.target.tagName !== "BUTTON") { e.preventDefault(); play(); }
  });
  window.addEventListener("hashchange", () => route(location.hash));
  load("index").then(data => {
    index = data;
    $("v-match").replaceChildren(...data.matches.map((m, i) => new Option("match " + m[0] + " (" + m[1] + ": " + m[2].join(", ") + ")", String(i))));
    $("f-contract").append(...data.contracts.map(c => new Option(c, c)));
    if (!data.matches.length) { say("no match of this run is logged yet"); return; }
    if (!route(location.hash)) open(0, 0).catch(fail);
  }).catch(fail);
})();
