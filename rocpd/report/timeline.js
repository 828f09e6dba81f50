// rocpd report timeline: a canvas renderer for many slices (100k+ kernels stay interactive).
// Data: <script id="tl-data" type="application/json"> written by rocpd/report/timeline.py
// (typed arrays in base64, times in ns from the first recorded activity).
// Draws only the visible part of each lane (binary search by start) and paints one column per
// pixel for slices narrower than a pixel (opacity = the share of the pixel they cover), so a
// full view of 100k kernels costs about as much as a zoomed one. Wheel/+/-/W/S zoom, drag/A/D pan, double-click resets.
// Several timelines may share a page: each script tag's data-tl names its elements' id prefix
// (default "tl": tl-data, tl-canvas ...). Optional data: "mark" (uint8 per slice, 1 = outlined
// in red: the report's diff marks the work that changed) and "axis" (the time axis' label).
(function () {
  "use strict";
  const ME = document.currentScript;
  const P = (ME && ME.dataset && ME.dataset.tl) || "tl";
  const $ = (id) => document.getElementById(P + "-" + id);
  const el = $("data");
  if (!el) return;
  const T0 = performance.now();
  const D = JSON.parse(el.textContent);
  const PALETTE = ["#3b75af", "#8e44ad", "#ef8636", "#5a9e56", "#c0392b", "#d35400", "#9aa5b1"];
  const RANGE_COLORS = ["#5a9e56", "#76b7b2", "#59a14f", "#8cd17d", "#499894", "#86bcb6"];
  const ROW = 14, HEAD = 18, AXIS = 24, LW = 250, COUNTER_H = 34;

  function dec(b64, T) {
    const s = atob(b64), u = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return new T(u.buffer);
  }
  const track = dec(D.track, Int32Array), start = dec(D.start, Float64Array),
    dur = dec(D.dur, Float64Array), nameId = dec(D.name, Int32Array),
    color = dec(D.color, Uint8Array), depth = dec(D.depth, Uint8Array),
    hint = dec(D.hint, Int32Array);
  const mark = D.mark ? dec(D.mark, Uint8Array) : null;
  const MARK = "#e00000";

  // Lanes: one per (track, depth), slice indices sorted by start, with the longest duration.
  const lanes = new Map();
  for (let i = 0; i < D.n; i++) {
    const key = track[i] * 256 + depth[i];
    let l = lanes.get(key);
    if (!l) { l = { idx: [], maxDur: 0 }; lanes.set(key, l); }
    l.idx.push(i);
    if (dur[i] > l.maxDur) l.maxDur = dur[i];
  }
  for (const l of lanes.values()) {
    l.idx.sort((a, b) => start[a] - start[b]);
    l.idx = Int32Array.from(l.idx);
    l.starts = Float64Array.from(l.idx, (i) => start[i]);
  }

  // Vertical layout: a header per process group, then its tracks.
  const rows = [];  // {y, h, kind, track, depth, label, group}
  let y = AXIS;
  D.groups.forEach((g, gi) => {
    rows.push({ y: y, h: HEAD, kind: "head", label: g.label, group: gi });
    y += HEAD;
    D.tracks.forEach((t, ti) => {
      if (t.group !== gi) return;
      if (t.kind === "counter") {
        rows.push({ y: y, h: COUNTER_H, kind: "counter", track: ti, label: t.label, group: gi });
        y += COUNTER_H;
        return;
      }
      for (let d = 0; d < t.rows; d++) {
        rows.push({ y: y, h: ROW, kind: "lane", track: ti, depth: d, group: gi,
                    label: d === 0 ? t.label : "" });
        y += ROW;
      }
      y += 3;
    });
  });
  const totalH = y + 6;
  const counters = new Map();
  for (const c of D.counters) {
    let lo = Infinity, hi = -Infinity;
    for (const v of c.v) { if (v < lo) lo = v; if (v > hi) hi = v; }
    counters.set(c.index, { t: c.t, v: c.v, lo: lo, hi: hi });
  }

  const canvas = $("canvas");
  const wrap = canvas.parentElement;
  const tip = $("tip");
  const info = $("info");
  const ctx = canvas.getContext("2d");
  const END = Math.max(D.end, 1);
  let v0 = 0, v1 = END, W = 800, dpr = 1;

  function resize() {
    dpr = window.devicePixelRatio || 1;
    W = Math.max(wrap.clientWidth, 400);
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(totalH * dpr);
    canvas.style.width = W + "px";
    canvas.style.height = totalH + "px";
    draw();
  }

  function fmt(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(2) + " µs";
    return ns.toFixed(0) + " ns";
  }
  function niceStep(span, px) {
    const raw = span / Math.max(px / 110, 1), p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function lowerBound(arr, x) {
    let lo = 0, hi = arr.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < x) lo = m + 1; else hi = m; }
    return lo;
  }
  function sliceColor(i) {
    const c = color[i];
    return c === 3 ? RANGE_COLORS[nameId[i] % RANGE_COLORS.length] : PALETTE[c];
  }

  let drawn = 0;
  function draw() {
    const t = performance.now();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, totalH);
    const plotW = W - LW, scale = plotW / (v1 - v0);
    // steps of the selected group, shaded behind the lanes
    ctx.fillStyle = "rgba(90,158,86,0.08)";
    for (const s of D.steps) {
      const x0 = LW + (s.start - v0) * scale, x1 = LW + (s.end - v0) * scale;
      if (x1 < LW || x0 > W) continue;
      if (s.step % 2 === 0) ctx.fillRect(Math.max(x0, LW), AXIS, Math.min(x1, W) - Math.max(x0, LW), totalH - AXIS);
    }
    // axis
    ctx.fillStyle = "#333";
    ctx.font = "11px sans-serif";
    const step = niceStep(v1 - v0, plotW);
    ctx.strokeStyle = "#e4e4e4";
    ctx.beginPath();
    for (let tk = Math.ceil(v0 / step) * step; tk <= v1; tk += step) {
      const x = LW + (tk - v0) * scale;
      ctx.moveTo(x + 0.5, AXIS - 4);
      ctx.lineTo(x + 0.5, totalH);
      ctx.fillText(fmt(tk), x + 3, 12);
    }
    ctx.stroke();
    drawn = 0;
    for (const r of rows) {
      if (r.kind === "head") {
        ctx.fillStyle = "#eef2f7";
        ctx.fillRect(0, r.y, W, r.h);
        ctx.fillStyle = "#222";
        ctx.font = "bold 12px sans-serif";
        ctx.fillText(r.label, 4, r.y + 13);
        continue;
      }
      ctx.font = "11px sans-serif";
      if (r.label) { ctx.fillStyle = "#444"; ctx.fillText(clip(r.label, LW - 12), 8, r.y + 11); }
      if (r.kind === "counter") { drawCounter(r, scale); continue; }
      const lane = lanes.get(r.track * 256 + r.depth);
      if (!lane) continue;
      const from = lowerBound(lane.starts, v0 - lane.maxDur);
      // Slices narrower than a pixel add up per pixel column; the column is painted once, as
      // opaque as the share of it they cover (a 10 %-busy stretch looks 10 %-busy, not solid).
      let accPx = -1, accCov = 0, accColor = "", accMark = false;
      const flush = () => {
        if (accPx < 0) return;
        ctx.globalAlpha = Math.min(1, 0.2 + 0.8 * accCov);
        ctx.fillStyle = accColor;
        ctx.fillRect(accPx, r.y + 1, 1, ROW - 2);
        ctx.globalAlpha = 1;
        if (accMark) { ctx.fillStyle = MARK; ctx.fillRect(accPx, r.y, 1, 3); }
        drawn++;
        accPx = -1; accCov = 0; accMark = false;
      };
      for (let k = from; k < lane.idx.length; k++) {
        const i = lane.idx[k], s = start[i];
        if (s > v1) break;
        const e = s + dur[i];
        if (e < v0) continue;
        let x0 = LW + (s - v0) * scale, x1 = LW + (e - v0) * scale;
        if (x0 < LW) x0 = LW;
        if (x1 > W) x1 = W;
        const c = sliceColor(i);
        if (x1 - x0 < 1) {
          const px = Math.floor(x0);
          if (px !== accPx) { flush(); accPx = px; accColor = c; }
          accCov += x1 - x0;
          if (mark && mark[i]) accMark = true;
          continue;
        }
        flush();
        ctx.fillStyle = c;
        ctx.fillRect(x0, r.y + 1, x1 - x0, ROW - 2);
        if (mark && mark[i]) {
          ctx.strokeStyle = MARK;
          ctx.lineWidth = 2;
          ctx.strokeRect(x0 + 1, r.y + 2, Math.max(x1 - x0 - 2, 1), ROW - 4);
        }
        if (x1 - x0 > 40) {
          ctx.fillStyle = "#fff";
          ctx.fillText(clip(D.names[nameId[i]], x1 - x0 - 6), x0 + 3, r.y + 11);
        }
        drawn++;
      }
      flush();
    }
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, LW - 2, AXIS);
    ctx.fillStyle = "#666";
    ctx.fillText(D.axis || "time from the first activity", 4, 12);
    canvas.dataset.drawn = String(drawn);
    canvas.dataset.drawMs = (performance.now() - t).toFixed(1);
    if (info) info.textContent = "view " + fmt(v0) + " \u2013 " + fmt(v1) + " (" + fmt(v1 - v0) + ")";
  }
  function clip(text, px) {
    const n = Math.floor(px / 6.2);
    return text.length <= n ? text : text.slice(0, Math.max(n - 1, 0)) + "\u2026";
  }
  function drawCounter(r, scale) {
    const c = counters.get(r.track);
    if (!c || !c.t.length) return;
    const span = c.hi - c.lo || 1;
    ctx.strokeStyle = "#c0392b";
    ctx.beginPath();
    let first = true;
    for (let k = 0; k < c.t.length; k++) {
      const x = LW + (c.t[k] - v0) * scale;
      if (x < LW - 50 || x > W + 50) continue;
      const yy = r.y + r.h - 3 - ((c.v[k] - c.lo) / span) * (r.h - 8);
      if (first) { ctx.moveTo(x, yy); first = false; } else ctx.lineTo(x, yy);
    }
    ctx.stroke();
    ctx.fillStyle = "#888";
    ctx.fillText(c.hi.toPrecision(4), W - 60, r.y + 10);
    drawn++;
  }

  // ---- interaction --------------------------------------------------------------------
  function zoomAt(px, factor) {
    const t = v0 + ((px - LW) / (W - LW)) * (v1 - v0);
    let n0 = t - (t - v0) * factor, n1 = t + (v1 - t) * factor;
    if (n1 - n0 < 1000) return;  // 1 µs across the view is enough
    v0 = n0; v1 = n1;
    draw();
  }
  function pan(dpx) {
    const dt = (dpx / (W - LW)) * (v1 - v0);
    v0 -= dt; v1 -= dt;
    draw();
  }
  function zoomTo(a, b) {
    const pad = (b - a) * 0.02 + 1;
    v0 = a - pad; v1 = b + pad;
    draw();
  }
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) pan(-(ev.deltaX || ev.deltaY));
    else zoomAt(ev.clientX - r.left, ev.deltaY > 0 ? 1.25 : 0.8);
  }, { passive: false });
  let drag = null;
  canvas.addEventListener("mousedown", (ev) => { drag = ev.clientX; });
  window.addEventListener("mouseup", () => { drag = null; });
  canvas.addEventListener("mousemove", (ev) => {
    if (drag !== null) { pan(ev.clientX - drag); drag = ev.clientX; tip.style.display = "none"; return; }
    hover(ev);
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  canvas.addEventListener("dblclick", () => { v0 = 0; v1 = END; draw(); });
  canvas.tabIndex = 0;
  canvas.addEventListener("keydown", (ev) => {
    const k = ev.key.toLowerCase(), mid = LW + (W - LW) / 2;
    if (k === "w" || k === "+" || k === "=") zoomAt(mid, 0.8);
    else if (k === "s" || k === "-") zoomAt(mid, 1.25);
    else if (k === "a") pan((W - LW) / 5);
    else if (k === "d") pan(-(W - LW) / 5);
    else return;
    ev.preventDefault();
  });
  function hover(ev) {
    const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, yy = ev.clientY - r.top;
    const row = rows.find((q) => yy >= q.y && yy < q.y + q.h);
    if (!row || x < LW || row.kind === "head") { tip.style.display = "none"; return; }
    const t = v0 + ((x - LW) / (W - LW)) * (v1 - v0), slack = 2 * (v1 - v0) / (W - LW);
    let text = "";
    if (row.kind === "counter") {
      const c = counters.get(row.track);
      if (c && c.t.length) {
        let k = Math.min(lowerBound(c.t, t), c.t.length - 1);
        if (k > 0 && Math.abs(c.t[k - 1] - t) < Math.abs(c.t[k] - t)) k--;
        text = row.label + "\n" + c.v[k].toPrecision(5) + " at " + fmt(c.t[k]);
      }
    } else {
      const lane = lanes.get(row.track * 256 + row.depth);
      if (lane) {
        let k = lowerBound(lane.starts, t + slack) - 1;
        for (; k >= 0 && k >= lowerBound(lane.starts, t - lane.maxDur - slack); k--) {
          const i = lane.idx[k];
          if (start[i] <= t + slack && start[i] + dur[i] >= t - slack) {
            text = D.names[nameId[i]] + "\n" + fmt(dur[i]) + " at " + fmt(start[i]) +
              (hint[i] >= 0 && D.names[hint[i]] ? "\n" + D.names[hint[i]] : "") +
              (mark && mark[i] ? "\nchanged between the runs" : "");
            break;
          }
        }
      }
    }
    if (!text) { tip.style.display = "none"; return; }
    tip.textContent = text;
    tip.style.display = "block";
    tip.style.left = Math.min(x + 12, W - 320) + "px";
    tip.style.top = (yy + 14) + "px";
  }

  // ---- steps and controls ---------------------------------------------------------------
  const sel = $("step");
  if (sel) {
    D.steps.forEach((s, k) => {
      const o = document.createElement("option");
      o.value = String(k);
      o.textContent = s.label + " (" + fmt(s.end - s.start) + ")";
      sel.appendChild(o);
    });
    sel.addEventListener("change", () => {
      if (sel.value === "all") { v0 = 0; v1 = END; draw(); return; }
      const s = D.steps[Number(sel.value)];
      zoomTo(Math.min(s.start, s.gpu_start ?? s.start), Math.max(s.end, s.gpu_end ?? s.end));
    });
  }
  const btn = (id, f) => { const b = $(id); if (b) b.addEventListener("click", f); };
  btn("reset", () => { v0 = 0; v1 = END; if (sel) sel.value = "all"; draw(); });
  btn("in", () => zoomAt(LW + (W - LW) / 2, 0.5));
  btn("out", () => zoomAt(LW + (W - LW) / 2, 2));
  window.addEventListener("resize", resize);
  resize();
  if (P !== "tl") { canvas.dataset.timelineMs = (performance.now() - T0).toFixed(1); return; }
  window.rocpdTimeline = {
    zoomTo: zoomTo,
    step: (group, step) => {
      const k = D.steps.findIndex((s) => s.group === group && s.step === step);
      if (k >= 0) { if (sel) sel.value = String(k); sel.dispatchEvent(new Event("change")); canvas.scrollIntoView({ block: "nearest" }); }
    },
  };
  document.body.dataset.timelineMs = (performance.now() - T0).toFixed(1);
  document.body.dataset.timelineDrawn = String(drawn);
  // Where the lanes are on the page (CSS px): lets a headless check crop a screenshot to them.
  const rect = canvas.getBoundingClientRect();
  document.body.dataset.timelineRect = [rect.left + window.scrollX + LW, rect.top + window.scrollY + AXIS,
    rect.width - LW, rect.height - AXIS].map(Math.round).join(",");
})();
