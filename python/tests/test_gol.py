"""The Python package against the library's own answers, the CLI and the oracle."""

import os
import struct
import threading
import time

import numpy as np
import pytest

import gol

from conftest import run

GLIDER = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=np.uint8)

# The engines that run only rule tables and Larger than Life rules.
STATES_ENGINES = {"cpu-states", "cuda-states"}


def glider_on(width, height, left=0, top=0):
    cells = np.zeros((height, width), dtype=np.uint8)
    cells[top : top + 3, left : left + 3] = GLIDER
    return cells


def test_the_seminar_case_gives_47026():
    sim = gol.Life.soup(1024, 1024, seed=0)
    assert (sim.width, sim.height, sim.generation, sim.rule) == (1024, 1024, 0, "B3/S23")
    sim.step(1024)
    assert sim.population == 47026
    assert sim.generation == 1024
    assert sim.engine != "auto"
    assert sim.engine in {e["name"] for e in gol.engines()}


def test_numpy_round_trip_copies_the_cells():
    rng = np.random.default_rng(5)
    a = (rng.random((37, 71)) < 0.4).astype(np.uint8)
    sim = gol.Life.from_cells(a)
    b = sim.cells()
    assert b.dtype == np.uint8 and b.shape == (37, 71)
    assert np.array_equal(a, b)
    a[0, 0] ^= 1  # a copy: changing the array changes nothing in the simulation
    assert np.array_equal(sim.cells(), b)
    # Booleans and other integer types are taken too.
    assert np.array_equal(gol.Life.from_cells(b.astype(bool)).cells(), b)
    assert np.array_equal(gol.Life.from_cells(b.astype(np.int64).tolist()).cells(), b)


def test_a_glider_moves_one_cell_diagonally_every_four_generations():
    start = glider_on(10, 8)
    sim = gol.Life.from_cells(start, engine="cpu-bitsliced")
    sim.step(4)
    assert np.array_equal(sim.cells(), np.roll(start, (1, 1), axis=(0, 1)))
    assert sim.population == 5
    # After 4 × 40 generations it has gone round the torus (lcm of 10 and 8 steps).
    sim.step(4 * 39)
    assert np.array_equal(sim.cells(), start)


def test_windows_wrap_round_the_torus():
    # The glider's 3×3 box straddles both edges: rows 14, 15, 0 and columns 14, 15, 0.
    cells = np.roll(glider_on(16, 16), (14, 14), axis=(0, 1))
    sim = gol.Life.from_cells(cells)
    window = sim.cells(x=14, y=14, width=3, height=3)
    assert np.array_equal(window, GLIDER)
    whole = sim.cells()
    assert np.array_equal(sim.cells(x=5, y=3, width=16, height=16), np.roll(whole, (-3, -5), axis=(0, 1)))


def test_every_engine_here_agrees_with_the_oracle():
    a = (np.random.default_rng(9).random((45, 67)) < 0.5).astype(np.uint8)
    expected = gol.Life.from_cells(a, rule="B36/S23", engine="cpu-scalar")
    expected.step(33)
    for info in gol.engines():
        if 2 not in info["dims"] or not info["available"]:
            continue
        if info["name"] in STATES_ENGINES:
            with pytest.raises(ValueError, match="runs only rule tables and Larger than Life"):
                gol.Life.from_cells(a, rule="b36/s23", engine=info["name"])
            continue
        sim = gol.Life.from_cells(a, rule="b36/s23", engine=info["name"])
        sim.step(10)
        sim.step(23)
        assert np.array_equal(sim.cells(), expected.cells()), info["name"]
        assert sim.population == expected.population


def test_rle_load_and_save(tmp_path):
    rle = tmp_path / "glider.rle"
    rle.write_text("#N glider\nx = 3, y = 3, rule = B3/S23:T12,9\nbo$2bo$3o!\n")
    sim = gol.Life.load(rle)
    assert (sim.width, sim.height) == (12, 9)
    assert sim.population == 5
    sized = gol.Life.load(rle, width=20, height=20, rule="B36/S23")
    assert (sized.width, sized.height, sized.rule) == (20, 20, "B36/S23")
    sim.step(8)
    out = tmp_path / "end.rle"
    sim.save(out)
    again = gol.Life.load(out)
    assert np.array_equal(again.cells(), sim.cells())
    for name in ["end.cells", "end.png"]:
        sim.save(tmp_path / name)
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "end.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sim._repr_png_()[:4] == b"\x89PNG"
    assert "12x9" in repr(sim) and "generation 8" in repr(sim)


