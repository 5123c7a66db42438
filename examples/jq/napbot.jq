# A Nap bot in jq, written from the seat protocol alone (docs/PROTOCOL.md).
# Run it as: jq -nc --unbuffered -f napbot.jq
# It reads naparena's messages, one JSON object a line, and writes its answers.

def rank: . % 13;                  # a card is suit * 13 + rank: 0 is a two, 12 an ace

# Bid the highest open contract it expects to make: one trick for each queen, king or ace.
# The match message's `contracts` give each bid's tricks, so no bid is known by name.
def choose_bid($contracts):
  ([.hand[] | select(rank >= 10)] | length) as $sure
  | [$contracts[] | select(.tricks > 0 and .tricks <= $sure) | .bid] as $fits
  | [.legal[] | select(. as $bid | any($fits[]; . == $bid))] as $open
  | if $open == [] then "pass" else $open[-1] end;

# Play the highest card allowed (following suit is already in `legal`).
def choose_card: .legal | max_by(rank);

# Every other decision: the first legal answer is always safe (decline, keep, discard none).
def answer($contracts):
  if .kind == "bid" then choose_bid($contracts)
  elif .kind == "play" then choose_card
  else .legal[0] end;

foreach inputs as $message ({contracts: []};
  if $message.type == "match" then .contracts = $message.contracts else . end;
  . as $state
  | if $message.type == "hello" then
      {type: "hello", protocol: 1, name: "napbot-jq", version: "1.0", params: {}}
    elif $message.type == "decide" then
      {type: "answer", answer: ($message.view | answer($state.contracts))}
    elif $message.type == "shutdown" then halt
    else empty end)
