// gol view: the page. It asks the server for frames of the cells it shows (see the protocol in
// crates/cli/src/view/mod.rs) and draws them; the simulation and the frames' reduction run on
// the server, so only the viewport travels, never more pixels than the canvas has.
//
// Stable element ids, for people and tests: world (the canvas), play, step, speed, zoom-in,
// zoom-out, fit, grid-lines, goto-x, goto-y, goto, generation, population, gps, size, rule,
// engine, zoom, cursor, chart, new-rule, new-width, new-height, new-seed, new-density, restart,
// file, member (the patterns of a zip archive uploaded, shown only then), error; for a cube (shown only then): cube (the fieldset), axis, slice-on, slice,
// slice-index. window.golViewer exposes the state, cellColour(x, y): the canvas colour at the
// centre of world cell (x, y) (on the plane, x and y may be BigInts or decimal strings), or null
// where it is not on the canvas, and goTo(x, y).
"use strict";

// The infinite plane: cells have Golly's coordinates, of any size. The page keeps an anchor cell
// (ax, ay) as BigInts and the view's centre (cx, cy) as numbers relative to it, moving the anchor
// whenever the centre strays far, so that panning is exact anywhere. Zoomed out, a pixel of a
// frame is a block of 2^level cells each way, drawn from the quadtree's populations.

// A cube is shown as a picture of side M: the live cells summed along the chosen axis, or the
// cells of one slice across it; the page pans and zooms over it as over a grid.

// The colour map of crates/core/src/picture.rs: a share of live cells, 0 to 255, to a colour.
const ANCHORS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];
const PALETTE = new Uint8Array(256 * 3);
for (let i = 0; i < 256; i++) {
  const at = i * 8, segment = Math.min(7, Math.floor(at / 255)), within = at - segment * 255;
  for (let c = 0; c < 3; c++) {
    const from = ANCHORS[segment][c], to = ANCHORS[segment + 1][c];
    PALETTE[i * 3 + c] = Math.floor((from * (255 - within) + to * within + 127) / 255);
  }
}

const $ = (id) => document.getElementById(id);
const canvas = $("world");
const context = canvas.getContext("2d");
const offscreen = document.createElement("canvas");
const MAX_UPLOAD = 16 << 20;
const MAX_ZOOM = 64;
// The widest view of the plane the server draws, each way (view/runner.rs).
const MAX_PLANE_VIEW = 2 ** 62;
// How far the centre may stray from the anchor before the anchor moves.
const REBASE = 2 ** 30;

const state = {
  status: null,        // the server's last status
  frame: null,         // the last frame: {width, height, block, x, y, pixels}
  plane: false,        // whether the world is the infinite plane
  ax: 0n, ay: 0n,      // the anchor cell (always 0 on a grid)
  cx: 0, cy: 0,        // the cell at the canvas's centre, relative to the anchor
  zoom: 1,             // canvas pixels a cell
  history: [],         // [generation, population]
  frames: 0,           // frames received
  errors: [],          // errors shown
};
let socket = null;
let viewQueued = false;

function send(message) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function showError(text) {
  state.errors.push(text);
  $("error").textContent = text;
}

function mod(a, n) { return ((a % n) + n) % n; }

function world() {
  if (state.plane) return [Infinity, Infinity];
  return state.status ? [state.status.width, state.status.height] : [1, 1];
}

// Moves the anchor to the centre's whole cells (the plane only).
function rebase() {
  if (!state.plane) return;
  for (const [c, a] of [["cx", "ax"], ["cy", "ay"]]) {
    if (Math.abs(state[c]) < REBASE) continue;
    const whole = Math.trunc(state[c]);
    state[a] += BigInt(whole);
    state[c] -= whole;
  }
}

// A count of the status (a number on a grid, a decimal string on the plane) for people.
function count(n) {
  return typeof n === "string" ? BigInt(n).toLocaleString() : n.toLocaleString();
}

// The cells on the canvas: the top-left cell (fractional) and how many cells it shows.
function layout() {
  const [w, h] = world();
  const across = canvas.width / state.zoom, down = canvas.height / state.zoom;
  return { left: state.cx - across / 2, top: state.cy - down / 2, across, down, w, h };
}

