"""Life.identify(): what a pattern is, against the CLI and python-lifelib's apgcodes."""

import json

import numpy as np
import pytest

import gol
from conftest import run

GLIDER = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=np.uint8)


def rle(cells):
    """The cells of a 2D 0/1 array as an RLE body (rows top first)."""
    rows = []
    for row in np.asarray(cells):
        rows.append("".join("o" if c else "b" for c in row))
    return "$".join(rows) + "!"


def test_a_glider_anywhere_is_a_glider(tmp_path, gol_cli):
    on_plane = gol.Life.from_cells(GLIDER, infinite=True).identify()
    assert on_plane["type"] == "spaceship"
    assert on_plane["apgcode"] == "xq4_153"
    assert (on_plane["period"], on_plane["mod"], on_plane["speed"]) == (4, 2, "c/4 diagonal")
    # On a torus the cells are taken as they are now, onto the plane; the torus does not move.
    torus = gol.Life.from_cells(np.pad(GLIDER, 5))
    torus.step(7)
    found = torus.identify()
    assert found["apgcode"] == "xq4_153" and torus.generation == 7
    # The same answer as `gol identify --json`, bar the timing and the source.
    path = tmp_path / "glider.rle"
    path.write_text("x = 3, y = 3\n" + rle(GLIDER) + "\n")
    cli = json.loads(run(gol_cli, "identify", "--json", str(path)).stdout)
    loaded = gol.Life.load(str(path)).identify()
    for answer in (cli, loaded):
        del answer["seconds"], answer["source"]
    assert cli == loaded


def test_what_dies_and_what_never_repeats():
    assert gol.Life.from_cells(np.ones((1, 2), dtype=np.uint8), infinite=True).identify()["type"] == "dies out"
    r = gol.Life.from_cells(np.array([[0, 1, 1], [1, 1, 0], [0, 1, 0]], dtype=np.uint8), infinite=True)
    found = r.identify(max_gens=500)
    assert found["type"] == "no period found"
    assert found["trend"]["limit"] == 500
    with pytest.raises(ValueError, match="empty"):
        gol.Life.from_cells(np.zeros((4, 4), dtype=np.uint8), infinite=True).identify()


def lifelib_code(pattern):
    """lifelib's apgcode of a pattern that is periodic as it stands, else None."""
    try:
        return pattern.apgcode
    except (KeyError, TypeError):
        # No period (KeyError), or lifelib 2.5.6's gun detector, tried on what has none,
        # failing (TypeError).
        return None


def test_apgcodes_agree_with_lifelib():
    """python-lifelib (PyPI; compiled with g++ on first use) is the oracle of apgcodes: random
    small soups, run 100 generations, then identified as one pattern each. Where ours settles,
    lifelib must give the same code from the generation ours says the cycle begins, and no
    code one generation before it (which is not yet in the cycle)."""
    lifelib = pytest.importorskip("lifelib")
    tree = lifelib.load_rules("b3s23").lifetree(n_layers=1)
    rng = np.random.default_rng(2026)
    periodic = late = aperiodic = 0
    for _ in range(300):
        side = int(rng.integers(3, 8))
        cells = (rng.random((side, side)) < 0.45).astype(np.uint8)
        if not cells.any():
            continue
        life = gol.Life.from_cells(cells, infinite=True)
        life.step(100)
        if life.population == 0:
            continue
        ours = life.identify(max_gens=2048)
        start = tree.pattern(rle(cells))[100]
        if "apgcode" not in ours:
            aperiodic += 1
            assert lifelib_code(start) is None, rle(cells)
            continue
        periodic += 1
        settled = ours["settled_at"]
        assert lifelib_code(start[settled]) == ours["apgcode"], rle(cells)
        if settled > 0:
            late += 1
            assert lifelib_code(start[settled - 1]) is None, rle(cells)
    assert periodic > 100 and late > 5 and aperiodic > 5, (periodic, late, aperiodic)


def test_soups_and_a_census_as_apgsearch_makes_them():
    soup = gol.soup("k_testseed0")
    assert soup.shape == (16, 16) and soup.sum() == 141
    assert "".join(".o"[c] for c in soup[0]) == ".....o.ooo.ooooo"
    found = gol.census("k_testseed", 3)
    assert found["soups"] == 3
    # apgsearch 5.2's per-soup census of soups 0, 1 and 2 of k_testseed, summed.
    assert found["counts"] == {
        "xs4_33": 16, "xp2_7": 23, "xq4_153": 5, "xs4_252": 2, "xs5_253": 3,
        "xs6_696": 2, "xs7_2596": 2, "xs8_6996": 1, "xs6_356": 1,
    }
    assert found["haul"].startswith("testing\n@VERSION gol-")
    assert "@NUM_SOUPS 3\n@NUM_OBJECTS 55\n" in found["haul"]
    with pytest.raises(ValueError, match="root"):
        gol.census("bad root", 1)
    with pytest.raises(ValueError, match="at least one"):
        gol.census("k_testseed", 0)
