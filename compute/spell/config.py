"""One config dataclass per experiment family, mirroring the parameters declared in apps/spell."""

from __future__ import annotations

from dataclasses import dataclass

from compute.core.config import FromParams as _FromParams


@dataclass
class GamesConfig(_FromParams):
    """E1: orchestration games (tasks 1–5) run by the SPE harness."""

    game: str = "all"  # all | hello | coin_flip | auction | twenty_questions | telephone
    backend: str = "scripted"  # scripted | replay (re-run the recorded scripted trace) | endpoint
    max_depth: int = 16  # self-call depth budget
    repeats: int = 3  # seeds per game
    base_url: str = ""  # OpenAI-compatible endpoint (backend=endpoint only; key from SPELL_API_KEY)
    model: str = ""
    transport: str = "tool_call"  # tool_call | message | completions
    seed: int = 0


@dataclass
class ContextConfig(_FromParams):
    """E2: needle in a virtual file system under a context budget, Spell vs ReAct."""

    n_files: int = 16  # N files
    file_tokens: int = 2000  # tokens per file (4 characters each)
    needle: str = "last"  # first | middle | last | random
    budget: int = 8000  # context budget in tokens (Spell: max_prefix_tokens; ReAct: prompt limit)
    sweep: bool = True  # also sweep N over 4, 8, 16, 32, 64 (up to n_files)
    seed: int = 0


@dataclass
class FuzzConfig(_FromParams):
    """E4: replay-safety fuzzing with random programs, effects and edit markers."""

    n_programs: int = 1000
    max_turns: int = 6  # turns per random program
    p_malformed: float = 0.1  # probability that a turn's suffix is malformed
    seed: int = 0


@dataclass
class GsmConfig(_FromParams):
    """E3: templated GSM word problems, Spell (calculator via !call-now) vs one-shot vs ReAct."""

    n_problems: int = 50
    backend: str = "scripted"  # scripted | endpoint
    base_url: str = ""
    model: str = ""
    transport: str = "tool_call"
    seed: int = 0
