#!/usr/bin/env node
// A complete naparena bot in JavaScript: Node's standard library only, no naparena.
// It speaks the seat protocol (docs/PROTOCOL.md): one JSON message a line on stdin,
// one answer a line on stdout for each "decide". Logs go to stderr.
"use strict";

const readline = require("readline");

const PARAMS = { min_suit: 3 }; // the parameters it accepts, with their defaults
let params = { ...PARAMS };

const suit = (card) => Math.floor(card / 13);
const rank = (card) => card % 13;

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// Bid three with a long suit, else pass.
function bid(view) {
  const counts = [0, 0, 0, 0];
  for (const card of view.hand) counts[suit(card)] += 1;
  if (Math.max(...counts) >= params.min_suit && view.legal.includes("three")) return "three";
  return "pass";
}

// The card winning the trick so far: the highest trump, else the highest of the suit led.
function winning(trick, trumps) {
  let best = trick[0][1];
  for (const [, card] of trick.slice(1)) {
    const beats = suit(card) === suit(best) ? rank(card) > rank(best) : suit(card) === trumps;
    if (beats) best = card;
  }
  return best;
}

// Lead the highest card; follow with the cheapest card that wins, else the lowest.
function play(view) {
  const byRank = [...view.legal].sort((a, b) => rank(a) - rank(b) || a - b);
  if (view.trick.length === 0) return byRank[byRank.length - 1];
  const best = winning(view.trick, view.trumps);
  for (const card of byRank) {
    const beats = suit(card) === suit(best) ? rank(card) > rank(best) : suit(card) === view.trumps;
    if (beats) return card;
  }
  return byRank[0];
}

function decide(view) {
  if (view.kind === "bid") return bid(view);
  if (view.kind === "play") return play(view);
  return view.legal[0]; // every other decision: the first legal answer is always safe
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      params = { ...PARAMS, ...message.params };
      send({ type: "hello", protocol: 1, name: "napbot-js", version: "1.0", params: PARAMS });
      break;
    case "decide":
      try {
        send({ type: "answer", answer: decide(message.view) });
      } catch (error) {
        send({ type: "answer", error: String(error) });
      }
      break;
    case "shutdown":
      process.exit(0);
    // match, hand_end, match_end and any later message type: nothing to do
  }
});