def test_a_cube_bin_cycle_is_byte_identical_to_gol_run(tmp_path, gol_cli):
    start = tmp_path / "in.bin"
    run(gol_cli, "run", "--dim", "3", "--size", "24", "--gens", "0", "--density", "0.25", "--seed", "3", "--output", str(start))
    run(gol_cli, "run", "--input", str(start), "--gens", "10", "--output", str(tmp_path / "cli.bin"))
    cube = gol.Cube.load(start)
    assert cube.generation == 0 and cube.side == 24 and cube.rule == "B6/S567"
    cube.step(10)
    cube.save(tmp_path / "py.bin")
    ours = (tmp_path / "py.bin").read_bytes()
    assert ours == (tmp_path / "cli.bin").read_bytes()
    assert struct.unpack("<QQ", ours[:16]) == (24, 10)
    # The stamp goes on from the file's, and the numpy cells are indexed [x, y, z].
    again = gol.Cube.load(tmp_path / "py.bin")
    assert again.generation == 10
    c = again.cells()
    assert c.shape == (24, 24, 24)
    assert np.array_equal(c.reshape(-1), np.frombuffer(ours[16:], dtype=np.uint8))
    assert np.array_equal(gol.Cube.from_cells(c).cells(), c)
    assert gol.Cube.soup(16, seed=1).population == gol.Cube.soup(16, seed=1).cells().sum()


def test_bad_input_raises_the_right_exceptions(tmp_path):
    with pytest.raises(ValueError, match="invalid rule"):
        gol.Life.soup(8, 8, rule="B9/S")
    with pytest.raises(ValueError, match="unknown engine"):
        gol.Life.soup(8, 8, engine="fastest")
    with pytest.raises(ValueError):
        gol.Life.soup(0, 8)
    with pytest.raises(ValueError, match="density"):
        gol.Life.soup(8, 8, density=1.5)
    with pytest.raises(ValueError, match="2-dimensional"):
        gol.Life.from_cells(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="0 .dead. or 1"):
        gol.Life.from_cells([[0, 2]])
    with pytest.raises(ValueError, match="dtype"):
        gol.Life.from_cells(np.zeros((2, 2), dtype=float))
    with pytest.raises(ValueError, match="shape"):
        gol.Cube.from_cells(np.zeros((2, 3, 2), dtype=np.uint8))
    with pytest.raises(ValueError, match="both width and height"):
        gol.Life.load("x.rle", width=5)
    with pytest.raises(FileNotFoundError):
        gol.Life.load(tmp_path / "missing.rle", width=8, height=8)
    with pytest.raises(FileNotFoundError):
        gol.Cube.load(tmp_path / "missing.bin")
    with pytest.raises(OSError):
        gol.Life.soup(4, 4).save(tmp_path / "no" / "such" / "dir.rle")
    with pytest.raises(ValueError, match="unknown output format"):
        gol.Life.soup(4, 4).save(tmp_path / "x.xyz")
    bad = tmp_path / "bad.rle"
    bad.write_text("x = 3, y = 3\nbo$2bo$3q!\n")
    with pytest.raises(gol.PatternError) as caught:
        gol.Life.load(bad, width=8, height=8)
    assert isinstance(caught.value, ValueError)
    assert caught.value.path == str(bad) and caught.value.line == 2
    with pytest.raises(MemoryError):
        gol.Life.soup(1 << 24, 1 << 24)
    cuda = [e for e in gol.engines() if e["name"] == "cuda-global"][0]
    if not cuda["available"]:
        with pytest.raises(RuntimeError, match=".+"):
            gol.Life.soup(8, 8, engine="cuda-global")


def test_two_simulations_step_at_once_in_two_threads():
    sims = [gol.Life.soup(1024, 1024, seed=0, engine="cpu-bitsliced") for _ in range(2)]
    errors = []

    def work(sim):
        try:
            sim.step(1024)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in sims]
    for t in threads:
        t.start()
    # While they step without the GIL, this thread runs Python.
    ticks = 0
    while any(t.is_alive() for t in threads):
        ticks += 1
        time.sleep(0.001)
    for t in threads:
        t.join()
    assert not errors
    assert [s.population for s in sims] == [47026, 47026]
    assert ticks > 0


