"""The toy text-to-image world: procedurally rendered shapes, captions with quality tokens, planted defects.

Images are (3, S, S) float32 in [-1, 1] (S = 16 by default, 32 optional), black background, one shape
(circle, square, triangle, cross) × colour (6) × cell of a 3×3 grid, with size and position jitter.
A defect (blotch, jagged edge, missing chunk, speckle patch, colour bleed) changes a local set of pixels;
its mask is exactly the set of pixels it changed (spec §2, design choice of the app: the paper uses real T2I).

Captions are token ids ``[bos, colour, shape, row, col, quality]``; the quality slot holds
``high_quality`` for clean training images and ``low_quality`` for defective ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHAPES = ["circle", "square", "triangle", "cross"]
COLOURS = {
    "red": (1.0, -1.0, -1.0),
    "green": (-1.0, 1.0, -1.0),
    "blue": (-1.0, -1.0, 1.0),
    "yellow": (1.0, 1.0, -1.0),
    "cyan": (-1.0, 1.0, 1.0),
    "magenta": (1.0, -1.0, 1.0),
}
COLOUR_NAMES = list(COLOURS)
ROWS = ["top", "middle", "bottom"]
COLS = ["left", "center", "right"]
DEFECTS = ["blotch", "jagged", "missing", "speckle", "bleed"]
BACKGROUND = -1.0

# vocabulary: specials, then the content words, then the two quality tokens
VOCAB = ["<bos>", "<pad>", *COLOUR_NAMES, *SHAPES, *ROWS, *COLS, "high_quality", "low_quality"]
TOK = {w: i for i, w in enumerate(VOCAB)}
BOS, PAD, HIGH, LOW = TOK["<bos>"], TOK["<pad>"], TOK["high_quality"], TOK["low_quality"]
SEQ_LEN = 6
CONTENT_SLOTS = (1, 2, 3, 4)  # colour, shape, row, col
QUALITY_SLOT = 5


@dataclass(frozen=True)
class Attributes:
    """What a caption says: indices into SHAPES, COLOUR_NAMES and the 3×3 grid (cell = 3·row + col)."""

    shape: int
    colour: int
    cell: int

    def caption(self) -> str:
        r, c = divmod(self.cell, 3)
        return f"{COLOUR_NAMES[self.colour]} {SHAPES[self.shape]} {ROWS[r]} {COLS[c]}"


def all_attributes() -> list[Attributes]:
    return [Attributes(s, c, p) for s in range(len(SHAPES)) for c in range(len(COLOURS)) for p in range(9)]


def tokens(attr: Attributes | None, quality: str | None) -> np.ndarray:
    """Token ids (SEQ_LEN,).  ``attr=None`` gives the empty (unconditional) caption; ``quality`` ∈ {high, low, None}."""
    ids = np.full(SEQ_LEN, PAD, dtype=np.int64)
    ids[0] = BOS
    if attr is not None:
        r, c = divmod(attr.cell, 3)
        ids[1:5] = [TOK[COLOUR_NAMES[attr.colour]], TOK[SHAPES[attr.shape]], TOK[ROWS[r]], TOK[COLS[c]]]
    if quality == "high":
        ids[QUALITY_SLOT] = HIGH
    elif quality == "low":
        ids[QUALITY_SLOT] = LOW
    return ids


def cell_centre(cell: int, size: int) -> tuple[float, float]:
    """Pixel coordinates (y, x) of a grid cell's centre: cells at 3/16, 1/2 and 13/16 of the side."""
    r, c = divmod(cell, 3)
    pos = np.array([0.1875, 0.5, 0.8125]) * size - 0.5
    return float(pos[r]), float(pos[c])