// The view to ask for: the cells on the canvas, at most the world once each way.
function viewRequest() {
  const l = layout();
  if (state.plane) {
    const side = (shown) => BigInt(Math.min(MAX_PLANE_VIEW, Math.ceil(shown) + 1)).toString();
    return {
      type: "view",
      x: (state.ax + BigInt(Math.floor(l.left))).toString(),
      y: (state.ay + BigInt(Math.floor(l.top))).toString(),
      width: side(l.across),
      height: side(l.down),
      pixels_wide: canvas.width,
      pixels_high: canvas.height,
    };
  }
  const whole = (n, left, shown) => (shown >= n ? [0, n] : [mod(Math.floor(left), n), Math.min(n, Math.ceil(shown) + 1)]);
  const [x, width] = whole(l.w, l.left, l.across);
  const [y, height] = whole(l.h, l.top, l.down);
  return { type: "view", x, y, width, height, pixels_wide: canvas.width, pixels_high: canvas.height };
}

function queueView() {
  if (viewQueued) return;
  viewQueued = true;
  requestAnimationFrame(() => {
    viewQueued = false;
    send(viewRequest());
    draw();
  });
}

// Where a frame's first cell lies on the canvas, in cells from the canvas's left and top.
function origin(frame) {
  const l = layout();
  if (state.plane) return [Number(frame.px - state.ax) - l.left, Number(frame.py - state.ay) - l.top];
  const axis = (n, start, left, shown) => {
    if (shown >= n) return start - left;
    // The frame starts at cell `start`; the canvas at `left`: the nearest copy on the torus.
    let d = mod(start - Math.floor(left), n);
    if (d > n / 2) d -= n;
    return Math.floor(left) + d - left;
  };
  return [axis(l.w, frame.x, l.left, l.across), axis(l.h, frame.y, l.top, l.down)];
}

function draw() {
  context.fillStyle = "#111";
  context.fillRect(0, 0, canvas.width, canvas.height);
  const f = state.frame;
  if (!f) return;
  if (offscreen.width !== f.width || offscreen.height !== f.height) {
    offscreen.width = f.width;
    offscreen.height = f.height;
  }
  const image = new ImageData(f.width, f.height);
  for (let i = 0; i < f.pixels.length; i++) {
    const p = f.pixels[i] * 3;
    image.data[i * 4] = f.palette[p];
    image.data[i * 4 + 1] = f.palette[p + 1];
    image.data[i * 4 + 2] = f.palette[p + 2];
    image.data[i * 4 + 3] = 255;
  }
  offscreen.getContext("2d").putImageData(image, 0, 0);
  const [ox, oy] = origin(f);
  const cell = state.zoom, size = f.block * cell;
  context.imageSmoothingEnabled = false;
  context.drawImage(offscreen, ox * cell, oy * cell, f.width * size, f.height * size);
  if ($("grid-lines").checked && f.block === 1 && cell >= 6) {
    context.strokeStyle = "rgba(255, 255, 255, 0.12)";
    context.lineWidth = 1;
    context.beginPath();
    const x0 = ox * cell, y0 = oy * cell;
    for (let i = 0; i <= f.width; i++) {
      const x = Math.round(x0 + i * cell) + 0.5;
      context.moveTo(x, y0);
      context.lineTo(x, y0 + f.height * cell);
    }
    for (let j = 0; j <= f.height; j++) {
      const y = Math.round(y0 + j * cell) + 0.5;
      context.moveTo(x0, y);
      context.lineTo(x0 + f.width * cell, y);
    }
    context.stroke();
  }
}

function drawChart() {
  const chart = $("chart"), c = chart.getContext("2d");
  c.clearRect(0, 0, chart.width, chart.height);
  const points = state.history;
  if (points.length < 2) return;
  const g0 = points[0][0], g1 = points[points.length - 1][0] || 1;
  let most = 1;
  for (const [, p] of points) most = Math.max(most, p);
  c.strokeStyle = "rgb(92, 200, 99)";
  c.beginPath();
  points.forEach(([g, p], i) => {
    const x = ((g - g0) / Math.max(1, g1 - g0)) * (chart.width - 2) + 1;
    const y = chart.height - 2 - (p / most) * (chart.height - 4);
    if (i === 0) c.moveTo(x, y); else c.lineTo(x, y);
  });
  c.stroke();
  c.fillStyle = "#999";
  c.fillText(most.toLocaleString(), 3, 10);
}