def test_engines_lists_every_engine_with_its_dimensions():
    engines = {e["name"]: e for e in gol.engines()}
    assert engines["cpu-scalar"]["dims"] == [2, 3] and engines["cpu-scalar"]["available"]
    assert engines["cpu-table"]["dims"] == [2]
    assert engines["cuda-swar"]["dims"] == [3]
    assert engines["hashlife"]["dims"] == [] and engines["hashlife"]["plane"]
    assert engines["hashlife"]["available"]
    assert engines["tiles"]["dims"] == [] and engines["tiles"]["plane"] and engines["tiles"]["available"]
    assert engines["window"]["plane"] and engines["window"]["available"]
    for e in engines.values():
        assert set(e) == {"name", "dims", "plane", "available", "reason"}
        assert (e["reason"] is None) == e["available"]


def test_verify_quick_passes():
    assert gol.verify(quick=True, seed=3) is None


@pytest.mark.skipif(os.environ.get("GOL_REQUIRE_GPU") is None, reason="GOL_REQUIRE_GPU unset: the GPU check runs on the GPU machine")
def test_cuda_engines_match_the_cpu():
    for info in gol.engines():
        if info["name"].startswith("cuda-"):
            assert info["available"], info
    a = (np.random.default_rng(2).random((300, 517)) < 0.3).astype(np.uint8)
    expected = gol.Life.from_cells(a, engine="cpu-bitsliced")
    expected.step(100)
    for name in ["cuda-bitsliced", "cuda-lut", "cuda-shared", "cuda-global"]:
        sim = gol.Life.from_cells(a, engine=name)
        sim.step(100)
        assert np.array_equal(sim.cells(), expected.cells()), name
    c = (np.random.default_rng(3).random((40, 40, 40)) < 0.2).astype(np.uint8)
    cpu = gol.Cube.from_cells(c, engine="cpu-bitsliced")
    gpu = gol.Cube.from_cells(c, engine="cuda-bitsliced")
    cpu.step(20)
    gpu.step(20)
    assert np.array_equal(cpu.cells(), gpu.cells())


def test_the_readme_example_runs():
    """The Python block of the README's "Python" section, as a reader would paste it."""
    readme = (os.path.dirname(__file__) + "/../../README.md")
    text = open(readme, encoding="utf-8").read()
    section = text[text.index("## Python") :]
    block = section[section.index("```python") + len("```python") : section.index("```", section.index("```python") + 9)]
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["window"].shape == (32, 64)


def test_rules_of_other_families_run_where_they_can():
    a = (np.random.default_rng(5).random((37, 29)) < 0.4).astype(np.uint8)
    for rule in ["B2-a/S12", "B2/S34H", "b2/s013v"]:
        expected = gol.Life.from_cells(a, rule=rule, engine="cpu-scalar")
        expected.step(21)
        for info in gol.engines():
            if 2 not in info["dims"] or not info["available"]:
                continue
            if info["name"] in STATES_ENGINES:
                with pytest.raises(ValueError, match="runs only rule tables"):
                    gol.Life.from_cells(a, rule=rule, engine=info["name"])
                continue
            if info["name"] not in ("cpu-scalar", "cpu-bitsliced", "cuda-bitsliced"):
                with pytest.raises(ValueError, match="runs only outer-totalistic Moore rules"):
                    gol.Life.from_cells(a, rule=rule, engine=info["name"])
                continue
            sim = gol.Life.from_cells(a, rule=rule, engine=info["name"])
            sim.step(21)
            assert np.array_equal(sim.cells(), expected.cells()), (rule, info["name"])
    assert gol.Life.from_cells(a, rule="b2-a/s12").rule == "B2-a/S12"
    with pytest.raises(ValueError, match="letter 'x' does not go with count 2"):
        gol.Life.from_cells(a, rule="B2x/S23")


