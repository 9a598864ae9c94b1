"""gol: the Game of Life on CUDA GPUs and a fast multi-threaded CPU engine, numpy in and out.

>>> import gol
>>> sim = gol.Life.soup(1024, 1024, seed=0)   # glibc srand(0), rand() % 2, row by row
>>> sim.step(1024)
>>> sim.population
47026

``Life`` is 2D: on the infinite plane (a pattern file with no size, or ``infinite=True``; HashLife,
generations and populations as ints of any size) or a torus; ``Cube`` is a 3D torus (B6/S567 by
default). ``engine="auto"`` picks the
engine with the shortest whole run here (the CPU where there is no GPU); ``gol.engines()`` lists
them all and says which can run here. Errors are exceptions: ``ValueError`` for bad arguments,
``gol.PatternError`` (a ``ValueError``) for malformed pattern files, ``OSError`` for files,
``MemoryError`` for worlds larger than memory, ``RuntimeError`` for an engine that cannot run.
"""

from ._gol import Cube, Life, PatternError, __version__, census, engines, rule_folders, soup, verify

__all__ = [
    "Cube",
    "Life",
    "PatternError",
    "census",
    "engines",
    "rule_folders",
    "soup",
    "verify",
    "__version__",
]