// What a cube's picture shows, as the controls say.
function look() {
  return {
    type: "look",
    axis: $("axis").value,
    slice: $("slice-on").checked ? Number($("slice").value) : null,
  };
}

function showCube(s) {
  const cube = s.depth !== undefined;
  $("cube").hidden = !cube;
  $("new-height-row").hidden = cube;
  $("new-width-label").textContent = cube ? "Side" : "Width";
  if (!cube) return;
  const slider = $("slice");
  if (Number(slider.max) !== s.depth - 1) {
    slider.max = s.depth - 1;
    if (Number(slider.value) > s.depth - 1) slider.value = s.depth - 1;
    $("slice-index").textContent = slider.value;
  }
}

function sizeText(s) {
  if (s.universe !== undefined) {
    const b = s.bounding_box;
    return b ? `infinite plane; live cells in ${count(b.width)} × ${count(b.height)} from (${b.x}, ${b.y})` : "infinite plane, empty";
  }
  return s.depth === undefined ? `${s.width} × ${s.height}` : `${s.width} × ${s.height} × ${s.depth}`;
}

function showStatus(s) {
  $("generation").textContent = count(s.generation);
  $("population").textContent = count(s.population);
  $("gps").textContent = s.running ? s.generations_per_second.toFixed(1) : "paused";
  $("size").textContent = sizeText(s);
  $("rule").textContent = s.rule;
  $("engine").textContent = s.engine;
  $("play").textContent = s.running ? "Pause" : "Play";
  $("zoom").textContent = state.zoom >= 1 ? `${state.zoom.toFixed(2)} px a cell` : `${(1 / state.zoom).toPrecision(3)} cells a px`;
  const last = state.history[state.history.length - 1];
  const generation = Number(s.generation), population = Number(s.population);
  if (!last || last[0] !== generation) {
    if (last && generation < last[0]) state.history = [];
    state.history.push([generation, population]);
    if (state.history.length > 600) state.history.splice(0, state.history.length - 600);
    drawChart();
  }
}

function fit() {
  if (state.plane) {
    const b = state.status && state.status.bounding_box;
    if (!b) {
      [state.ax, state.ay, state.cx, state.cy, state.zoom] = [0n, 0n, 0, 0, 8];
    } else {
      const w = BigInt(b.width), h = BigInt(b.height);
      state.ax = BigInt(b.x) + w / 2n;
      state.ay = BigInt(b.y) + h / 2n;
      state.cx = Number(w % 2n) / 2;
      state.cy = Number(h % 2n) / 2;
      const zoom = 0.95 * Math.min(canvas.width / Number(w), canvas.height / Number(h));
      state.zoom = Math.max(leastZoom(), Math.min(MAX_ZOOM, zoom));
    }
    queueView();
    return;
  }
  const [w, h] = world();
  state.zoom = Math.min(MAX_ZOOM, Math.min(canvas.width / w, canvas.height / h));
  state.cx = w / 2;
  state.cy = h / 2;
  queueView();
}

function onMessage(event) {
  if (typeof event.data === "string") {
    const message = JSON.parse(event.data);
    if (message.type === "error") showError(message.message);
    if (message.type === "choose") choose(message);
    return;
  }
  const bytes = event.data, view = new DataView(bytes);
  const n = view.getUint32(0, true);
  const status = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 4, n)));
  const at = 4 + n;
  const [width, height, block, x, y] = [0, 1, 2, 3, 4].map((i) => view.getUint32(at + 4 * i, true));
  const plane = status.universe !== undefined;
  const was = state.status;
  const resized = !was || plane !== state.plane || (plane
    ? was.restarts !== status.restarts
    : was.width !== status.width || was.height !== status.height);
  state.status = status;
  state.plane = plane;
  const pixels = new Uint8Array(bytes, at + 20, width * height);
  // A frame of whole cells under a rule that colours its states: pixels are states.
  const palette = status.palette ? Uint8Array.from(status.palette) : PALETTE;
  state.frame = plane
    ? { width, height, block: 2 ** status.frame.level, level: status.frame.level,
        px: BigInt(status.frame.x), py: BigInt(status.frame.y), pixels, palette }
    : { width, height, block, x, y, pixels, palette };
  state.frames += 1;
  if (resized) state.history = [];
  showStatus(status);
  if (resized) {
    showCube(status);
    for (const o of document.querySelectorAll(".plane-only")) o.hidden = !plane;
    if (!plane) {
      state.ax = state.ay = 0n;
      $("new-width").value = status.width;
      $("new-height").value = status.height;
    }
    $("new-rule").value = status.rule;
    fit();
  }
  draw();
}