def test_bounded_planes_run_on_every_engine():
    a = (np.random.default_rng(9).random((23, 41)) < 0.45).astype(np.uint8)
    for rule in ["B3/S23:P", "b2-a/s12:p"]:
        expected = gol.Life.from_cells(a, rule=rule, engine="cpu-scalar")
        expected.step(30)
        torus = gol.Life.from_cells(a, rule=rule.split(":")[0], engine="cpu-scalar")
        torus.step(30)
        # The edges matter: the plane and the torus part ways.
        assert not np.array_equal(expected.cells(), torus.cells())
        for info in gol.engines():
            if 2 not in info["dims"] or not info["available"]:
                continue
            try:
                sim = gol.Life.from_cells(a, rule=rule, engine=info["name"])
            except ValueError as e:
                assert "outer-totalistic" in str(e) or info["name"] in STATES_ENGINES, (
                    rule,
                    info["name"],
                    e,
                )
                continue
            sim.step(30)
            assert np.array_equal(sim.cells(), expected.cells()), (rule, info["name"])
    life = gol.Life.from_cells(a, rule="B3/S23:P")
    assert life.rule == "B3/S23:P"
    assert "bounded plane" in repr(life)
    with pytest.raises(ValueError, match="belongs to the grid"):
        gol.Life.from_cells(a, rule="B3/S23:P10,10")
    with pytest.raises(ValueError, match="Klein bottle"):
        gol.Life.from_cells(a, rule="B3/S23:K10,10")


def test_generations_rules_keep_their_states(tmp_path):
    # Star Wars (345/2/4): states 0 dead, 1 alive, 2 and 3 dying, in and out as numpy.
    a = np.random.default_rng(11).integers(0, 4, size=(31, 45), dtype=np.uint8)
    expected = gol.Life.from_cells(a, rule="345/2/4", engine="cpu-scalar")
    assert np.array_equal(expected.cells(), a)
    assert (expected.states, expected.population, expected.live) == (
        4,
        int(np.count_nonzero(a)),
        int(np.count_nonzero(a == 1)),
    )
    expected.step(25)
    cells = expected.cells()
    assert set(np.unique(cells)) <= {0, 1, 2, 3} and (cells >= 2).any()
    for info in gol.engines():
        if 2 not in info["dims"] or not info["available"]:
            continue
        if info["name"] in STATES_ENGINES:
            with pytest.raises(ValueError, match="runs only rule tables"):
                gol.Life.from_cells(a, rule="345/2/4", engine=info["name"])
            continue
        if info["name"] not in ("cpu-scalar", "cpu-bitsliced", "cuda-bitsliced"):
            with pytest.raises(ValueError, match="runs only two-state rules"):
                gol.Life.from_cells(a, rule="345/2/4", engine=info["name"])
            continue
        sim = gol.Life.from_cells(a, rule="B2/S345/C4", engine=info["name"])
        sim.step(25)
        assert np.array_equal(sim.cells(), cells), info["name"]
        assert sim.rule == "345/2/4"
    # A window keeps the states; a saved RLE loads back the same.
    assert np.array_equal(expected.cells(3, 4, 10, 5), cells[4:9, 3:13])
    path = tmp_path / "wars.rle"
    expected.save(path)
    again = gol.Life.load(path)
    assert np.array_equal(again.cells(), cells) and again.states == 4
    with pytest.raises(ValueError, match="states 0 to 3"):
        gol.Life.from_cells(a + 1, rule="345/2/4")
    with pytest.raises(ValueError, match="two states"):
        expected.save(tmp_path / "wars.cells")


