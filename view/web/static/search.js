// The search box: finds nodes, domains and switches (by the identifiers their domains stand for) in the last
// tree loaded, best matches first, and hands the one picked to onPick.
import { el } from "./dom.js";

const maxResults = 12;

export class Search {
  constructor(input, list, onPick) {
    this.input = input;
    this.list = list;
    this.onPick = onPick; // called with {name, kind, domain, path}
    this.entries = [];
    this.shown = [];
    this.active = 0;
    input.addEventListener("input", () => this.update());
    input.addEventListener("keydown", (ev) => this.onKey(ev));
    input.addEventListener("blur", () => setTimeout(() => { this.list.hidden = true; }, 150));
    input.addEventListener("focus", () => this.update());
  }

  // index lists what can be found in data: every domain, the switches it stands for, every node in it, and
  // the nodes without topology.
  index(data) {
    const entries = [];
    const walk = (d, path) => {
      const here = path.concat(d.name);
      entries.push({ name: d.name, kind: "domain", domain: d.name, path: here, where: "tier " + d.tier + (d.tierName ? " " + d.tierName : "") });
      (d.switches || []).forEach((s) => entries.push({ name: s, kind: "switch", domain: d.name, path: here, where: "switch of " + d.name }));
      d.nodes.forEach((n) => entries.push({ name: n, kind: "node", domain: d.name, path: here, where: "node in " + d.name }));
      d.children.forEach((c) => walk(c, here));
    };
    data.roots.forEach((d) => walk(d, []));
    data.unplaced.forEach((n) => entries.push({ name: n, kind: "node", domain: null, path: [], where: "without topology" }));
    data.missing.forEach((m) => entries.push({ name: m.node, kind: "node", domain: null, path: [], where: "without topology (" + m.reason.replaceAll("-", " ") + ")" }));
    entries.forEach((e) => { e.key = e.name.toLowerCase(); });
    this.entries = entries;
  }

  // find returns the entries matching q: the exact name first, then names starting with q, then names holding it.
  find(q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    const scored = [];
    for (const e of this.entries) {
      const at = e.key.indexOf(q);
      if (at < 0) continue;
      scored.push([e.key === q ? 0 : at === 0 ? 1 : 2, e]);
    }
    scored.sort((a, b) => a[0] - b[0] || a[1].key.localeCompare(b[1].key));
    return scored.slice(0, maxResults).map((s) => s[1]);
  }

  update() {
    this.shown = this.find(this.input.value);
    this.active = 0;
    this.list.replaceChildren(...this.shown.map((e, i) => {
      const li = el("li", "result");
      li.setAttribute("role", "option");
      li.dataset.name = e.name;
      li.append(el("span", "result-name", e.name), el("span", "result-where", e.where));
      li.addEventListener("mousedown", (ev) => { ev.preventDefault(); this.pick(i); });
      return li;
    }));
    if (this.input.value.trim() && this.shown.length === 0) this.list.append(el("li", "result none", "Nothing found."));
    this.list.hidden = !this.input.value.trim();
    this.mark();
  }

  mark() {
    [...this.list.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === this.active)));
  }

  onKey(ev) {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (this.shown.length === 0) return;
      this.active = (this.active + (ev.key === "ArrowDown" ? 1 : this.shown.length - 1)) % this.shown.length;
      this.mark();
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      if (this.shown.length === 0) this.update();
      if (this.shown.length > 0) this.pick(this.active);
    } else if (ev.key === "Escape") {
      this.list.hidden = true;
    }
  }

  pick(i) {
    const e = this.shown[i];
    this.list.hidden = true;
    this.input.value = e.name;
    this.onPick(e);
  }
}