def shape_mask(shape: int, cy: float, cx: float, radius: float, size: int) -> np.ndarray:
    """Boolean (S, S) silhouette of a shape of half-width ``radius`` centred at (cy, cx)."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    dy, dx = yy - cy, xx - cx
    if shape == 0:  # circle
        return dx**2 + dy**2 <= radius**2
    if shape == 1:  # square
        return np.maximum(np.abs(dx), np.abs(dy)) <= 0.85 * radius
    if shape == 2:  # triangle pointing up
        return (dy >= -radius) & (dy <= radius) & (np.abs(dx) <= 0.5 * (dy + radius) + 0.25)
    thick = max(0.5, radius / 3.0)  # cross
    return ((np.abs(dx) <= thick) & (np.abs(dy) <= radius)) | ((np.abs(dy) <= thick) & (np.abs(dx) <= radius))


def render(attr: Attributes, size: int, rng: np.random.Generator | None = None, jitter: bool = True) -> np.ndarray:
    """(3, S, S) image of ``attr``; size/position jitter from ``rng`` (radius ≈ S/6.4 ± 15 %, centre ± S/21)."""
    cy, cx = cell_centre(attr.cell, size)
    radius = size / 6.4
    if jitter and rng is not None:
        cy += rng.uniform(-1, 1) * size / 21
        cx += rng.uniform(-1, 1) * size / 21
        radius *= rng.uniform(0.85, 1.15)
    return paint(shape_mask(attr.shape, cy, cx, radius, size), attr.colour)


def paint(silhouette: np.ndarray, colour: int) -> np.ndarray:
    img = np.full((3, *silhouette.shape), BACKGROUND, dtype=np.float32)
    img[:, silhouette] = np.asarray(COLOURS[COLOUR_NAMES[colour]], dtype=np.float32)[:, None]
    return img


def _disk(size: int, cy: float, cx: float, r: float) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size]
    return (yy - cy) ** 2 + (xx - cx) ** 2 <= r**2


def _object_pixel(img: np.ndarray, rng: np.random.Generator) -> tuple[int, int]:
    ys, xs = np.nonzero((img != BACKGROUND).any(0))
    i = rng.integers(len(ys))
    return int(ys[i]), int(xs[i])


def _boundary(sil: np.ndarray) -> np.ndarray:
    p = np.pad(sil, 1)
    nb = p[:-2, 1:-1] | p[2:, 1:-1] | p[1:-1, :-2] | p[1:-1, 2:]
    inner = p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:]
    return (sil & ~inner) | (~sil & nb)


def add_defect(img: np.ndarray, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Plant one local defect of ``kind``; returns (defective image, mask) with mask = pixels that changed.

    Each kind is placed at a random pixel of the object (blotch, missing chunk, speckle) or of its
    boundary (jagged edge, colour bleed); its radius scales with the image side (S/8 … S/5).
    """
    size = img.shape[-1]
    out = img.copy()
    sil = (img != BACKGROUND).any(0)
    cy, cx = _object_pixel(img, rng)
    obj_colour = img[:, cy, cx].copy()
    if kind == "blotch":  # a disk of a foreign colour (never the object's, never the background)
        others = [np.asarray(v, np.float32) for v in COLOURS.values() if not np.allclose(v, obj_colour)]
        others.append(np.array([0.6, 0.6, 0.6], np.float32))
        col = others[rng.integers(len(others))]
        region = _disk(size, cy + rng.uniform(-1, 1), cx + rng.uniform(-1, 1), rng.uniform(size / 8, size / 6))
        out[:, region] = col[:, None]
    elif kind == "missing":  # a bite out of the object: object pixels in a disk become background
        region = _disk(size, cy, cx, rng.uniform(size / 7, size / 5)) & sil
        out[:, region] = BACKGROUND
    elif kind == "speckle":  # a patch of random-colour pixels
        win = _disk(size, cy, cx, rng.uniform(size / 7, size / 5))
        region = win & (rng.random((size, size)) < 0.6)
        vals = rng.uniform(-1, 1, (3, size, size)).astype(np.float32)
        out[:, region] = vals[:, region]
    elif kind in ("jagged", "bleed"):
        edge = _boundary(sil)
        ys, xs = np.nonzero(edge & ~sil)
        i = rng.integers(len(ys))
        win = _disk(size, ys[i], xs[i], rng.uniform(size / 6, size / 4.5))
        if kind == "jagged":  # toggle about half the boundary pixels in a window: inside ↔ outside
            region = win & edge & (rng.random((size, size)) < 0.55)
            out[:, region & sil] = BACKGROUND
            out[:, region & ~sil] = obj_colour[:, None]
        else:  # the object's colour leaks 1–2 px outward, fading into the background
            p = np.pad(sil, 2)
            near = np.zeros_like(sil)
            for dy in range(-2, 3):
                for dx in range(-2, 3):
                    near |= p[2 + dy : 2 + dy + size, 2 + dx : 2 + dx + size]
            region = win & near & ~sil
            alpha = rng.uniform(0.45, 0.75)
            out[:, region] = (alpha * obj_colour + (1 - alpha) * BACKGROUND)[:, None]
    else:
        raise ValueError(f"unknown defect {kind!r}")
    mask = (np.abs(out - img) > 1e-6).any(0)
    return out, mask


@dataclass
class Batch:
    images: np.ndarray  # (B, 3, S, S) float32
    masks: np.ndarray  # (B, S, S) bool, the planted defect (all False when clean)
    defective: np.ndarray  # (B,) bool
    attrs: list[Attributes]
    kinds: list[str]  # defect kind or "" when clean


def sample_batch(n: int, size: int, rng: np.random.Generator, p_def: float = 0.4) -> Batch:
    """``n`` fresh renders; a fraction ``p_def`` carries one planted defect (retried until it changes ≥ 2 px)."""
    attrs = [Attributes(int(rng.integers(4)), int(rng.integers(6)), int(rng.integers(9))) for _ in range(n)]
    imgs = np.empty((n, 3, size, size), np.float32)
    masks = np.zeros((n, size, size), bool)
    defective = rng.random(n) < p_def
    kinds = []
    for i, a in enumerate(attrs):
        img = render(a, size, rng)
        kind = ""
        if defective[i]:
            for _ in range(20):
                kind = DEFECTS[rng.integers(len(DEFECTS))]
                dimg, m = add_defect(img, kind, rng)
                if m.sum() >= 2:
                    img, masks[i] = dimg, m
                    break
        imgs[i] = img
        kinds.append(kind)
    return Batch(imgs, masks, defective, attrs, kinds)


def caption_tokens(batch: Batch, rng: np.random.Generator, p_drop_quality: float, p_drop_caption: float) -> np.ndarray:
    """Training captions (B, SEQ_LEN): quality token from the defect label, dropped for CFG training."""
    out = np.empty((len(batch.attrs), SEQ_LEN), np.int64)
    for i, a in enumerate(batch.attrs):
        q = "low" if batch.defective[i] else "high"
        if rng.random() < p_drop_quality:
            q = None
        out[i] = tokens(None, None) if rng.random() < p_drop_caption else tokens(a, q)
    return out