function connect() {
  // The token of the URL gol view printed: the server answers no socket without it.
  const token = new URLSearchParams(location.search).get("token") || "";
  socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    send(look());
    send({ type: "view", x: 0, y: 0, width: 1, height: 1, pixels_wide: 1, pixels_high: 1 });
  };
  socket.onmessage = onMessage;
  socket.onclose = () => showError("the connection to gol view closed; reload the page once it runs again");
}

function resize() {
  canvas.width = Math.max(1, canvas.clientWidth);
  canvas.height = Math.max(1, canvas.clientHeight);
  queueView();
}

// The least zoom: half the world on a grid; on the plane, the widest view the server draws.
function leastZoom() {
  if (state.plane) return Math.max(canvas.width, canvas.height) / MAX_PLANE_VIEW;
  const [w, h] = world();
  return Math.min(canvas.width / w, canvas.height / h) / 2;
}

function zoomAt(px, py, factor) {
  const zoom = Math.min(MAX_ZOOM, Math.max(leastZoom(), state.zoom * factor));
  const cellX = state.cx + (px - canvas.width / 2) / state.zoom;
  const cellY = state.cy + (py - canvas.height / 2) / state.zoom;
  state.zoom = zoom;
  state.cx = cellX - (px - canvas.width / 2) / zoom;
  state.cy = cellY - (py - canvas.height / 2) / zoom;
  rebase();
  queueView();
}

// Centres the view on cell (x, y): numbers, BigInts or decimal strings.
function goTo(x, y) {
  if (state.plane) {
    [state.ax, state.ay, state.cx, state.cy] = [BigInt(x), BigInt(y), 0.5, 0.5];
  } else {
    const [w, h] = world();
    state.cx = mod(Number(x), w) + 0.5;
    state.cy = mod(Number(y), h) + 0.5;
  }
  queueView();
}

function cellUnder(event) {
  const r = canvas.getBoundingClientRect();
  const [w, h] = world();
  const x = state.cx + (event.clientX - r.left - canvas.width / 2) / state.zoom;
  const y = state.cy + (event.clientY - r.top - canvas.height / 2) / state.zoom;
  if (state.plane) return [state.ax + BigInt(Math.floor(x)), state.ay + BigInt(Math.floor(y))];
  return [mod(Math.floor(x), w), mod(Math.floor(y), h)];
}

// The last file uploaded, in base64, and its name: a zip archive of several patterns is sent
// again with the one chosen (`member`).
let uploaded = null;

// `bytes` (an ArrayBuffer) in base64, a slice at a time (String.fromCharCode takes so many
// arguments at most).
function base64(bytes) {
  const all = new Uint8Array(bytes);
  let binary = "";
  for (let at = 0; at < all.length; at += 0x8000) {
    binary += String.fromCharCode.apply(null, all.subarray(at, at + 0x8000));
  }
  return btoa(binary);
}

// Any pattern file the server reads goes as its bytes (compressed ones too).
function upload(file) {
  if (file.size > MAX_UPLOAD) {
    showError(`${file.name}: ${file.size} bytes is more than the ${MAX_UPLOAD} an upload may have`);
    return;
  }
  file.arrayBuffer().then((bytes) => {
    $("error").textContent = "";
    $("member-row").hidden = true;
    uploaded = { name: file.name, bytes: base64(bytes) };
    send({ type: "load", name: file.name, bytes: uploaded.bytes });
  });
}

// The server asks which pattern of an archive to load: the choice is offered beside the file.
function choose(message) {
  const select = $("member");
  select.replaceChildren(new Option("choose one…", ""));
  for (const name of message.patterns) select.add(new Option(name, name));
  $("member-row").hidden = false;
  // The choice is the side panel's last row: scroll the panel down to it (not sideways).
  const panel = select.closest("aside");
  panel.scrollTop = panel.scrollHeight;
  select.focus({ preventScroll: true });
}

