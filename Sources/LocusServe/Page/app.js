// The live map of `locus serve` (docs/serve.md). Plain script, no library, no network resource but
// this server's own. Every id or name that comes from the site or the feed reaches the DOM through
// textContent or setAttribute only (the page's CSP forbids inline script and style as well).
"use strict";
(function () {
  const SVGNS = "http://www.w3.org/2000/svg";
  const TRAIL_S = 10;          // trail length, seconds of data
  const STALE_S = 30;          // a tag whose last fix is older than this before the view time is hidden
  const HEARD_S = 5;           // a locator not heard for longer than this is grey
  const MAX_FIXES = 2000000;   // timeline bound: the oldest fixes go beyond it
  const MAX_EVENTS = 500000;   // events kept (older ones fold into an occupancy baseline)
  const MAX_HEARD = 100000;    // heard times kept per locator
  const LIST_MAX = 200;        // rows of the event list
  const PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d", "#9333ea", "#ea580c"];

  const $ = (id) => document.getElementById(id);
  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function hel(name, cls, text, parent) {
    const e = document.createElement(name);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }
  function num(v) { return typeof v === "number" && isFinite(v) ? v : NaN; }
  function f2(v) { return Math.round(v * 100) / 100; }
  function fmtTime(t) {
    if (!isFinite(t)) return "–";
    if (Math.abs(t) >= 1e8) {  // an epoch: show the UTC time of day
      const d = new Date(t * 1000);
      return d.toISOString().slice(11, 23);
    }
    return t.toFixed(2) + " s";
  }
  function hash(s) { let h = 2166136261; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } return h >>> 0; }
  // A locator address as a comparable key: "0x9DD7", "40407" and 40407 are the same locator.
  function addrKey(a) {
    if (typeof a === "number") return String(a);
    const s = String(a).trim();
    if (/^0x[0-9a-f]+$/i.test(s)) return String(parseInt(s.slice(2), 16));
    if (/^[0-9]+$/.test(s)) return String(parseInt(s, 10));
    return s;
  }
  // First index i in a[lo, hi) with a[i] > t (a sorted, non-decreasing).
  function upper(a, lo, hi, t) {
    while (lo < hi) { const m = (lo + hi) >>> 1; if (a[m] <= t) lo = m + 1; else hi = m; }
    return lo;
  }

  // ---- The timeline -------------------------------------------------------------------------
  // Per tag, the fixes in typed columns (grown by doubling; `start` skips the dropped oldest).
  class Track {
    constructor(id, index) {
      this.id = id; this.index = index; this.n = 0; this.start = 0; this.cap = 0;
      this.t = new Float64Array(0); this.x = new Float32Array(0); this.y = new Float32Array(0);
      this.r = new Float32Array(0); this.tx = new Float32Array(0); this.ty = new Float32Array(0);
      this.err = new Float32Array(0); this.fl = new Int16Array(0); this.sorted = true;
      this.dom = null; this.colour = hash(id) % PALETTE.length;
    }
    grow() {
      const live = this.n - this.start, cap = Math.max(64, live * 2);
      const mv = (A, old) => { const a = new A(cap); a.set(old.subarray(this.start, this.n)); return a; };
      this.t = mv(Float64Array, this.t); this.x = mv(Float32Array, this.x); this.y = mv(Float32Array, this.y);
      this.r = mv(Float32Array, this.r); this.tx = mv(Float32Array, this.tx); this.ty = mv(Float32Array, this.ty);
      this.err = mv(Float32Array, this.err); this.fl = mv(Int16Array, this.fl);
      this.n = live; this.start = 0; this.cap = cap;
      if (this.dom) this.dom.last = -2;  // indices moved
    }
    push(t, x, y, r, tx, ty, err, fl) {
      if (this.n >= this.cap) this.grow();
      const i = this.n++;
      if (i > this.start && t < this.t[i - 1]) this.sorted = false;
      this.t[i] = t; this.x[i] = x; this.y[i] = y; this.r[i] = r; this.tx[i] = tx; this.ty[i] = ty; this.err[i] = err; this.fl[i] = fl;
    }
    sortIfNeeded() {
      if (this.sorted) return;
      const idx = []; for (let i = this.start; i < this.n; i++) idx.push(i);
      idx.sort((a, b) => this.t[a] - this.t[b] || a - b);
      const cols = ["t", "x", "y", "r", "tx", "ty", "err", "fl"];
      for (const c of cols) { const src = this[c].slice(); idx.forEach((j, k) => { this[c][this.start + k] = src[j]; }); }
      this.sorted = true;
    }
    // Index of the last fix at or before t, or -1.
    at(t) { this.sortIfNeeded(); return upper(this.t, this.start, this.n, t) - 1; }
    dropBefore(t) { this.sortIfNeeded(); const k = upper(this.t, this.start, this.n, t - 1e-9); const d = k - this.start; this.start = k; return d; }
    get count() { return this.n - this.start; }
  }

  const S = {
    site: null, floors: [], floorById: new Map(), floor: 0,
    tracks: new Map(), trackList: [], fixes: 0,
    events: [], eventT: [], listed: [], listedT: [], eventsReceived: 0,
    occBase: new Map(),          // "floor\0zone" -> Set of tags, the occupancy before the oldest kept event
    heard: new Map(),            // "floor\0addrKey" -> {t: Float64Array-like array}
    first: NaN, clock: NaN, frames: 0, lastId: 0, ended: false, status: null, gap: null,
    viewTime: NaN, live: true, playing: true, speed: 1, lastWall: 0,
    dirty: true, version: 0, geometry: new Map(), overlay: false,
  };
  const stats = { framesRendered: 0, longFrames: 0, renderTimes: [], lastTick: 0, activeUntil: 0, renderMs: 0 };

  // ---- The map ------------------------------------------------------------------------------
  const svg = $("map");
  const world = el("g", { id: "world" }, svg);
  const layers = {};
  for (const name of ["floors", "hdop", "zones", "locators", "tags"]) layers[name] = el("g", { id: "layer-" + name }, world);
  const view = { cx: 20, cy: 12, scale: 20, box: [0, 0, 40, 30] };  // scale: pixels per metre; (cx, cy): the world point at the centre
  // The canvas under the SVG (same box): the floor's fill, trails and truth tracks, drawn with the
  // SVG's own mapping of its viewBox (below), so that both move together on pan and zoom.
  const canvas = $("trails");
  const ctx = canvas.getContext("2d", { alpha: false });
  const stage = { w: 0, h: 0 };  // the SVG's size in CSS pixels (fractional), kept by a ResizeObserver
  function stageSize() {
    if (!(stage.w > 0 && stage.h > 0)) { const r = svg.getBoundingClientRect(); stage.w = r.width; stage.h = r.height; }
    return stage;
  }
  if (typeof ResizeObserver === "function") {
    new ResizeObserver((entries) => {
      for (const e of entries) { stage.w = e.contentRect.width; stage.h = e.contentRect.height; }
      applyView();
    }).observe(svg);
  }

  function applyView() {
    const w = svg.clientWidth || 800, h = svg.clientHeight || 600;
    const vw = w / view.scale, vh = h / view.scale;
    const box = [view.cx - vw / 2, -view.cy - vh / 2, vw, vh].map((v) => v.toFixed(4));
    svg.setAttribute("viewBox", box.join(" "));
    view.box = box.map(Number);
    const u = (1 / view.scale).toFixed(6);
    if (u !== view.u) { svg.style.setProperty("--u", u); view.u = u; }
    viewChanged();
  }
  function fit() {
    const f = S.floors[S.floor]; if (!f) return;
    const w = svg.clientWidth || 800, h = svg.clientHeight || 600;
    const fw = Math.max(1, num(f.widthM) || 1), fh = Math.max(1, num(f.heightM) || 1);
    view.scale = Math.min((w - 150) / fw, (h - 90) / fh);
    if (!(view.scale > 0)) view.scale = 10;
    view.cx = (num(f.originX) || 0) + fw / 2 + 30 / view.scale; view.cy = (num(f.originY) || 0) + fh / 2 + 15 / view.scale;
    applyView();
  }
  function zoom(factor, px, py) {
    const w = svg.clientWidth || 800, h = svg.clientHeight || 600;
    if (px === undefined) { px = w / 2; py = h / 2; }
    const wx = view.cx + (px - w / 2) / view.scale, wy = view.cy - (py - h / 2) / view.scale;
    view.scale = Math.min(5000, Math.max(0.2, view.scale * factor));
    view.cx = wx - (px - w / 2) / view.scale; view.cy = wy + (py - h / 2) / view.scale;
    applyView();
  }
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    zoom(Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (e) => { drag = { x: e.clientX, y: e.clientY, cx: view.cx, cy: view.cy }; svg.setPointerCapture(e.pointerId); svg.classList.add("dragging"); });
  svg.addEventListener("pointermove", (e) => {
    if (!drag) return;
    view.cx = drag.cx - (e.clientX - drag.x) / view.scale; view.cy = drag.cy + (e.clientY - drag.y) / view.scale; applyView();
  });
  const endDrag = () => { drag = null; svg.classList.remove("dragging"); };
  svg.addEventListener("pointerup", endDrag); svg.addEventListener("pointercancel", endDrag);
  window.addEventListener("resize", () => { stage.w = 0; applyView(); });
  $("zoom-in").addEventListener("click", () => zoom(1.4));
  $("zoom-out").addEventListener("click", () => zoom(1 / 1.4));
  $("zoom-fit").addEventListener("click", fit);

  function pts(list) { return list.map((p) => p[0].toFixed(3) + "," + (-p[1]).toFixed(3)).join(" "); }
  function polygonOf(z) {
    const p = Array.isArray(z.polygon) ? z.polygon : [];
    const out = [];
    for (const v of p) {
      const x = Array.isArray(v) ? num(v[0]) : num(v && v.x), y = Array.isArray(v) ? num(v[1]) : num(v && v.y);
      if (isFinite(x) && isFinite(y)) out.push([x, y]);
    }
    if (out.length > 1 && out[0][0] === out[out.length - 1][0] && out[0][1] === out[out.length - 1][1]) out.pop();
    return out;
  }
  // The outline at distance d outside a simple polygon: offset edges, arcs at convex corners,
  // mitre (capped) at reflex ones.
  function offsetPolygon(p, d) {
    const n = p.length; if (n < 3 || !(d > 0)) return p.slice();
    let area = 0; for (let i = 0; i < n; i++) { const a = p[i], b = p[(i + 1) % n]; area += a[0] * b[1] - b[0] * a[1]; }
    const q = area < 0 ? p.slice().reverse() : p;  // counter-clockwise: outward normal of (a→b) is (dy, −dx)
    const out = [];
    for (let i = 0; i < n; i++) {
      const a = q[(i + n - 1) % n], b = q[i], c = q[(i + 1) % n];
      let e1x = b[0] - a[0], e1y = b[1] - a[1], e2x = c[0] - b[0], e2y = c[1] - b[1];
      const l1 = Math.hypot(e1x, e1y) || 1, l2 = Math.hypot(e2x, e2y) || 1;
      e1x /= l1; e1y /= l1; e2x /= l2; e2y /= l2;
      const n1 = [e1y, -e1x], n2 = [e2y, -e2x];
      const cross = e1x * e2y - e1y * e2x;
      if (cross >= 0) {  // convex corner: arc from n1 to n2
        const a1 = Math.atan2(n1[1], n1[0]); let a2 = Math.atan2(n2[1], n2[0]);
        while (a2 < a1) a2 += 2 * Math.PI;
        const steps = Math.max(1, Math.ceil((a2 - a1) / (Math.PI / 12)));
        for (let k = 0; k <= steps; k++) { const ang = a1 + (a2 - a1) * k / steps; out.push([b[0] + d * Math.cos(ang), b[1] + d * Math.sin(ang)]); }
      } else {  // reflex corner: intersection of the offset lines
        const bx = n1[0] + n2[0], by = n1[1] + n2[1], bl = Math.hypot(bx, by) || 1;
        const cosh = (n1[0] * bx + n1[1] * by) / bl;
        const m = Math.min(d / Math.max(cosh, 1e-6), 4 * d);
        out.push([b[0] + bx / bl * m, b[1] + by / bl * m]);
      }
    }
    return out;
  }
  function centroid(p) {
    let a = 0, cx = 0, cy = 0;
    for (let i = 0; i < p.length; i++) { const u = p[i], v = p[(i + 1) % p.length]; const c = u[0] * v[1] - v[0] * u[1]; a += c; cx += (u[0] + v[0]) * c; cy += (u[1] + v[1]) * c; }
    if (Math.abs(a) < 1e-12) { let sx = 0, sy = 0; for (const u of p) { sx += u[0]; sy += u[1]; } return [sx / p.length, sy / p.length]; }
    return [cx / (3 * a), cy / (3 * a)];
  }

  function buildSite(site) {
    S.site = site;
    S.floors = Array.isArray(site.floors) ? site.floors : [];
    $("title").textContent = site.title ? String(site.title) : "Locus";
    const src = [];
    if (site.mode) src.push(String(site.mode));
    if (site.source) src.push(String(site.source));
    if (site.mode === "replay" && site.speed !== undefined) src.push(site.speed === 0 ? "as fast as it goes" : site.speed + "×");
    $("source").textContent = src.join(" · ");
    const pick = $("floor");
    S.floors.forEach((f, i) => {
      f._i = i; f._id = String(f.id);
      S.floorById.set(f._id, i);
      const opt = hel("option", null, f.name ? f.name + " (" + f._id + ")" : f._id, pick);
      opt.value = String(i);
      const x0 = num(f.originX) || 0, y0 = num(f.originY) || 0, w = num(f.widthM) || 0, h = num(f.heightM) || 0;
      const fg = el("g", { class: "floor", "data-floor": f._id }, layers.floors);
      el("rect", { class: "outline", x: x0, y: -(y0 + h), width: w, height: h }, fg);
      const grid = el("g", { class: "grid" }, fg);
      const step = w > 200 || h > 200 ? 10 : (w > 60 || h > 60 ? 5 : 1);
      if (w / step < 400 && h / step < 400) {
        for (let x = Math.ceil(x0 / step) * step; x < x0 + w; x += step) el("line", { x1: x, x2: x, y1: -y0, y2: -(y0 + h) }, grid);
        for (let y = Math.ceil(y0 / step) * step; y < y0 + h; y += step) el("line", { x1: x0, x2: x0 + w, y1: -y, y2: -y }, grid);
      }
      f._zones = [];
      const zg = el("g", { class: "floor", "data-floor": f._id }, layers.zones);
      for (const z of (Array.isArray(f.zones) ? f.zones : [])) {
        const poly = polygonOf(z);
        const g = el("g", { class: "zone", "data-zone": String(z.id), "data-floor": f._id, "data-occupants": "0" }, zg);
        const inDist = num(z.inDist);
        if (inDist > 0) el("polygon", { class: "margin", points: pts(offsetPolygon(poly, inDist)) }, g);
        el("polygon", { class: "area", points: pts(poly) }, g);
        const c = centroid(poly);
        const label = el("text", { class: "name", x: c[0].toFixed(3), y: (-c[1]).toFixed(3) }, g);
        const nm = z.name !== undefined && z.name !== null && String(z.name) !== "" ? String(z.name) : String(z.id);
        label.textContent = nm;
        const title = el("title", null, g);
        title.textContent = nm + " (" + String(z.id) + ")" + (inDist > 0 ? ", inDist " + inDist + " m" : "");
        f._zones.push({ id: String(z.id), key: f._id + "\u0000" + String(z.id), g, label, name: nm, n: -1 });
      }
      f._locators = [];
      const lg = el("g", { class: "floor", "data-floor": f._id }, layers.locators);
      for (const l of (Array.isArray(f.locators) ? f.locators : [])) {
        const x = num(l.x), y = num(l.y);
        const g = el("g", { class: "locator", "data-address": String(l.address), "data-heard": "false", transform: "translate(" + x + " " + (-y) + ")" }, lg);
        el("rect", { class: "mark", x: -0.18, y: -0.18, width: 0.36, height: 0.36, transform: "rotate(45)" }, g);
        const t1 = el("text", { class: "addr" }, g); t1.textContent = String(l.address);
        const t2 = el("text", { class: "age" }, g); t2.textContent = "never heard";
        const title = el("title", null, g); title.textContent = "locator " + String(l.address);
        f._locators.push({ key: f._id + "\u0000" + addrKey(l.address), g, age: t2, heard: null, ageText: "never heard" });
      }
    });
    $("floorpick").hidden = S.floors.length < 2;
    pick.addEventListener("change", () => showFloor(Number(pick.value)));
    showFloorIndex(0, false);
  }
  function showFloorIndex(i, refit) {
    if (!(i >= 0 && i < S.floors.length)) return false;
    S.floor = i;
    const id = S.floors[i]._id;
    for (const name of ["floors", "zones", "locators"]) for (const g of layers[name].children) {
      if (g.getAttribute("data-floor") === id) g.removeAttribute("display"); else g.setAttribute("display", "none");
    }
    $("floor").value = String(i);
    for (const tr of S.trackList) if (tr.dom) tr.dom.last = -2;  // trails are drawn per floor
    if (refit !== false) fit();
    loadOverlay();
    invalidate();
    return true;
  }
  function showFloor(id) {
    if (typeof id === "number") return showFloorIndex(id);
    const i = S.floorById.get(String(id));
    return i === undefined ? false : showFloorIndex(i);
  }

  // ---- HDOP overlay -------------------------------------------------------------------------
  function hdopColour(h) {
    const stops = [[1, [34, 197, 94]], [2, [234, 179, 8]], [3, [249, 115, 22]], [4, [220, 38, 38]]];
    if (h <= stops[0][0]) return stops[0][1];
    for (let k = 1; k < stops.length; k++) if (h <= stops[k][0]) {
      const [h0, c0] = stops[k - 1], [h1, c1] = stops[k], u = (h - h0) / (h1 - h0);
      return c0.map((v, j) => Math.round(v + (c1[j] - v) * u));
    }
    return stops[stops.length - 1][1];
  }
  function drawOverlay(i, g) {
    layers.hdop.textContent = "";
    if (typeof g.error === "string") { setNotice("HDOP map not available: " + g.error); return; }
    // Cells of stepX × stepY metres (centres x0 + i·stepX, y0 + j·stepY; j from the bottom).
    const nx = g.nx | 0, ny = g.ny | 0, x0 = num(g.x0), y0 = num(g.y0);
    const sx = num(g.stepX !== undefined ? g.stepX : g.step), sy = num(g.stepY !== undefined ? g.stepY : g.step);
    const h = Array.isArray(g.hdop) ? g.hdop : [];
    if (!(nx > 0 && ny > 0 && sx > 0 && sy > 0 && nx * ny <= 4e6)) return;
    const cv = document.createElement("canvas"); cv.width = nx; cv.height = ny;
    const cx = cv.getContext("2d"), img = cx.createImageData(nx, ny);
    let cells = 0;
    for (let j = 0; j < ny; j++) for (let k = 0; k < nx; k++) {
      const v = h[j * nx + k];
      if (typeof v !== "number" || !isFinite(v)) continue;
      const c = hdopColour(v), o = ((ny - 1 - j) * nx + k) * 4;
      img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2]; img.data[o + 3] = 255; cells++;
    }
    cx.putImageData(img, 0, 0);
    el("image", {
      class: "hdop", href: cv.toDataURL("image/png"), preserveAspectRatio: "none", "data-floor": S.floors[i]._id, "data-cells": String(cells),
      x: x0 - sx / 2, y: -(y0 - sy / 2 + ny * sy), width: nx * sx, height: ny * sy,
    }, layers.hdop);
  }
  function loadOverlay() {
    $("legend").hidden = !S.overlay;
    if (!S.overlay) { layers.hdop.textContent = ""; return; }
    const i = S.floor, f = S.floors[i]; if (!f) return;
    const idx = f.index !== undefined ? f.index : i;
    const have = S.geometry.get(i);
    if (have && have !== "loading") { drawOverlay(i, have); return; }
    if (have === "loading") return;
    S.geometry.set(i, "loading");
    fetch("/api/geometry/" + encodeURIComponent(String(idx)), { cache: "no-store" })
      .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then((g) => { S.geometry.set(i, g); if (S.overlay && S.floor === i) drawOverlay(i, g); })
      .catch((e) => { S.geometry.delete(i); setNotice("HDOP map not available: " + e.message); });
  }
  $("overlay").addEventListener("change", () => { S.overlay = $("overlay").checked; loadOverlay(); });

  // ---- Feed ---------------------------------------------------------------------------------
  function noteTime(t) { if (isFinite(t) && !(t >= S.first)) S.first = t; }
  // Zones are per floor; an event without a floor is put on the first floor that has its zone.
  function eventKey(e) {
    let floor = e.floor === undefined || e.floor === null ? null : String(e.floor);
    if (floor === null) for (const f of S.floors) if (f._zones.some((z) => z.id === String(e.zone))) { floor = f._id; break; }
    return (floor === null ? "" : floor) + "\u0000" + String(e.zone);
  }
  function addEvent(e) {
    const t = num(e.t); if (!isFinite(t)) return;
    const ev = { t, tag: String(e.tag), zone: String(e.zone), floor: e.floor === undefined ? "" : String(e.floor),
      event: String(e.event), silent: e.silent === true, raw: e.t, key: eventKey(e),
      dwell: num(e.dwellSeconds) };
    noteTime(t);
    S.eventsReceived++;
    // Events come in time order; one that does not goes in at its place (after equal times).
    let i = S.events.length;
    if (i > 0 && S.eventT[i - 1] > t) { i = upper(S.eventT, 0, S.events.length, t); occ.valid = false; }
    S.events.splice(i, 0, ev); S.eventT.splice(i, 0, t);
    if (!ev.silent) {
      let j = S.listed.length;
      if (j > 0 && S.listedT[j - 1] > t) { j = upper(S.listedT, 0, S.listed.length, t); list.valid = false; }
      S.listed.splice(j, 0, ev); S.listedT.splice(j, 0, t);
    }
  }
  function addFix(f) {
    const t = num(f.t), x = num(f.x), y = num(f.y); if (!isFinite(t) || !isFinite(x) || !isFinite(y)) return;
    const id = String(f.tag);
    let tr = S.tracks.get(id);
    if (!tr) { tr = new Track(id, S.trackList.length); S.tracks.set(id, tr); S.trackList.push(tr); }
    const fl = f.floor === undefined || f.floor === null ? 0 : S.floorById.get(String(f.floor));  // no floor: the first
    const truth = Array.isArray(f.truth) ? f.truth : null;
    tr.push(t, x, y, num(f.r95), truth ? num(truth[0]) : NaN, truth ? num(truth[1]) : NaN, num(f.err), fl === undefined ? -1 : fl);
    S.fixes++;
    noteTime(t);
  }
  function addHeard(h) {
    const t = num(h.t); if (!isFinite(t)) return;
    const floor = h.floor === undefined || h.floor === null ? (S.floors[0] ? S.floors[0]._id : "") : String(h.floor);
    const key = floor + "\u0000" + addrKey(h.address);
    let a = S.heard.get(key);
    if (!a) { a = []; S.heard.set(key, a); }
    if (a.length === 0 || t > a[a.length - 1]) a.push(t);
    else if (t < a[a.length - 1]) { a.splice(upper(a, 0, a.length, t), 0, t); }
    if (a.length > MAX_HEARD) a.splice(0, a.length - MAX_HEARD / 2);
  }
  function bound() {
    if (S.fixes > MAX_FIXES) {
      // Drop the oldest quarter of the time span until back under the bound.
      while (S.fixes > MAX_FIXES * 0.9) {
        const cut = S.first + (S.clock - S.first) * 0.25;
        let first = Infinity, dropped = 0;
        for (const tr of S.trackList) { dropped += tr.dropBefore(cut); if (tr.count) first = Math.min(first, tr.t[tr.start]); }
        S.fixes -= dropped;
        S.first = isFinite(first) ? first : cut;
        for (const tr of S.trackList) if (tr.dom) tr.dom.last = -2;
        if (dropped === 0) break;  // one instant holds them all: nothing older to drop
      }
    }
    if (S.events.length > MAX_EVENTS) {
      const k = S.events.length - MAX_EVENTS / 2;
      for (let i = 0; i < k; i++) applyOcc(S.occBase, S.events[i]);
      S.events.splice(0, k); S.eventT.splice(0, k);
      const cutT = S.eventT[0];
      const j = upper(S.listedT, 0, S.listed.length, cutT - 1e-9);
      S.listed.splice(0, j); S.listedT.splice(0, j);
      occ.valid = false; list.valid = false;
    }
  }
  function onFrame(m) {
    S.frames++;
    if (Array.isArray(m.fixes)) for (const f of m.fixes) addFix(f);
    if (Array.isArray(m.events)) for (const e of m.events) addEvent(e);
    if (Array.isArray(m.heard)) for (const h of m.heard) addHeard(h);
    const c = num(m.clock);
    if (isFinite(c) && !(c <= S.clock)) S.clock = c;
    noteTime(c);
    bound();
  }
  function onMessage(ev) {
    let m;
    try { m = JSON.parse(ev.data); } catch (e) { return; }
    if (!m || typeof m !== "object") return;
    const id = parseInt(ev.lastEventId, 10);
    if (m.type === "frame") {
      if (id > 0 && id <= S.lastId) return;   // already have it (a resumed connection)
      onFrame(m);
    } else if (m.type === "status") {
      S.status = m;
      const c = num(m.clock); if (isFinite(c) && !(c <= S.clock)) S.clock = c;
      renderCounters();
    } else if (m.type === "end") {
      S.ended = true;
      const c = num(m.clock); if (isFinite(c) && !(c <= S.clock)) S.clock = c;
      renderCounters();
    } else if (m.type === "gap") {
      S.gap = m;
      setNotice("This view fell behind: " + (num(m.dropped) || 0) + " messages skipped.");
    }
    if (id > S.lastId) S.lastId = id;
    invalidate();
    if (!gotFirst) { gotFirst = true; maybeReady(); }
  }
  function setNotice(text) { const n = $("notice"); n.textContent = text; n.hidden = !text; }

  // ---- View time ----------------------------------------------------------------------------
  function nowView(wall) {
    if (S.live) return S.clock;
    if (S.playing) {
      const dt = Math.max(0, (wall - S.lastWall) / 1000);
      let v = S.viewTime + dt * S.speed;
      if (v > S.clock) v = S.clock;
      return v;
    }
    return S.viewTime;
  }
  function setMode(live, playing) {
    S.viewTime = nowView(performance.now());
    S.live = live; S.playing = playing; S.lastWall = performance.now();
    $("live").classList.toggle("on", live);
    $("play").textContent = playing ? "Pause" : "Play";
    invalidate();
  }
  $("play").addEventListener("click", () => {
    if (S.live || S.playing) setMode(false, false);
    else { if (S.viewTime >= S.clock) S.viewTime = S.first; setMode(false, true); }
  });
  $("live").addEventListener("click", () => setMode(true, true));
  $("speed").addEventListener("change", () => { S.speed = Number($("speed").value) || 1; setMode(false, true); });
  $("slider").addEventListener("input", () => { const v = Number($("slider").value); setMode(false, false); S.viewTime = v; invalidate(); });

  // ---- Occupancy and the event list at the view time ----------------------------------------
  function applyOcc(map, e) {
    if (e.event !== "enter" && e.event !== "exit") return;
    let s = map.get(e.key);
    if (e.event === "enter") { if (!s) { s = new Set(); map.set(e.key, s); } s.add(e.tag); }
    else if (s) s.delete(e.tag);
  }
  const occ = { valid: false, upto: 0, map: new Map() };
  function occupancyAt(t) {
    const n = upper(S.eventT, 0, S.events.length, t);
    if (!occ.valid || n < occ.upto) {
      occ.map = new Map(); for (const [k, s] of S.occBase) occ.map.set(k, new Set(s));
      occ.upto = 0; occ.valid = true;
    }
    for (let i = occ.upto; i < n; i++) applyOcc(occ.map, S.events[i]);
    occ.upto = n;
    return occ.map;
  }
  const list = { valid: false, upto: -1 };
  function eventRow(e) {
    const li = hel("li", e.event);
    li.setAttribute("data-t", String(e.raw)); li.setAttribute("data-tag", e.tag);
    li.setAttribute("data-zone", e.zone); li.setAttribute("data-event", e.event);
    if (e.floor) li.setAttribute("data-floor", e.floor);
    hel("span", "t", fmtTime(e.t), li); hel("span", "tag", e.tag, li); hel("span", "zone", e.zone, li);
    hel("span", "ev", e.event === "dwell" && isFinite(e.dwell) ? "dwell " + e.dwell + " s" : e.event, li);
    li.title = e.tag + " · " + e.zone + " · " + e.event + " at " + String(e.raw);
    return li;
  }
  function renderList(t) {
    const n = upper(S.listedT, 0, S.listed.length, t);
    const ul = $("events");
    if (list.valid && n === list.upto) return;
    if (list.valid && n > list.upto && n - list.upto < LIST_MAX) {
      for (let i = list.upto; i < n; i++) ul.insertBefore(eventRow(S.listed[i]), ul.firstChild);
      while (ul.childElementCount > LIST_MAX) ul.removeChild(ul.lastChild);
    } else {
      ul.textContent = "";
      const frag = document.createDocumentFragment();
      for (let i = n - 1; i >= Math.max(0, n - LIST_MAX); i--) frag.appendChild(eventRow(S.listed[i]));
      ul.appendChild(frag);
    }
    list.valid = true; list.upto = n;
  }

  // ---- Rendering ----------------------------------------------------------------------------
  function tagDom(tr) {
    if (tr.dom) return tr.dom;
    const colour = PALETTE[tr.colour];
    const g = el("g", { class: "tag", "data-tag": tr.id, display: "none" }, layers.tags);
    const r95 = el("circle", { class: "r95", r: "0", fill: colour, stroke: colour }, g);
    const dot = el("circle", { class: "dot", fill: colour }, g);
    const label = el("text", { class: "label" }, g); label.textContent = tr.id;
    const title = el("title", null, g); title.textContent = tr.id;
    tr.dom = { g, r95, dot, label, errLine: null, truth: null, errText: null,
      shown: false, last: -2, x: NaN, y: NaN, r: NaN, truthShown: false, tx: NaN, ty: NaN, err: "" };
    return tr.dom;
  }
  function truthDom(d) {
    if (d.truth) return;
    d.errLine = el("line", { class: "errline" }, d.g);
    d.g.insertBefore(d.errLine, d.r95);
    d.truth = el("circle", { class: "truth" }, d.g);
    d.errText = el("text", { class: "err" }, d.g);
  }
  function showTruth(d, on) {
    if (d.truthShown === on) return;
    d.truthShown = on;
    for (const e of [d.truth, d.errLine, d.errText]) { if (on) e.removeAttribute("display"); else e.setAttribute("display", "none"); }
  }
  // Above this many tags on show, truth tracks and error texts go, trails are fainter and, while the
  // floor is drawn too small for them (less than LABEL_PX2 square pixels of floor per tag), the labels
  // are hidden (display: none; they stay in the DOM with their text).
  const MANY_TAGS = 250;
  const LABEL_PX2 = 3000;
  let many = false, crowded = false;
  const onShow = [];  // the tracks on show at the last render: [track, index of the first trail fix, index of the last fix]
  function renderTags(t) {
    const fl = S.floor;
    onShow.length = 0;
    for (const tr of S.trackList) {
      const d = tagDom(tr);
      const i = tr.at(t);
      const visible = i >= tr.start && tr.t[i] >= t - STALE_S && tr.fl[i] === fl;
      if (!visible) {
        if (d.shown) { d.g.setAttribute("display", "none"); d.shown = false; }
        continue;
      }
      if (!d.shown) { d.g.removeAttribute("display"); d.shown = true; }
      onShow.push(tr, upper(tr.t, tr.start, i + 1, t - TRAIL_S), i);
      if (i === d.last) continue;
      d.last = i;
      // Only what changed: most fixes move the tag, few change its r95 to the millimetre.
      const x = tr.x[i], y = tr.y[i];
      if (x !== d.x || y !== d.y) { d.g.setAttribute("transform", "translate(" + x.toFixed(3) + " " + (-y).toFixed(3) + ")"); d.x = x; d.y = y; }
      const r = tr.r[i];
      const rs = isFinite(r) && r > 0 ? Math.round(r * 1000) / 1000 : 0;
      if (rs !== d.r) { d.r95.setAttribute("r", String(rs)); d.r = rs; }
      const tx = tr.tx[i], ty = tr.ty[i];
      if (isFinite(tx) && isFinite(ty)) {
        truthDom(d);
        showTruth(d, true);
        if (tx !== d.tx || ty !== d.ty || x !== d.tx0 || y !== d.ty0) {
          const dx = (tx - x).toFixed(3), dy = (-(ty - y)).toFixed(3);
          d.truth.setAttribute("cx", dx); d.truth.setAttribute("cy", dy);
          d.errLine.setAttribute("x2", dx); d.errLine.setAttribute("y2", dy);
          d.tx = tx; d.ty = ty; d.tx0 = x; d.ty0 = y;
        }
        const err = (isFinite(tr.err[i]) ? tr.err[i] : Math.hypot(tx - x, ty - y)).toFixed(2) + " m";
        if (err !== d.err) { d.errText.textContent = err; d.err = err; }
      } else if (d.truth) {
        showTruth(d, false);
      }
    }
    const shown = onShow.length / 3;
    if ((shown > MANY_TAGS) !== many) { many = shown > MANY_TAGS; svg.classList.toggle("many", many); }
    updateCrowd();
  }
  function updateCrowd() {  // at a render and at a zoom
    const f = S.floors[S.floor], shown = onShow.length / 3;
    const floorPx2 = f ? Math.max(1, num(f.widthM) || 1) * Math.max(1, num(f.heightM) || 1) * view.scale * view.scale : Infinity;
    const crowd = many && floorPx2 / shown < LABEL_PX2;
    if (crowd !== crowded) { crowded = crowd; svg.classList.toggle("crowded", crowded); }
  }

  // ---- The canvas: floor fill, trails, truth tracks -----------------------------------------
  // Trails fade by age in BANDS steps: one path per colour and band for all tags (a few dozen
  // strokes however many tags), in screen pixels (the canvas does the number formatting natively).
  const BANDS = 5;
  const trailPaths = [];
  function drawCanvas(t) {
    const st = stageSize(), dpr = window.devicePixelRatio || 1;
    const cw = Math.max(1, Math.round(st.w * dpr)), ch = Math.max(1, Math.round(st.h * dpr));
    if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; }
    // The SVG maps its viewBox (bx, by, bw, bh) to its box as preserveAspectRatio="xMidYMid meet".
    const [bx, by, bw, bh] = view.box;
    const s = Math.min(st.w / bw, st.h / bh);
    const ax = st.w > 0 ? cw / st.w : dpr, ay = st.h > 0 ? ch / st.h : dpr;  // canvas pixels per CSS pixel
    const kx = s * ax, ky = s * ay;
    const x0 = ((st.w - bw * s) / 2 - bx * s) * ax, y0 = ((st.h - bh * s) / 2 - by * s) * ay;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.globalAlpha = 1;
    ctx.fillStyle = "#fbfbfc";
    ctx.fillRect(0, 0, cw, ch);
    const f = S.floors[S.floor];
    if (f) {
      const fx = num(f.originX) || 0, fy = num(f.originY) || 0, fw = num(f.widthM) || 0, fh = num(f.heightM) || 0;
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(fx * kx + x0, y0 - (fy + fh) * ky, fw * kx, fh * ky);
    }
    if (!isFinite(t) || onShow.length === 0) return;
    const fl = S.floor, bandS = TRAIL_S / BANDS;
    for (let j = 0; j < PALETTE.length * BANDS; j++) trailPaths[j] = null;
    let truth = null;
    for (let n = 0; n < onShow.length; n += 3) {
      const tr = onShow[n], from = onShow[n + 1], i = onShow[n + 2];
      const X = tr.x, Y = tr.y, T = tr.t, F = tr.fl, base = tr.colour * BANDS;
      let band = -1, px = 0, py = 0, have = false;
      for (let q = from; q <= i; q++) {
        if (F[q] !== fl) { have = false; band = -1; continue; }
        const sx = X[q] * kx + x0, sy = y0 - Y[q] * ky;
        if (have) {
          let b = ((t - T[q]) / bandS) | 0;
          if (b >= BANDS) b = BANDS - 1; else if (b < 0) b = 0;
          let p = trailPaths[base + b];
          if (p === null) p = trailPaths[base + b] = new Path2D();
          if (b !== band) { p.moveTo(px, py); band = b; }
          p.lineTo(sx, sy);
        }
        px = sx; py = sy; have = true;
      }
      if (!many && isFinite(tr.tx[i])) {
        if (truth === null) truth = new Path2D();
        let on = false;
        for (let q = from; q <= i; q++) {
          if (F[q] !== fl || !isFinite(tr.tx[q])) { on = false; continue; }
          const sx = tr.tx[q] * kx + x0, sy = y0 - tr.ty[q] * ky;
          if (on) truth.lineTo(sx, sy); else { truth.moveTo(sx, sy); on = true; }
        }
      }
    }
    // Many tags: one-pixel lines (a software rasteriser strokes them some ten times as fast as
    // two-pixel lines with round joins: 6 against 128 ms for 1,000 trails of 40 fixes).
    ctx.lineJoin = many ? "miter" : "round"; ctx.lineCap = many ? "butt" : "round";
    ctx.lineWidth = many ? Math.max(1, Math.round(dpr)) : 2 * dpr;
    const fade = many ? 0.6 : 1;
    for (let b = 0; b < BANDS; b++) {
      ctx.globalAlpha = 0.85 * fade * (1 - (b + 0.5) / BANDS);
      for (let c = 0; c < PALETTE.length; c++) {
        const p = trailPaths[c * BANDS + b];
        if (p !== null) { ctx.strokeStyle = PALETTE[c]; ctx.stroke(p); }
      }
    }
    if (truth !== null) {
      ctx.globalAlpha = 0.35; ctx.strokeStyle = "#111827"; ctx.lineWidth = dpr;
      ctx.setLineDash([3 * dpr, 3 * dpr]); ctx.stroke(truth); ctx.setLineDash([]);
    }
    ctx.globalAlpha = 1;
  }
  function renderZones(t) {
    const m = occupancyAt(t);
    for (const f of S.floors) for (const z of f._zones) {
      const s = m.get(z.key);
      const n = s ? s.size : 0;
      if (n === z.n) continue;
      z.n = n;
      z.g.setAttribute("data-occupants", String(n));
      z.g.classList.toggle("occupied", n > 0);
      z.label.textContent = n > 0 ? z.name + " · " + n : z.name;
    }
  }
  function renderLocators(t) {
    const f = S.floors[S.floor]; if (!f) return;
    for (const l of f._locators) {
      const a = S.heard.get(l.key);
      const k = a ? upper(a, 0, a.length, t) - 1 : -1;
      let heard = false, text = "never heard";
      if (k >= 0) { const age = t - a[k]; heard = age <= HEARD_S; text = age < 0.05 ? "now" : (age < 100 ? age.toFixed(1) : age.toFixed(0)) + " s ago"; }
      if (l.heard !== heard) { l.g.setAttribute("data-heard", heard ? "true" : "false"); l.heard = heard; }
      if (l.ageText !== text) { l.age.textContent = text; l.ageText = text; }
    }
  }
  function row(dl, name, value) { hel("dt", null, name, dl); hel("dd", null, value, dl); }
  function renderCounters() {
    const dl = $("counters"), s = S.status;
    const frag = document.createDocumentFragment();
    const d = { appendChild: (n) => frag.appendChild(n) };
    if (s) {
      row(d, "Rows", String(num(s.rows) || 0));
      row(d, "Fixes", String(num(s.fixes) || 0));
      row(d, "Events", String(num(s.events) || 0));
      row(d, "Tags", String(num(s.tags) || 0));
      const sk = s.skipped && typeof s.skipped === "object" ? s.skipped : {};
      const keys = Object.keys(sk);
      if (keys.length === 0) row(d, "Skipped", "0");
      for (const k of keys) row(d, "Skipped: " + k, String(sk[k]));
      if (s.malformed !== undefined) row(d, "Malformed", String(s.malformed));
      row(d, "Fixes/s", isFinite(num(s.fixesPerSecond)) ? num(s.fixesPerSecond).toFixed(1) : "–");
      const l = s.latencyMs || {};
      row(d, "Latency p50/p99", (isFinite(num(l.p50)) ? num(l.p50).toFixed(2) : "–") + " / " + (isFinite(num(l.p99)) ? num(l.p99).toFixed(2) : "–") + " ms");
      row(d, "Viewers", String(num(s.viewers) || 0));
      row(d, "Dropped frames", String(num(s.droppedFrames) || 0));
      if (s.replay && typeof s.replay === "object") row(d, "Replay", (s.replay.done ? "done" : Math.round((num(s.replay.progress) || 0) * 100) + " %"));
    } else {
      row(d, "Status", "waiting…");
    }
    row(d, "Frames received", String(S.frames));
    if (S.ended) row(d, "Trace", "ended");
    dl.textContent = "";
    dl.appendChild(frag);
  }
  function renderTime(t) {
    const sl = $("slider");
    const lo = isFinite(S.first) ? S.first : 0, hi = isFinite(S.clock) ? S.clock : lo;
    sl.min = String(lo); sl.max = String(Math.max(lo, hi));
    if (document.activeElement !== sl || S.live || S.playing) sl.value = String(t);
    $("viewtime").textContent = (S.live ? "live · " : (S.playing ? "playing " + S.speed + "× · " : "paused · ")) + fmtTime(t);
    $("clock").textContent = "newest " + fmtTime(S.clock);
  }
  // `sync`: a render asked for by seek or showFloor (everything at once). Otherwise, while many tags
  // are on show, the event list follows at most every LIST_GAP_MS (at 1,000 tags hundreds of events a
  // second go through it: its new rows cost more layout and paint than the map).
  const LIST_GAP_MS = 500;
  let lastList = -Infinity;
  function render(wall, sync) {
    if (!S.site) return;
    let t = nowView(wall);
    if (!S.live) { S.viewTime = t; S.lastWall = wall; }
    if (!isFinite(t)) t = isFinite(S.first) ? S.first : 0;
    renderTags(t); drawCanvas(t); renderZones(t); renderLocators(t);
    if (sync || !many || wall - lastList >= LIST_GAP_MS - 8) { renderList(t); lastList = wall; S.listDirty = false; }
    else S.listDirty = true;
    renderTime(t);
    S.shownTime = t;
    S.viewDirty = false;
  }

  // The render rate: a render at every animation frame while renders are cheap; with many tags on
  // show, or for SLOW_HOLD_MS after a render took more than SLOW_MS of script or the frame after it
  // came late (its layout and paint were slow), at most one render every SLOW_GAP_MS (fixes come at
  // 4 Hz a tag: 10 renders a second still show every one). Messages only mark the view dirty: never more than one render waits.
  // A pan, zoom or resize redraws the canvas at the next frame whatever the rate (the SVG's viewBox
  // changes at once), at the view time already rendered.
  const SLOW_MS = 8, SLOW_GAP_MS = 100, SLOW_HOLD_MS = 2000;
  let scheduled = false, slowUntil = 0, lastRender = -Infinity, justRendered = false;
  function schedule() { if (!scheduled) { scheduled = true; requestAnimationFrame(tick); } }
  function invalidate() { S.dirty = true; schedule(); }
  function viewChanged() { S.viewDirty = true; schedule(); }
  function tick(ts) {
    scheduled = false;
    // longFrames: gaps over 50 ms between consecutive animation frames while the view is busy.
    const late = stats.lastTick && ts - stats.lastTick > 50;
    if (late && ts <= stats.activeUntil + 50) stats.longFrames++;
    if (late && justRendered) slowUntil = ts + SLOW_HOLD_MS;
    justRendered = false;
    stats.lastTick = ts;
    const moving = !S.live && S.playing && S.viewTime < S.clock;
    const due = (ts >= slowUntil && !many) || ts - lastRender >= SLOW_GAP_MS - 8;
    if ((S.dirty || moving) && due) {
      S.dirty = false;
      const a = performance.now();
      render(a);
      const ms = performance.now() - a;
      stats.renderMs = ms;
      if (ms > SLOW_MS) slowUntil = ts + SLOW_HOLD_MS;
      lastRender = ts; justRendered = true;
      stats.framesRendered++; stats.renderTimes.push(ts);
      stats.activeUntil = ts + 250;
    } else {
      if (S.viewDirty) { S.viewDirty = false; updateCrowd(); drawCanvas(S.shownTime); stats.activeUntil = ts + 250; }
      if (S.listDirty && ts - lastList >= LIST_GAP_MS - 8) { renderList(S.shownTime); lastList = ts; S.listDirty = false; }
    }
    while (stats.renderTimes.length && stats.renderTimes[0] < ts - 1000) stats.renderTimes.shift();
    if (S.dirty || moving || S.viewDirty || S.listDirty || ts < stats.activeUntil) { scheduled = true; requestAnimationFrame(tick); }
    else stats.lastTick = 0;
  }

  // ---- Start --------------------------------------------------------------------------------
  let gotFirst = false, siteLoaded = false, resolveReady;
  const ready = new Promise((r) => { resolveReady = r; });
  function maybeReady() { if (gotFirst && siteLoaded) resolveReady(true); }
  function connect() {
    const es = new EventSource("/feed");
    const badge = $("connection");
    es.onopen = () => { badge.textContent = "connected"; badge.className = "badge ok"; };
    es.onerror = () => { badge.textContent = es.readyState === 2 ? "closed" : "reconnecting…"; badge.className = "badge bad"; };
    es.onmessage = onMessage;
  }
  const params = new URLSearchParams(location.search);
  fetch("/api/site", { cache: "no-store" })
    .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then((site) => {
      buildSite(site);
      const pf = params.get("floor");
      if (pf !== null) showFloor(pf);
      const pt = params.get("t");
      if (pt !== null && isFinite(Number(pt))) { S.live = false; S.playing = false; S.viewTime = Number(pt); $("live").classList.remove("on"); $("play").textContent = "Play"; }
      siteLoaded = true;
      renderCounters();
      applyView(); fit();
      connect();
      maybeReady();
      invalidate();
    })
    .catch((e) => { setNotice("Could not load the site: " + e.message); });

  window.locusView = {
    ready,
    ended: () => S.ended,
    pause: () => { setMode(false, false); },
    live: () => { setMode(true, true); },
    seek: (t) => {
      setMode(false, false);
      S.viewTime = Number(t);
      S.dirty = false;
      render(performance.now(), true);
      stats.framesRendered++;
      return S.viewTime;
    },
    state: () => ({
      viewTime: S.live ? S.clock : S.viewTime, clock: S.clock, frames: S.frames, fixes: S.fixes,
      events: S.eventsReceived, ended: S.ended, floor: S.floors[S.floor] ? S.floors[S.floor]._id : null,
    }),
    stats: () => ({ framesRendered: stats.framesRendered, longFrames: stats.longFrames, fps: stats.renderTimes.length,
      renderMs: stats.renderMs, tags: S.trackList.length,
      lagSeconds: isFinite(S.clock) && isFinite(S.shownTime) ? Math.max(0, S.clock - S.shownTime) : null }),
    showFloor: (id) => { const ok = showFloor(id); if (ok) { S.dirty = false; render(performance.now(), true); } return ok; },
    overlay: (on) => { $("overlay").checked = !!on; S.overlay = !!on; loadOverlay(); },
  };
})();
