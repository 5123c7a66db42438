/* The drawn table, one component for the viewer, the live page and the web table:
   seats around a felt with names and chips, the trick in the middle with each card by its
   player and the winner marked, the contract, trumps, kitty and the extra cards above.
   NapTable.draw(root, model) redraws `root` from plain data; nothing here fetches. */
"use strict";
window.NapTable = (function () {
  const SUITS = "♣♦♥♠", RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
  const WORDS = ["clubs", "diamonds", "hearts", "spades"];
  const text = c => (Number.isInteger(c) && c >= 0 && c < 52) ? RANKS[c % 13] + SUITS[Math.floor(c / 13)] : String(c);
  const red = c => Number.isInteger(c) && (Math.floor(c / 13) === 1 || Math.floor(c / 13) === 2);
  const suit = s => (Number.isInteger(s) && s >= 0 && s < 4) ? SUITS[s] + " " + WORDS[s] : "none";
  function el(tag, cls, content) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }
  function face(c, extra) {
    const e = el("span", "nt-card" + (red(c) ? " red" : "") + (extra ? " " + extra : ""), text(c));
    e.dataset.card = text(c);
    return e;
  }
  function cards(list, marks) {
    const box = el("div", "nt-cards");
    for (const c of list || []) box.appendChild(face(c, marks ? marks(c) : ""));
    return box;
  }
  // Where seat i sits, drawn from `bottom`: the next seat to play is on the left, as at a real table.
  function place(e, i, n, bottom, kind) {
    const a = Math.PI / 2 + 2 * Math.PI * (((i - bottom) % n + n) % n) / n;
    const cx = Math.cos(a), cy = Math.sin(a);
    if (kind === "trick") {
      const narrow = window.innerWidth < 560;  // side seats take a third of a phone's width
      e.style.left = (50 + (narrow ? 8 : 13) * cx) + "%"; e.style.top = (50 + 21 * cy) + "%";
      return;
    }
    const shift = [];
    if (cx < -0.3) e.style.left = "1%"; else if (cx > 0.3) e.style.right = "1%";
    else { e.style.left = "50%"; shift.push("translateX(-50%)"); }
    if (cy > 0.3) e.style.bottom = "1%"; else if (cy < -0.3) e.style.top = "1%";
    else { e.style.top = "50%"; shift.push("translateY(-50%)"); }
    e.style.transform = shift.join(" ") || "none";
    e.style.maxWidth = Math.abs(cx) > 0.3 ? "31%" : "62%";
  }
  function seatBox(s, i, model) {
    const box = el("div", "nt-seat" + (s.turn ? " turn" : "") + (model.winner === i && model.trick && model.trick.length ? " won" : ""));
    box.dataset.seat = String(i);
    const name = el("div", "nt-name", s.name);
    if (s.chips !== null && s.chips !== undefined) {
      name.appendChild(el("span", "nt-chips", (s.chips >= 0 ? "+" : "") + s.chips));
    }
    box.appendChild(name);
    if (s.note) box.appendChild(el("div", "nt-note", s.note));
    if (model.play && model.play.seat === i) box.appendChild(buttons(s.cards || [], model.play));
    else if (s.cards) box.appendChild(cards(s.cards, c => [
      (s.gone || []).includes(c) ? "gone" : "", (s.fresh || []).includes(c) ? "new" : "",
      (s.out || []).includes(c) ? "out" : "", model.now === c ? "now" : ""].filter(Boolean).join(" ")));
    else if (s.hidden) {
      const backs = el("div", "nt-cards backs");
      for (let k = 0; k < s.hidden; k++) backs.appendChild(el("span", "nt-card back", ""));
      backs.setAttribute("aria-label", s.hidden + " cards");
      box.appendChild(backs);
    }
    return box;
  }
  // The person's cards: buttons, reached by Tab or the arrow keys, played by Enter or a click.
  function buttons(list, play) {
    const box = el("div", "nt-cards mine");
    const legal = new Set(play.legal || []), picked = new Set(play.picked || []);
    list.forEach((c, k) => {
      const dim = legal.size && !legal.has(c) ? " dim" : "";  // held, but the rules refuse it now
      const b = el("button", "nt-card" + (red(c) ? " red" : "") + (legal.has(c) ? " legal" : "") + dim + (picked.has(c) ? " picked" : ""), text(c));
      b.type = "button"; b.dataset.card = text(c); b.disabled = !play.active;
      b.setAttribute("aria-label", text(c) + (legal.has(c) ? "" : " (not playable now)") + " — key " + (k + 1));
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
      for (const c of item.cards || []) part.appendChild(face(c));
      bar.appendChild(part);
    }
    return bar;
  }
  function draw(root, model) {
    const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.card : null;
    const n = model.seats.length, bottom = model.bottom || 0;
    const felt = el("div", "nt-felt");
    felt.setAttribute("role", "img");
    felt.setAttribute("aria-label", model.caption || "the table");
    model.seats.forEach((s, i) => { const b = seatBox(s, i, model); place(b, i, n, bottom, "seat"); felt.appendChild(b); });
    if (model.centre) felt.appendChild(el("div", "nt-centre", model.centre));
    for (const [seat, c] of model.trick || []) {
      const t = el("div", "nt-trick" + (model.winner === seat ? " won" : ""));
      t.dataset.seat = String(seat);
      t.appendChild(face(c, model.now === c ? "now" : ""));
      place(t, seat, n, bottom, "trick");
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