$("member").onchange = (e) => {
  if (!uploaded || !e.target.value) return;
  $("error").textContent = "";
  send({ type: "load", name: `${uploaded.name}:${e.target.value}`, bytes: uploaded.bytes });
};

// Pan by dragging.
let drag = null;
canvas.addEventListener("pointerdown", (e) => {
  drag = { x: e.clientX, y: e.clientY };
  canvas.setPointerCapture(e.pointerId);
  canvas.classList.add("dragging");
});
canvas.addEventListener("pointermove", (e) => {
  const [cx, cy] = cellUnder(e);
  $("cursor").textContent = `${cx}, ${cy}`;
  if (!drag) return;
  state.cx -= (e.clientX - drag.x) / state.zoom;
  state.cy -= (e.clientY - drag.y) / state.zoom;
  if (state.plane) {
    rebase();
  } else {
    const [w, h] = world();
    state.cx = mod(state.cx, w);
    state.cy = mod(state.cy, h);
  }
  drag = { x: e.clientX, y: e.clientY };
  queueView();
});
canvas.addEventListener("pointerup", () => {
  drag = null;
  canvas.classList.remove("dragging");
});
canvas.addEventListener("wheel", (e) => {
  e.preventDefault();
  const r = canvas.getBoundingClientRect();
  zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
}, { passive: false });

$("zoom-in").onclick = () => zoomAt(canvas.width / 2, canvas.height / 2, 2);
$("zoom-out").onclick = () => zoomAt(canvas.width / 2, canvas.height / 2, 0.5);
$("fit").onclick = fit;
$("grid-lines").onchange = draw;
$("play").onclick = () => send({ type: state.status && state.status.running ? "pause" : "play" });
$("goto").onclick = () => {
  try {
    goTo(BigInt($("goto-x").value.trim() || "0"), BigInt($("goto-y").value.trim() || "0"));
  } catch (e) {
    showError(`go to: ${$("goto-x").value}, ${$("goto-y").value} is not a cell (two integers)`);
  }
};
// A step is the generations a frame chosen (one at full speed), as Golly's step size.
$("step").onclick = () => send({ type: "step", generations: Number($("speed").value) || 1 });
$("speed").onchange = (e) => send({ type: "speed", generations: Number(e.target.value) });
$("restart").onclick = () => {
  $("error").textContent = "";
  const density = $("new-density").value;
  send({
    type: "restart",
    width: Number($("new-width").value),
    height: Number($("new-height").value),
    seed: Number($("new-seed").value),
    density: density === "" ? null : Number(density),
    rule: $("new-rule").value,
  });
};
$("axis").onchange = () => send(look());
$("slice-on").onchange = () => {
  $("slice").disabled = !$("slice-on").checked;
  send(look());
};
$("slice").oninput = () => {
  $("slice-index").textContent = $("slice").value;
  send(look());
};
$("file").onchange = (e) => { if (e.target.files[0]) upload(e.target.files[0]); };
const stage = $("stage");
stage.addEventListener("dragover", (e) => { e.preventDefault(); stage.classList.add("dropping"); });
stage.addEventListener("dragleave", () => stage.classList.remove("dropping"));
stage.addEventListener("drop", (e) => {
  e.preventDefault();
  stage.classList.remove("dropping");
  if (e.dataTransfer.files[0]) upload(e.dataTransfer.files[0]);
});
window.addEventListener("resize", resize);

window.golViewer = {
  state,
  cellColour(x, y) {
    const l = layout();
    const along = (c, left, n, shown) => (shown >= n ? c - left : mod(c - left, n));
    const [sx, sy] = state.plane
      ? [(Number(BigInt(x) - state.ax) - l.left + 0.5) * state.zoom,
         (Number(BigInt(y) - state.ay) - l.top + 0.5) * state.zoom]
      : [(along(x, l.left, l.w, l.across) + 0.5) * state.zoom,
         (along(y, l.top, l.h, l.down) + 0.5) * state.zoom];
    if (sx < 0 || sy < 0 || sx >= canvas.width || sy >= canvas.height) return null;
    return Array.from(context.getImageData(Math.floor(sx), Math.floor(sy), 1, 1).data.slice(0, 3));
  },
  send,
  goTo,
};

resize();
connect();
