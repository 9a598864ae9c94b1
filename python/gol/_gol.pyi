"""Type stubs of the extension module behind the package ``gol``."""

from os import PathLike
from typing import Any, Optional, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str

_Path = Union[str, PathLike[str]]

class PatternError(ValueError):
    """A malformed pattern file."""

    path: str
    line: Optional[int]

class Life:
    """A 2D Game of Life: on the infinite plane, a torus, or a bounded plane."""

    @staticmethod
    def soup(
        width: int,
        height: int,
        *,
        seed: int = 0,
        density: Optional[float] = None,
        rule: str = "B3/S23",
        engine: str = "auto",
        infinite: bool = False,
        memory: Optional[int] = None,
    ) -> Life: ...
    @staticmethod
    def load(
        path: _Path,
        *,
        width: Optional[int] = None,
        height: Optional[int] = None,
        rule: Optional[str] = None,
        engine: str = "auto",
        infinite: bool = False,
        memory: Optional[int] = None,
    ) -> Life: ...
    @staticmethod
    def from_cells(
        cells: npt.ArrayLike,
        *,
        rule: str = "B3/S23",
        engine: str = "auto",
        infinite: bool = False,
        memory: Optional[int] = None,
    ) -> Life: ...
    def step(self, generations: int = 1) -> None: ...
    @property
    def population(self) -> int: ...
    @property
    def live(self) -> int: ...
    @property
    def states(self) -> int: ...
    @property
    def generation(self) -> int: ...
    @property
    def width(self) -> Optional[int]: ...
    @property
    def height(self) -> Optional[int]: ...
    @property
    def universe(self) -> str: ...
    @property
    def bounding_box(self) -> Optional[tuple[int, int, int, int]]: ...
    def identify(self, max_gens: int = 65536) -> dict[str, Any]: ...
    @property
    def rule(self) -> str: ...
    @property
    def engine(self) -> str: ...
    def cells(
        self,
        x: Optional[int] = None,
        y: Optional[int] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
    ) -> npt.NDArray[np.uint8]: ...
    def save(self, path: _Path) -> None: ...
    def _repr_png_(self) -> bytes: ...

class Cube:
    """A 3D Game of Life on an M×M×M torus (B6/S567 by default)."""

    @staticmethod
    def soup(
        side: int,
        *,
        seed: int = 0,
        density: Optional[float] = None,
        rule: str = "B6/S567",
        engine: str = "auto",
    ) -> Cube: ...
    @staticmethod
    def load(path: _Path, *, rule: Optional[str] = None, engine: str = "auto") -> Cube: ...
    @staticmethod
    def from_cells(cells: npt.ArrayLike, *, rule: str = "B6/S567", engine: str = "auto") -> Cube: ...
    def step(self, generations: int = 1) -> None: ...
    @property
    def population(self) -> int: ...
    @property
    def generation(self) -> int: ...
    @property
    def side(self) -> int: ...
    @property
    def rule(self) -> str: ...
    @property
    def engine(self) -> str: ...
    def cells(self) -> npt.NDArray[np.uint8]: ...
    def save(self, path: _Path) -> None: ...

class EngineInfo(TypedDict):
    name: str
    dims: list[int]
    plane: bool
    available: bool
    reason: Optional[str]

def engines() -> list[EngineInfo]: ...
def verify(quick: bool = True, seed: Optional[int] = None) -> None: ...
def rule_folders(folders: list[Union[str, PathLike[str]]]) -> None: ...
def census(root: str, soups: int) -> dict[str, Any]: ...
def soup(soup_id: str) -> npt.NDArray[np.uint8]: ...
