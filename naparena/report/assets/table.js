/* The drawn table, one component for the viewer, the live page and the web table:
   seats around a felt with names, chips and bids, the trick in the middle with each card by
   its player and the winner marked, the contract, trumps, kitty and the extra cards above.
   Cards are sized to the felt (the stylesheet's container units), every card the same width.
   NapTable.draw(root, model) redraws `root` from plain data; nothing here fetches. */
"use strict";
window.NapTable = (function () {
  const SUITS = "♣♦♥♠", RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  const WORDS = ["clubs", "diamonds", "hearts", "spades"];
  const isCard = c => Number.isInteger(c) && c >= 0 && c < 52;
  const text = c => isCard(c) ? RANKS[c % 13] + SUITS[Math.floor(c / 13)] : String(c);
  const red = c => isCard(c) && (Math.floor(c / 13) === 1 || Math.floor(c / 13) === 2);
  const suit = s => (Number.isInteger(s) && s >= 0 && s < 4) ? SUITS[s] + " " + WORDS[s] : "none";
  function el(tag, cls, content) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }
  // A card's face: its rank in the corner, its suit large in the middle; its text is "Q♥".
  function paint(e, c) {
    if (!isCard(c)) { e.textContent = String(c); return e; }
    e.append(el("span", "nt-rank", RANKS[c % 13]), el("span", "nt-pip", SUITS[Math.floor(c / 13)]));
    return e;
  }
  function face(c, extra) {
    const e = paint(el("span", "nt-card" + (red(c) ? " red" : "") + (extra ? " " + extra : "")), c);
    e.dataset.card = text(c);
    return e;
  }
  function cards(list, marks, size) {
    const box = el("div", "nt-cards " + (size || "small"));
    box.style.setProperty("--n", String(Math.max((list || []).length, 1)));
    for (const c of list || []) box.appendChild(face(c, marks ? marks(c) : ""));
    return box;
  }
  // Where seat i sits, drawn from `bottom`: the next seat to play is on the left, as at a real table.
  function angle(i, n, bottom) {
    const a = Math.PI / 2 + 2 * Math.PI * (((i - bottom) % n + n) % n) / n;
    return [Math.cos(a), Math.sin(a)];
  }
  function placeSeat(e, i, n, bottom) {
    const [cx, cy] = angle(i, n, bottom), shift = [];
    if (cx < -0.3) e.style.left = "1%"; else if (cx > 0.3) e.style.right = "1%";
    else { e.style.left = "50%"; shift.push("translateX(-50%)"); }
    if (cy > 0.3) e.style.bottom = "1%"; else if (cy < -0.3) e.style.top = "1%";
    else { e.style.top = "44%"; shift.push("translateY(-50%)"); }
    e.style.transform = shift.join(" ") || "none";
    e.classList.add(Math.abs(cx) > 0.3 ? "side" : cy > 0 ? "near" : "far", cy > 0.3 ? "lower" : cy < -0.3 ? "upper" : "middle");
  }
  // A card of the trick: towards its player from the trick's centre, by the card's own size.
  function placeTrick(e, i, n, bottom) {
    const [cx, cy] = angle(i, n, bottom);
    e.style.left = "calc(50% + " + (cx * 0.78).toFixed(3) + " * var(--trick-x))";
    e.style.top = "calc(var(--trick-top) + " + (cy * 0.5).toFixed(3) + " * var(--trick-y))";
  }
  function seatBox(s, i, model) {
    const won = model.winner === i && model.trick && model.trick.length;
    const box = el("div", "nt-seat" + (s.turn ? " turn" : "") + (won ? " won" : ""));
    box.dataset.seat = String(i);
    const name = el("div", "nt-name");
    if (s.turn) name.appendChild(el("span", "nt-tag turn", "your turn"));
    if (won) name.appendChild(el("span", "nt-tag won", "★ takes the trick"));
    name.appendChild(document.createTextNode(s.name));
    if (s.chips !== null && s.chips !== undefined) {
      name.appendChild(el("span", "nt-chips", (s.chips >= 0 ? "+" : "") + s.chips));
    }
    box.appendChild(name);
    if (s.note) box.appendChild(el("div", "nt-note", s.note));
    if (s.bid) {
      const bid = el("div", "nt-bid" + (s.bid === "pass" ? " pass" : ""), s.bid === "pass" ? "passes" : "bids " + s.bid);
      box.appendChild(bid);
    }
    if (model.play && model.play.seat === i) box.appendChild(buttons(s.cards || [], model.play));
    else if (s.cards) box.appendChild(cards(s.cards, c => [
      (s.gone || []).includes(c) ? "gone" : "", (s.fresh || []).includes(c) ? "new" : "",
      (s.out || []).includes(c) ? "out" : "", model.now === c ? "now" : ""].filter(Boolean).join(" "),
      model.bottom === i ? "mine" : "small"));
    else if (s.hidden) {
      const backs = el("div", "nt-cards backs");
      for (let k = 0; k < s.hidden; k++) backs.appendChild(el("span", "nt-card back", ""));
      backs.setAttribute("role", "img");
      backs.setAttribute("aria-label", s.hidden + " card" + (s.hidden === 1 ? "" : "s"));
      box.appendChild(backs);
    }
    return box;
  }
  // The person's cards: buttons, reached by Tab or the arrow keys, played by Enter or a click.
  // Always drawn at full strength (they must be read while bidding); at a card to play, the
  // ones the rules allow stand up and the others sit back, still readable.
  function buttons(list, play) {
    const box = el("div", "nt-cards mine" + (play.active ? " active" : ""));
    box.style.setProperty("--n", String(Math.max(list.length, 1)));
    const legal = new Set(play.legal || []), picked = new Set(play.picked || []);
    list.forEach((c, k) => {
      const refused = play.active && legal.size && !legal.has(c), allowed = play.active && legal.has(c);
      const b = paint(el("button", "nt-card" + (red(c) ? " red" : "") + (allowed ? " legal" : "")
        + (refused ? " refused" : "") + (picked.has(c) ? " picked" : "")), c);
      b.type = "button"; b.dataset.card = text(c); b.disabled = !play.active;
      if (play.choosing) b.setAttribute("aria-pressed", String(picked.has(c)));
      b.setAttribute("aria-label", text(c) + (refused ? " (not playable now)" : "") + (picked.has(c) ? " (picked)" : "")
        + " — key " + (k + 1));
      b.onclick = () => play.pick(c);
      b.onkeydown = e => {
        const all = [...box.querySelectorAll("button")];
        const at = all.indexOf(b);
        if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
          e.preventDefault();
          all[(at + (e.key === "ArrowRight" ? 1 : all.length - 1)) % all.length].focus();
        }
      };
      box.appendChild(b);
    });
    return box;
  }
  function info(model) {
    const bar = el("div", "nt-info");
    for (const item of model.info || []) {
      const part = el("span", "nt-extra");
      part.appendChild(el("b", "", item.label));
      if (item.text !== undefined) part.appendChild(document.createTextNode(" " + item.text));
      if (item.cards) part.appendChild(cards(item.cards, null, "tiny"));
      bar.appendChild(part);
    }
    return bar;
  }
  function draw(root, model) {
    const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.card : null;
    const n = model.seats.length, bottom = model.bottom || 0;
    // No cards at the seats (the live page's last trick): a lower felt, the trick in its middle.
    const bare = model.seats.every(s => !(s.cards && s.cards.length) && !s.hidden) && !model.play;
    const felt = el("div", "nt-felt seats-" + n + (bare ? " bare" : ""));
    felt.setAttribute("role", "group");
    felt.setAttribute("aria-label", model.caption || "the table");
    model.seats.forEach((s, i) => { const b = seatBox(s, i, model); placeSeat(b, i, n, bottom); felt.appendChild(b); });
    if (model.centre) felt.appendChild(el("div", "nt-centre", model.centre));
    for (const [seat, c] of model.trick || []) {
      const won = model.winner === seat;
      const t = el("div", "nt-trick" + (won ? " won" : ""));
      t.dataset.seat = String(seat);
      t.appendChild(face(c, model.now === c ? "now" : ""));
      if (won) t.setAttribute("aria-label", text(c) + " takes the trick");
      placeTrick(t, seat, n, bottom);
      felt.appendChild(t);
    }
    const wrap = el("div", "nt");
    wrap.append(info(model), felt, el("div", "nt-caption", model.caption || ""));
    root.replaceChildren(wrap);
    if (focused) {
      const again = root.querySelector("button.nt-card[data-card='" + focused + "']");
      if (again && !again.disabled) again.focus();
    }
  }
  return { draw, text, red, suit, SUITS };
})();
