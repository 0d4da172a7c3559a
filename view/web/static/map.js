// The drawn map: the server's SVG picture of the tree (/api/map.svg, view.SVG), shown inline so that its boxes
// answer clicks. Zoom and pan move the viewBox only; opening a box asks the server for a new picture, which
// draws node cells only where they are asked for, so a tree of 10,000 nodes stays light. A wide tree comes in
// shelves: a box cut between two of them is a g.domain on the first and a g.continued (same data-name and
// data-state) on each other, and a click on either acts on the domain.

const minSpan = 60; // the narrowest view, in picture units

export class MapView {
  constructor(box, { onDomain, onNode, onError }) {
    this.box = box;
    this.onDomain = onDomain;
    this.onNode = onNode;
    this.onError = onError;
    this.expand = new Set(); // domains whose nodes are drawn one cell each
    this.collapse = new Set(); // domains drawn closed
    this.highlight = ""; // a node or domain picked out (search)
    this.svg = null;
    this.size = null; // the picture's [width, height]
    this.vb = null; // the view: [x, y, width, height] in picture units
    this.seq = 0; // the latest request; older answers are dropped
    this.drag = null;
    box.addEventListener("wheel", (ev) => this.onWheel(ev), { passive: false });
    box.addEventListener("pointerdown", (ev) => this.onDown(ev));
    box.addEventListener("pointermove", (ev) => this.onMove(ev));
    box.addEventListener("pointerup", (ev) => this.onUp(ev));
    box.addEventListener("click", (ev) => this.onClick(ev));
    box.addEventListener("keydown", (ev) => {
      if (ev.key === "+" || ev.key === "=") this.zoomBy(1 / 1.5);
      else if (ev.key === "-") this.zoomBy(1.5);
      else if (ev.key === "0") this.fit();
    });
  }

  url() {
    const q = new URLSearchParams();
    this.expand.forEach((n) => q.append("expand", n));
    this.collapse.forEach((n) => q.append("collapse", n));
    if (this.highlight) q.append("highlight", this.highlight);
    return "api/map.svg" + (q.toString() ? "?" + q : "");
  }

  // refresh fetches the picture again, keeping the view.
  async refresh() {
    const seq = ++this.seq;
    const res = await fetch(this.url(), { cache: "no-store" });
    if (!res.ok) throw new Error("GET " + this.url() + ": " + res.status + " " + res.statusText);
    const text = await res.text();
    if (seq !== this.seq) return false;
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    if (doc.querySelector("parsererror")) throw new Error("the map is no SVG");
    const svg = document.importNode(doc.documentElement, true);
    const [, , w, h] = svg.getAttribute("viewBox").split(" ").map(Number);
    svg.setAttribute("width", "100%");
    svg.setAttribute("height", "100%");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    const resized = !this.size || this.size[0] !== w || this.size[1] !== h;
    this.size = [w, h];
    this.svg = svg;
    this.box.replaceChildren(svg);
    if (!this.vb) this.initialView();
    else if (resized) this.clampView();
    this.apply();
    this.box.dataset.loaded = String(seq);
    return true;
  }

  // initialView shows the whole picture, or, when that would make it too small to read (a large fabric), its
  // top left corner at a readable size: the whole height of a low picture, else three quarters of full size.
  initialView() {
    const [cw, ch] = this.viewport();
    const [w, h] = this.size;
    let scale = Math.min(cw / w, ch / h);
    if (scale < 0.5) scale = Math.min(Math.max(ch / h, 0.75), 1);
    this.vb = [0, 0, cw / scale, ch / scale];
  }

  fit() {
    const [cw, ch] = this.viewport();
    const [w, h] = this.size;
    const scale = Math.min(cw / w, ch / h);
    this.vb = [0, 0, cw / scale, ch / scale];
    this.apply();
  }

  viewport() {
    const r = this.box.getBoundingClientRect();
    return [Math.max(r.width, 1), Math.max(r.height, 1)];
  }

  clampView() {
    const [w, h] = this.size;
    this.vb[0] = Math.min(Math.max(this.vb[0], -this.vb[2] / 2), w - this.vb[2] / 2);
    this.vb[1] = Math.min(Math.max(this.vb[1], -this.vb[3] / 2), h - this.vb[3] / 2);
  }

