"""The verifiable shared-noise counting protocols: SN-VBM, SN-VLM, the independent-noise baseline, central.

One process simulates m provers, an ideal triple dealer and the public verifier V.  Private values live
in ``Shared.val/rnd`` (each prover touches only its own index); V sees only commitments, proofs and
openings, and every check it makes is recorded by name.  The first failing check rejects the run.

Phases (SN-VBM, design reconstructed from the abstract on top of Biswas–Cormode CCS'23):
  records      each record is a committed bit with an OR-proof; Com(x_p) = Σ record commitments
  triples      dealer deals committed Beaver triples; V's random r sacrifices a second triple (SPDZ)
  coins        prover p commits bits a_{p,j} with OR-proofs
  xor fold     u ← u + a − 2·u·a over provers (Beaver) → shares of b_j = ⊕_p a_{p,j}, commitment B_j
  public coins V publishes v_j only now (interactive; Fiat–Shamir optional and grindable)
  noise        c_j = v_j + (1−2v_j)·b_j (linear); SN-VLM also runs the comparison circuit d_i = 1[U < T_i]
  release      y_p = x_p + share of noise, R_p; V checks Com(y_p; R_p) per prover and the sum, releases Σ y_p
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from . import accounting as acc
from . import group as grp
from . import proofs
from .shares import Shared, deal, lin, private_input

MECHANISMS = ("sn_vbm", "sn_vlm", "independent", "independent_laplace", "central_binomial", "central_laplace")
CHEATS = ("none", "non_bit_coin", "wrong_opening", "bad_triple", "coin_changed", "wrong_final_share")
OPENING_BYTES = 2 * grp.SCALAR_BYTES  # (value, randomness)
TRANSCRIPT_CAP = 400


def less_than_plain(us: list[int], t: int) -> int:
    """The comparison recurrence of ``Session.less_than`` evaluated in the clear (reference for tests)."""
    if not 0 <= t < 2 ** len(us):
        raise ValueError("the public threshold must fit in k bits")
    t0 = t & 1
    lt = t0 * (1 - us[0])
    for lvl in range(1, len(us)):
        tl = (t >> lvl) & 1
        eq = us[lvl] if tl else 1 - us[lvl]
        lt = tl * (1 - us[lvl]) + eq * lt
    return lt


class Rejected(Exception):
    """V rejects: ``check`` names the failing check, ``detail`` says where."""

    def __init__(self, check: str, detail: str) -> None:
        self.check, self.detail = check, detail
        super().__init__(f"{check}: {detail}")


@dataclass
class Counters:
    """Protocol load (what the provers and V exchange; the dealer is counted separately)."""

    commitments: int = 0
    bit_proofs: int = 0
    proof_verifications: int = 0
    shared_coins: int = 0
    multiplications: int = 0
    triples: int = 0
    openings: int = 0
    public_coins: int = 0
    bytes_provers: int = 0
    bytes_verifier: int = 0
    dealer_commitments: int = 0
    bytes_dealer: int = 0


@dataclass
class Phase:
    name: str
    seconds: float
    counters: dict[str, int] = field(default_factory=dict)


class Session:
    """Shared state of one protocol run: counters, V's checklist, phase timings and cheat injection."""

    def __init__(
        self,
        m: int,
        cheat: str = "none",
        cheater: int = 0,
        fiat_shamir_coins: bool = False,
        on_progress: Callable[[str, int, int], None] | None = None,
    ) -> None:
        if cheat not in CHEATS:
            raise ValueError(f"unknown cheat {cheat!r}")
        self.m = m
        self.sid = secrets.token_bytes(16)
        self.cheat, self.cheater = cheat, cheater
        self.cheat_done = False
        self.fs = fiat_shamir_coins
        self.c = Counters()
        self.checks: dict[str, int] = {}
        self.phases: list[Phase] = []
        self.dealer_seconds = 0.0
        self.transcript = hashlib.sha512(b"paperlab/verifiable_dp/transcript" + self.sid)
        self.triples: list[tuple[Shared, Shared, Shared]] = []
        self.final_shift = 1  # what a cheater adds to its final share (set by the mechanism)
        self.on_progress = on_progress
        self.messages: list[dict[str, str]] = []  # the first TRANSCRIPT_CAP public messages, for the viewer

    def record(self, phase: str, sender: str, what: str, payload: bytes | str) -> None:
        """Keep a short, human-readable copy of a public message (the hash transcript keeps all of them)."""
        if len(self.messages) < TRANSCRIPT_CAP:
            text = payload.hex()[:24] + "…" if isinstance(payload, bytes) else payload
            self.messages.append({"phase": phase, "from": sender, "message": what, "value": text})

    def tick(self, what: str, done: int, total: int) -> None:
        if self.on_progress is not None and (done % 32 == 0 or done == total):
            self.on_progress(what, done, total)

    # -- bookkeeping ---------------------------------------------------------------------------
    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        before = asdict(self.c)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            after = asdict(self.c)
            self.phases.append(Phase(name, time.perf_counter() - t0, {k: after[k] - before[k] for k in after}))

    def check(self, name: str, ok: bool, detail: str) -> None:
        """V's check: counted when it passes, rejection naming it when it fails."""
        if not ok:
            raise Rejected(name, detail)
        self.checks[name] = self.checks.get(name, 0) + 1

    def ctx(self, p: int, phase: str, idx: int) -> bytes:
        """Fiat–Shamir context: session id ‖ prover id ‖ phase ‖ index."""
        return self.sid + p.to_bytes(2, "little") + phase.encode() + idx.to_bytes(8, "little")

    def publish(self, *points: bytes) -> None:
        for pt in points:
            self.transcript.update(pt)

    def _cheat_now(self, kind: str, p: int) -> bool:
        if self.cheat == kind and p == self.cheater and not self.cheat_done:
            self.cheat_done = True
            return True
        return False

    # -- primitives ----------------------------------------------------------------------------
    def commit_bit(self, p: int, bit: int, phase: str, idx: int) -> Shared:
        """Prover p commits a private bit with an OR-proof; V verifies the proof (named '<phase> bit proofs')."""
        if phase == "coin" and self._cheat_now("non_bit_coin", p):
            bit = 2  # a non-bit would bias the XOR; the OR-proof cannot be completed
        r = grp.rand_scalar()
        c = grp.commit(bit, r)
        ctx = self.ctx(p, phase, idx)
        pf = proofs.prove_bit(c, bit, r, ctx)
        self.publish(c, pf.a0, pf.a1)
        self.record(phase, f"prover {p}", f"Com(bit) + OR-proof, {phase} {idx}", c)
        self.c.commitments += 1
        self.c.bit_proofs += 1
        self.c.bytes_provers += grp.POINT_BYTES + proofs.PROOF_BYTES
        self.c.proof_verifications += 1
        self.check(f"{phase} bit proofs", proofs.verify_bit(c, pf, ctx), f"prover {p}, {phase} {idx}")
        return private_input(self.m, p, bit, r, c)

    def open(self, x: Shared, name: str, detail: str) -> int:
        """Every prover publishes its share and randomness (v_p, s_p); V checks Com(Σv; Σs) = Σ_p C_p.

        On failure V checks each opening against the prover's own commitment to name the cheater.
        """
        vs, ss = [], []
        for p in range(self.m):
            v, s = x.val[p], x.rnd[p]
            if name == "Beaver openings" and self._cheat_now("wrong_opening", p):
                v = (v + 1) % grp.ELL
            if name == "final openings" and p == self.cheater and self.cheat in ("coin_changed", "wrong_final_share"):
                self.cheat_done = True
                v = (v + self.final_shift) % grp.ELL
                if self.cheat == "wrong_final_share":
                    s = grp.rand_scalar()
            vs.append(v)
            ss.append(s)
        self.c.openings += self.m
        self.c.bytes_provers += self.m * OPENING_BYTES
        total = sum(vs) % grp.ELL
        for p in range(self.m):
            self.record(name, f"prover {p}", f"opening ({detail})", grp.scalar_bytes(vs[p]))
        if grp.commit(total, sum(ss)) != x.agg:
            for p in range(self.m):
                if grp.commit(vs[p], ss[p]) != x.coms[p]:
                    raise Rejected(name, f"prover {p}, {detail}")
            raise Rejected(name, detail)
        self.check(name, True, detail)
        return total

    def deal_triples(self, n: int) -> None:
        """Ideal dealer: n committed triples, each verified by SPDZ sacrifice against a second one.

        With V's random r: open ρ = rα − α′ and σ = β − β′, then rγ − γ′ − σα′ − ρβ′ − σρ must open to 0.
        """
        for t in range(n):
            t0 = time.perf_counter()
            pair = []
            for _ in range(2):
                a, b = grp.rand_scalar(), grp.rand_scalar()
                gamma = a * b % grp.ELL
                if not pair and self.cheat == "bad_triple" and not self.cheat_done:
                    self.cheat_done = True
                    gamma = (gamma + 1) % grp.ELL
                pair.append((deal(a, self.m), deal(b, self.m), deal(gamma, self.m)))
            self.dealer_seconds += time.perf_counter() - t0
            self.c.dealer_commitments += 6 * self.m
            self.c.bytes_dealer += 6 * self.m * (grp.POINT_BYTES + OPENING_BYTES)
            (a, b, c), (a2, b2, c2) = pair
            for s in (a, b, c, a2, b2, c2):
                self.publish(*s.coms)
            r = grp.rand_scalar()  # V's challenge, sent after the triples are committed
            self.c.bytes_verifier += grp.SCALAR_BYTES
            rho = self.open(lin([(r, a), (-1, a2)]), "sacrifice openings", f"triple {t} ρ")
            sigma = self.open(lin([(1, b), (-1, b2)]), "sacrifice openings", f"triple {t} σ")
            z = self.open(
                lin([(r, c), (-1, c2), (-sigma, a2), (-rho, b2)], const=-sigma * rho),
                "sacrifice openings",
                f"triple {t}",
            )
            self.check("triple sacrifice", z == 0, f"triple {t}: rγ − γ′ − σα′ − ρβ′ − σρ ≠ 0")
            self.triples.append((a, b, c))
            self.c.triples += 1
            self.tick("triples", t + 1, n)

    def mul(self, u: Shared, w: Shared, label: str) -> Shared:
        """Beaver: open d = u − α, e = w − β; [uw] = [γ] + d·[β] + e·[α] + d·e (never reuses a triple)."""
        a, b, c = self.triples.pop()
        d = self.open(lin([(1, u), (-1, a)]), "Beaver openings", f"{label} d")
        e = self.open(lin([(1, w), (-1, b)]), "Beaver openings", f"{label} e")
        self.c.multiplications += 1
        return lin([(1, c), (d, b), (e, a)], const=d * e)

    def public_coins(self, n: int) -> list[int]:
        """V's coins v_j, drawn only after every commitment is fixed (Fiat–Shamir: hash of the transcript)."""
        self.c.public_coins += n
        self.c.bytes_verifier += (n + 7) // 8
        self.record("public coins", "verifier", f"{n} public coins v_j", "Fiat–Shamir" if self.fs else "interactive")
        if self.fs:
            digest = self.transcript.digest()
            return [grp.hash_to_scalar(b"coin", digest, j.to_bytes(8, "little")) & 1 for j in range(n)]
        return [secrets.randbits(1) for _ in range(n)]

    # -- building blocks -----------------------------------------------------------------------
    def records(self, data: list[np.ndarray]) -> Shared:
        """Every prover commits its record bits with OR-proofs; Com(x_p) = Σ record commitments."""
        vals, rnds, coms = [], [], []
        for p, recs in enumerate(data):
            x, r, c = 0, 0, grp.IDENTITY
            for i, bit in enumerate(recs):
                s = self.commit_bit(p, int(bit), "record", i)
                x, r, c = x + s.val[p], (r + s.rnd[p]) % grp.ELL, grp.add(c, s.coms[p])
            vals.append(x)
            rnds.append(r)
            coms.append(c)
        return Shared(vals, rnds, coms)

    def shared_coins(self, n: int) -> list[Shared]:
        """n shared fair bits b_j = ⊕_p a_{p,j}: commit (with proofs), then fold with m−1 Beaver multiplications."""
        with self.phase("coins"):
            bits = [[self.commit_bit(p, secrets.randbits(1), "coin", j) for p in range(self.m)] for j in range(n)]
        with self.phase("xor fold"):
            out = []
            for j, row in enumerate(bits):
                out.append(self.xor_fold(row, f"xor coin {j}"))
                self.tick("xor fold", j + 1, n)
            self.c.shared_coins += n
        return out

    def xor_fold(self, row: list[Shared], label: str) -> Shared:
        """b = a_0 ⊕ … ⊕ a_{m−1} by u ← u + a − 2·u·a (m−1 Beaver multiplications)."""
        u = row[0]
        for p in range(1, len(row)):
            u = self.xor_step(u, row[p], f"{label} prover {p}")
        return u

    def xor_step(self, u: Shared, a: Shared, label: str) -> Shared:
        """u ⊕ a = u + a − 2·u·a for shared bits (one Beaver multiplication)."""
        return lin([(1, u), (1, a), (-2, self.mul(u, a, label))])

    def flip(self, bs: list[Shared], vs: list[int]) -> list[Shared]:
        """c_j = v_j ⊕ b_j = v_j + (1 − 2v_j)·b_j, linear in b_j because v_j is public."""
        return [lin([(1 - 2 * v, b)], const=v) for b, v in zip(bs, vs, strict=False)]

    def less_than(self, us: list[Shared], t: int, label: str) -> Shared:
        """[1[U < T]] for shared bits u_0..u_{k−1} (LSB first) and public T, with k−1 multiplications.

        lt_0 = T_0(1 − u_0);  lt_l = T_l(1 − u_l) + eq_l·lt_{l−1},  eq_l = 1 − (u_l ⊕ T_l) (linear: T_l public).
        """
        if not 0 <= t < 2 ** len(us):
            raise ValueError("the public threshold must fit in k bits (p_i < ½ gives T_i ≤ 2^(k−1))")
        t0 = t & 1
        lt = lin([(-t0, us[0])], const=t0)
        for lvl in range(1, len(us)):
            tl = (t >> lvl) & 1
            eq = us[lvl] if tl else lin([(-1, us[lvl])], const=1)
            prod = self.mul(eq, lt, f"{label} bit {lvl}")
            lt = lin([(-tl, us[lvl]), (1, prod)], const=tl)
        return lt

    def dlap_from_coins(self, us: list[Shared], ts: list[int], k: int) -> Shared:
        """Z = G₁ − G₂ with G = Σ_i 2^i·1[U_i < T_i], each U_i made of k fresh shared coins (2L·k coins in all)."""
        L = len(ts)
        terms = []
        for s, sign in enumerate((1, -1)):
            for i, t in enumerate(ts):
                j0 = (s * L + i) * k
                d = self.less_than(us[j0 : j0 + k], t, f"G{s + 1} digit {i}")
                terms.append((sign * (1 << i), d))
                self.tick("comparison circuits", s * L + i + 1, 2 * L)
        return lin(terms)

    def release(self, x: Shared, noise: Shared, offset: int) -> int:
        """Provers open y_p = x_p + noise_p; V checks each opening and the sum check, releases Σ y_p − offset."""
        final = lin([(1, x), (1, noise)])
        total = self.open(final, "final openings", "y_p = x_p + noise share")
        # the sum check of the paper's description: (Σ y)·g + (Σ R)·h = Σ Com(x_p) + Σ noise commitments
        self.check(
            "sum check",
            grp.commit(total, sum(final.rnd) % grp.ELL) == grp.add(x.commitment(), noise.commitment()),
            "aggregate",
        )
        return grp.to_signed(total) - offset