def test_a_pattern_without_a_size_runs_on_the_infinite_plane(tmp_path):
    path = tmp_path / "glider.rle"
    path.write_text("x = 3, y = 3\nbo$2bo$3o!\n")
    sim = gol.Life.load(path)
    # auto starts on tiles and races HashLife on the pattern once a step runs long.
    assert (sim.universe, sim.width, sim.height, sim.engine) == ("infinite plane", None, None, "tiles")
    # Golly puts a file without a position at (0, 0) on its unbounded plane.
    assert sim.bounding_box == (0, 0, 3, 3)
    assert np.array_equal(sim.cells(), GLIDER)
    far = 10**30
    sim.step(far)
    assert sim.generation == far and isinstance(sim.generation, int)
    assert sim.engine == "hashlife"
    assert sim.population == 5 and sim.live == 5
    x, y, w, h = sim.bounding_box
    assert (x, y, w, h) == (far // 4, far // 4, 3, 3)
    # Windows in Golly's coordinates, of any size.
    assert np.array_equal(sim.cells(x, y, 3, 3), GLIDER)
    window = sim.cells(x - 2, y - 1, 6, 4)
    assert window.shape == (4, 6) and window.sum() == 5
    assert np.array_equal(window[1:, 2:5], GLIDER)
    with pytest.raises(ValueError, match="x, y, width and height"):
        sim.cells(x, y)
    out = tmp_path / "far.rle"
    sim.save(out)
    text = out.read_text()
    assert f"#CXRLE Pos={x},{y} Gen={far}" in text
    again = gol.Life.load(out)
    assert again.bounding_box == (x, y, 3, 3)
    assert "infinite plane" in repr(sim)


def test_a_zip_archive_loads_its_pattern_under_its_own_rule_table(tmp_path):
    import zipfile

    # A rule table only the archive holds: birth on exactly three, and no cell dies.
    table = "@RULE PyZipRule\n@TABLE\nn_states:2\nneighborhood:Moore\nsymmetries:permute\n0,1,1,1,0,0,0,0,0,1\n"
    path = tmp_path / "pack.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("pack/line.rle", "x = 3, y = 1, rule = PyZipRule\n3o!\n")
        z.writestr("pack/dot.rle", "x = 1, y = 1, rule = PyZipRule\no!\n")
        z.writestr("PyZipRule.rule", table)
    with pytest.raises(ValueError, match="2 pattern files"):
        gol.Life.load(path)
    sim = gol.Life.load(f"{path}:pack/line.rle")
    assert sim.rule == "PyZipRule" and sim.population == 3
    sim.step(1)
    # The line's middle neighbours above and below are born; nothing dies.
    assert sim.population == 5


def test_infinite_soups_and_cells_match_a_torus_that_nothing_reaches_the_edge_of():
    rng = np.random.default_rng(11)
    cells = (rng.random((31, 40)) < 0.35).astype(np.uint8)
    plane = gol.Life.from_cells(cells, infinite=True)
    assert plane.universe == "infinite plane"
    gens, margin = 60, 64
    torus = gol.Life.from_cells(np.pad(cells, margin), engine="cpu-scalar")
    plane.step(gens)
    torus.step(gens)
    # The array's cell (20, 15) is on the origin: its top-left cell at (-20, -15).
    h, w = torus.height, torus.width
    window = plane.cells(-20 - margin, -15 - margin, w, h)
    assert np.array_equal(window, torus.cells())
    assert plane.population == torus.population
    soup = gol.Life.soup(64, 48, seed=3, infinite=True)
    grid = gol.Life.soup(64, 48, seed=3)
    assert np.array_equal(soup.cells(-32, -24, 64, 48), grid.cells())


def test_tiles_hashlife_and_auto_agree_on_the_plane():
    rng = np.random.default_rng(5)
    cells = (rng.random((90, 130)) < 0.4).astype(np.uint8)
    runs = {}
    for engine in ["tiles", "hashlife", "auto"]:
        sim = gol.Life.from_cells(cells, rule="B36/S23", engine=engine, infinite=True)
        sim.step(700)
        x, y, w, h = sim.bounding_box
        runs[engine] = (sim.population, sim.bounding_box, sim.cells(x, y, w, h).tobytes())
    assert runs["tiles"] == runs["hashlife"] == runs["auto"]
    with pytest.raises(ValueError, match="two-state"):
        gol.Life.soup(16, 16, rule="345/2/4", engine="tiles", infinite=True)


def test_populations_beyond_64_bits_are_python_ints(tmp_path):
    gun = tmp_path / "gun.rle"
    gun.write_text(
        "x = 36, y = 9, rule = B3/S23\n"
        "24bo$22bobo$12b2o6b2o12b2o$11bo3bo4b2o12b2o$2o8bo5bo3b2o$2o8bo3bob2o4bobo$"
        "10bo5bo7bo$11bo3bo$12b2o!\n"
    )
    sim = gol.Life.load(gun)
    sim.step(2**100)
    # A glider every 30 generations, none ever lost: about 5 cells for each.
    assert sim.population > 2**64
    assert abs(sim.population - 5 * 2**100 // 30) < 100
    mc = tmp_path / "gun.mc"
    sim.save(mc)
    again = gol.Life.load(mc)
    assert (again.population, again.bounding_box) == (sim.population, sim.bounding_box)
    assert again.generation == 0 and sim.generation == 2**100


def test_grids_refuse_more_generations_than_64_bits_hold():
    with pytest.raises(ValueError, match="2\\^64"):
        gol.Life.soup(8, 8).step(2**64)
    # B0 rules of B/S notation run on the plane kept complemented, as Golly runs them; other
    # B0 rules (Generations here) are refused there.
    assert gol.Life.soup(8, 8, rule="B03/S23", infinite=True).engine == "window"
    with pytest.raises(ValueError, match="B0"):
        gol.Life.soup(8, 8, rule="23/03/3", infinite=True)


# A rule table of our own: a live cell (1) fades (2) then empties; an empty cell with a live
# orthogonal neighbour comes alive (von Neumann, rotations of one transition, unbound
# variables).
FLOW = """@RULE Flow
@TABLE
n_states:3
neighborhood:vonNeumann
symmetries:rotate4
var a={0,1,2}
var b={0,1,2}
var c={0,1,2}
var d={0,1,2}
1,a,b,c,d,2
2,a,b,c,d,0
0,1,b,c,d,1
"""


def flow(cells, gens):
    """The Flow rule on a torus, by its definition."""
    for _ in range(gens):
        lit = cells == 1
        near = np.roll(lit, 1, 0) | np.roll(lit, -1, 0) | np.roll(lit, 1, 1) | np.roll(lit, -1, 1)
        cells = np.where(cells == 1, 2, np.where(cells == 2, 0, np.where(near, 1, 0))).astype(np.uint8)
    return cells


def test_rule_tables_run_from_the_folders_given_on_grids_and_the_plane(tmp_path):
    a = np.random.default_rng(3).integers(0, 3, size=(23, 37), dtype=np.uint8)
    with pytest.raises(ValueError, match="no rule table Flow.rule"):
        gol.Life.from_cells(a, rule="Flow")
    (tmp_path / "Flow.rule").write_text(FLOW)
    with pytest.raises(ValueError, match="not a folder"):
        gol.rule_folders([str(tmp_path / "nowhere")])
    gol.rule_folders([tmp_path])
    try:
        torus = gol.Life.from_cells(a, rule="Flow")
        assert (torus.engine, torus.states, torus.rule) == ("cpu-states", 3, "Flow")
        torus.step(9)
        assert np.array_equal(torus.cells(), flow(a, 9))
        oracle = gol.Life.from_cells(a, rule="Flow", engine="cpu-scalar")
        oracle.step(9)
        assert np.array_equal(oracle.cells(), flow(a, 9))
        # On the plane (HashLife), a torus that nothing reaches the edge of.
        margin, gens = 20, 15
        plane = gol.Life.from_cells(a, rule="Flow", infinite=True)
        assert plane.engine == "hashlife"
        big = np.pad(a, margin)
        plane.step(gens)
        h, w = big.shape
        assert np.array_equal(plane.cells(-18 - margin, -11 - margin, w, h), flow(big, gens))
        # A table's @COLORS colour its pictures, on a grid and on the plane: the PNG's
        # palette holds them at the states' indices.
        (tmp_path / "Flow.rule").write_text(FLOW + "@COLORS\n1 255 128 0\n2 0 0 255\n")
        for shown in [gol.Life.from_cells(a, rule="Flow"), gol.Life.from_cells(a, rule="Flow", infinite=True)]:
            png = shown._repr_png_()
            at = png.index(b"PLTE")
            assert png[at + 4 + 3 : at + 4 + 9] == bytes([255, 128, 0, 0, 0, 255])
    finally:
        gol.rule_folders([])


def test_larger_than_life_runs_on_tori_and_on_the_window():
    rule = "R2,C3,M1,S4..8,B4..6,NN"
    cells = (np.random.default_rng(8).random((30, 26)) < 0.4).astype(np.uint8)
    gens, reach = 12, 2
    margin = gens * reach + 2
    plane = gol.Life.from_cells(cells, rule=rule, infinite=True)
    torus = gol.Life.from_cells(np.pad(cells, margin), rule=rule)
    assert (plane.engine, torus.engine, plane.rule, torus.states) == ("window", "cpu-states", rule, 3)
    oracle = gol.Life.from_cells(np.pad(cells, margin), rule=rule, engine="cpu-scalar")
    plane.step(gens)
    torus.step(gens)
    oracle.step(gens)
    assert np.array_equal(oracle.cells(), torus.cells())
    h, w = torus.height, torus.width
    assert np.array_equal(plane.cells(-13 - margin, -15 - margin, w, h), torus.cells())
    assert plane.population == torus.population > 0
    with pytest.raises(ValueError, match="does not run Larger than Life"):
        gol.Life.from_cells(cells, rule=rule, engine="hashlife", infinite=True)
