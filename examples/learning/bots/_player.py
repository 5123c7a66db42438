"""The learned player's network (examples/learning/train_player.py): the observation
vector through two ReLU layers to logits over the 363 actions (masked to the legal ones)
and a value. Shared by train_player.py and the `learned-player` drop-in (a helper:
drop-in files starting with "_" are not bots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from naparena.envs.encoding import NUM_ACTIONS, OBS_SIZE


class Network:
    """obs -> two ReLU layers -> (logits over the actions, a value in chips / SCALE)."""

    PARAMS = ("w1", "b1", "w2", "b2", "wp", "bp", "wv", "bv")

    def __init__(self, params: dict[str, np.ndarray]):
        self.p = params

    @classmethod
    def fresh(cls, hidden: int, rng: np.random.Generator) -> Network:
        def layer(n_in: int, n_out: int, scale: float) -> np.ndarray:
            return (rng.normal(0, (2 / n_in) ** 0.5, (n_in, n_out)) * scale).astype(np.float32)
        return cls({"w1": layer(OBS_SIZE, hidden, 1.0), "b1": np.zeros(hidden, np.float32),
                    "w2": layer(hidden, hidden, 1.0), "b2": np.zeros(hidden, np.float32),
                    "wp": layer(hidden, NUM_ACTIONS, 0.01), "bp": np.zeros(NUM_ACTIONS, np.float32),
                    "wv": layer(hidden, 1, 0.01), "bv": np.zeros(1, np.float32)})

    @classmethod
    def load(cls, path: str | Path) -> Network:
        with np.load(path) as saved:
            return cls({k: saved[k] for k in cls.PARAMS})

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, **self.p)

    def forward(self, x: np.ndarray, mask: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """(what backward needs, log-probabilities over the legal actions, values)."""
        p = self.p
        z1 = x @ p["w1"] + p["b1"]
        h1 = np.maximum(z1, 0)
        z2 = h1 @ p["w2"] + p["b2"]
        h2 = np.maximum(z2, 0)
        logits = np.where(mask, h2 @ p["wp"] + p["bp"], -1e9)
        logits -= logits.max(axis=1, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        value = (h2 @ p["wv"] + p["bv"])[:, 0]
        return {"x": x, "z1": z1, "h1": h1, "z2": z2, "h2": h2}, logp, value

    def backward(self, cache: dict[str, np.ndarray], d_logits: np.ndarray, d_value: np.ndarray
                 ) -> dict[str, np.ndarray]:
        p, h2 = self.p, cache["h2"]
        d_h2 = d_logits @ p["wp"].T + d_value[:, None] @ p["wv"].T
        d_z2 = d_h2 * (cache["z2"] > 0)
        d_z1 = (d_z2 @ p["w2"].T) * (cache["z1"] > 0)
        return {"wp": h2.T @ d_logits, "bp": d_logits.sum(0), "wv": h2.T @ d_value[:, None],
                "bv": d_value.sum(keepdims=True), "w2": cache["h1"].T @ d_z2, "b2": d_z2.sum(0),
                "w1": cache["x"].T @ d_z1, "b1": d_z1.sum(0)}

    def greedy(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        _, logp, _ = self.forward(obs["observation"], obs["action_mask"].astype(bool))
        return logp.argmax(axis=1)

    def policy(self):
        """The greedy player, as naparena.envs's policy signature wants it: (observation,
        mask) -> the legal action of the highest probability."""
        def choose(obs: np.ndarray, mask: np.ndarray) -> int:
            return int(self.greedy({"observation": obs[None], "action_mask": mask[None]})[0])
        return choose