@dataclass
class ProtocolResult:
    mechanism: str
    m: int
    accepted: bool | None  # None: the central mechanism cannot be verified
    failed_check: str
    failed_detail: str
    true_count: int
    released: float | None
    noise: float | None
    n_coins: int
    noise_sd: float
    phases: list[Phase]
    checks: dict[str, int]
    counters: Counters
    dealer_seconds: float
    seconds: float
    cheat_injected: bool = False
    transcript: list[dict[str, str]] = field(default_factory=list)


def run_protocol(
    mechanism: str,
    m: int,
    records: list[np.ndarray],
    eps: float,
    delta: float,
    k: int = 24,
    cheat: str = "none",
    cheater: int = 0,
    cheat_coin: int = 0,
    n_coins: int = 0,
    fiat_shamir_coins: bool = False,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> ProtocolResult:
    """Run one protocol end to end.  ``n_coins`` > 0 overrides the binomial's accounted coin count (tests)."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {mechanism!r}")
    t_start = time.perf_counter()
    sess = Session(m, cheat=cheat, cheater=cheater, fiat_shamir_coins=fiat_shamir_coins, on_progress=on_progress)
    true_count = int(sum(int(r.sum()) for r in records))
    n_b = n_coins or acc.binom_coins(eps, delta)
    L = acc.dlap_digits(eps)
    ts = acc.thresholds(eps, L, k)
    # analytic noise sd: √n_b/2 (binomial), √(2α)/(1−α) (discrete Laplace), √m·√n_b/2 (independent binomials)
    noise_sd = {
        "sn_vbm": acc.binom_sd(n_b),
        "central_binomial": acc.binom_sd(n_b),
        "independent": math.sqrt(m) * acc.binom_sd(n_b),
        "independent_laplace": math.sqrt(m) * acc.dlap_sd(eps),
    }.get(mechanism, acc.dlap_sd(eps))
    released: float | None = None
    coins_used = 0
    try:
        if mechanism.startswith("central"):
            with sess.phase("curator noise"):
                if mechanism == "central_binomial":
                    z = sum(secrets.randbits(1) for _ in range(n_b)) - n_b // 2
                    coins_used = n_b
                else:
                    z = 0
                    for sign in (1, -1):
                        for i, t in enumerate(ts):
                            z += sign * (1 << i) * int(secrets.randbelow(1 << k) < t)
                    coins_used = 2 * L * k
                released = true_count + z
            return ProtocolResult(
                mechanism,
                m,
                None,
                "not verifiable (trusted curator)",
                "",
                true_count,
                released,
                released - true_count,
                coins_used,
                noise_sd,
                sess.phases,
                sess.checks,
                sess.c,
                0.0,
                time.perf_counter() - t_start,
            )
        with sess.phase("records"):
            x = sess.records(records)
        if mechanism == "sn_vbm":
            with sess.phase("triples"):
                sess.deal_triples((m - 1) * n_b)
            bs = sess.shared_coins(n_b)
            with sess.phase("public coins"):
                vs = sess.public_coins(n_b)
            with sess.phase("noise"):
                cs = sess.flip(bs, vs)
                noise = lin([(1, c) for c in cs])
                if cheat == "coin_changed":  # flip coin j after seeing v_j: the count moves by 1 − 2c_j
                    sess.final_shift = 1 - 2 * cs[cheat_coin % n_b].value()
            offset, coins_used = n_b // 2, n_b
        elif mechanism == "sn_vlm":
            n_sh = 2 * L * k
            with sess.phase("triples"):
                sess.deal_triples((m - 1) * n_sh + 2 * L * (k - 1))
            bs = sess.shared_coins(n_sh)
            with sess.phase("public coins"):
                vs = sess.public_coins(n_sh)
            with sess.phase("noise"):
                noise = sess.dlap_from_coins(sess.flip(bs, vs), ts, k)
                if cheat == "coin_changed":
                    sess.final_shift = 1
            offset, coins_used = 0, n_sh
        elif mechanism == "independent_laplace":  # each prover its own verifiable DLap (prior work, repeated)
            n_own = 2 * L * k
            with sess.phase("triples"):
                sess.deal_triples(m * 2 * L * (k - 1))
            with sess.phase("coins"):
                own = [[sess.commit_bit(p, secrets.randbits(1), "coin", j) for j in range(n_own)] for p in range(m)]
            with sess.phase("public coins"):
                vs = sess.public_coins(m * n_own)
            with sess.phase("noise"):
                zs = [
                    sess.dlap_from_coins(sess.flip(row, vs[p * n_own : (p + 1) * n_own]), ts, k)
                    for p, row in enumerate(own)
                ]
                noise = lin([(1, z) for z in zs])
                if cheat == "coin_changed":
                    sess.final_shift = 1
            offset, coins_used = 0, m * n_own
        else:  # independent: each prover its own verifiable Bin(n_b, ½) (Biswas–Cormode, repeated)
            with sess.phase("coins"):
                own = [[sess.commit_bit(p, secrets.randbits(1), "coin", j) for j in range(n_b)] for p in range(m)]
            with sess.phase("public coins"):
                vs = sess.public_coins(m * n_b)
            with sess.phase("noise"):
                flat = [b for row in own for b in row]
                cs = sess.flip(flat, vs)
                noise = lin([(1, c) for c in cs])
                if cheat == "coin_changed":
                    sess.final_shift = 1 - 2 * cs[sess.cheater * n_b + cheat_coin % n_b].value()
            offset, coins_used = m * n_b // 2, m * n_b
        with sess.phase("release"):
            released = sess.release(x, noise, offset)
        accepted, failed, detail = True, "", ""
    except Rejected as rej:
        accepted, failed, detail = False, rej.check, rej.detail
        released = None
    return ProtocolResult(
        mechanism,
        m,
        accepted,
        failed,
        detail,
        true_count,
        released,
        None if released is None else released - true_count,
        coins_used,
        noise_sd,
        sess.phases,
        sess.checks,
        sess.c,
        sess.dealer_seconds,
        time.perf_counter() - t_start,
        sess.cheat_done,
        sess.messages,
    )