  apply() {
    if (this.svg && this.vb) this.svg.setAttribute("viewBox", this.vb.map((v) => v.toFixed(1)).join(" "));
  }

  // zoomBy scales the view by f (below 1 zooms in) around a point of the picture, the view's centre by default.
  zoomBy(f, cx, cy) {
    if (!this.vb) return;
    const [x, y, w, h] = this.vb;
    if (cx === undefined) { cx = x + w / 2; cy = y + h / 2; }
    const maxSpan = Math.max(...this.size) * 4;
    f = Math.min(Math.max(f, minSpan / Math.min(w, h)), maxSpan / Math.max(w, h));
    this.vb = [cx - (cx - x) * f, cy - (cy - y) * f, w * f, h * f];
    this.clampView();
    this.apply();
  }

  // toPicture converts a point on the screen to picture units.
  toPicture(clientX, clientY) {
    const r = this.box.getBoundingClientRect();
    const [x, y, w, h] = this.vb;
    const scale = Math.min(r.width / w, r.height / h);
    return [x + (clientX - r.left) / scale, y + (clientY - r.top) / scale];
  }

  onWheel(ev) {
    if (!this.vb) return;
    ev.preventDefault();
    const [cx, cy] = this.toPicture(ev.clientX, ev.clientY);
    this.zoomBy(ev.deltaY > 0 ? 1.2 : 1 / 1.2, cx, cy);
  }

  onDown(ev) {
    if (!this.vb || ev.button !== 0) return;
    this.drag = { x: ev.clientX, y: ev.clientY, vb: this.vb.slice(), moved: false, id: ev.pointerId };
  }

  onMove(ev) {
    const d = this.drag;
    if (!d) return;
    const dx = ev.clientX - d.x, dy = ev.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 4) return;
    if (!d.moved) { d.moved = true; this.box.setPointerCapture(d.id); this.box.classList.add("dragging"); }
    const [cw, ch] = this.viewport();
    const scale = Math.min(cw / d.vb[2], ch / d.vb[3]);
    this.vb = [d.vb[0] - dx / scale, d.vb[1] - dy / scale, d.vb[2], d.vb[3]];
    this.clampView();
    this.apply();
  }

  onUp() {
    if (this.drag && this.drag.moved) {
      this.box.classList.remove("dragging");
      this.suppressClick = true;
    }
    this.drag = null;
  }

  onClick(ev) {
    if (this.suppressClick) { this.suppressClick = false; return; }
    const cell = ev.target.closest("rect.node");
    if (cell) { if (this.onNode) this.onNode(cell.dataset.node); return; }
    const g = ev.target.closest("g.domain, g.continued"); // a continued piece stands for its domain
    if (!g) return;
    this.toggle(g.dataset.name, g.dataset.state).catch((e) => this.onError(e));
    if (this.onDomain) this.onDomain(g.dataset.name);
  }

  // toggle closes an open domain, opens a closed one, and draws the cells of one shown as a bar of states.
  toggle(name, state) {
    if (state === "open") {
      this.collapse.add(name);
      this.expand.delete(name);
    } else if (state === "summary") {
      this.expand.add(name);
    } else {
      this.collapse.delete(name);
    }
    return this.refresh();
  }

  // show picks out a node or domain: it opens the domains above it (above: names from the top), draws the
  // cells of holder (the domain that holds a node), and moves the view onto it.
  async show(name, above, holder) {
    above.forEach((n) => this.collapse.delete(n));
    if (holder) {
      this.collapse.delete(holder);
      this.expand.add(holder);
    }
    this.highlight = name;
    await this.refresh();
    const target = [...this.svg.querySelectorAll("rect.node, g.domain")].find(
      (e) => e.dataset.node === name || e.dataset.name === name);
    if (!target) return null;
    // Centre the view on it, at the current zoom when that is readable, else at 1.
    const b = target.getBBox();
    const [cw, ch] = this.viewport();
    let scale = Math.min(cw / this.vb[2], ch / this.vb[3]);
    if (scale < 0.6 || scale > 2) scale = 1;
    const w = cw / scale, h = ch / scale;
    this.vb = [b.x + b.width / 2 - w / 2, b.y + b.height / 2 - h / 2, w, h];
    this.clampView();
    this.apply();
    return target;
  }
}
