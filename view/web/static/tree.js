// The list of domains: a collapsible tree built lazily (a domain's body is made the first time it opens), so
// that a tree of 10,000 nodes costs only the domains a reader opens.
import { el, flash, plural } from "./dom.js";

const bigTree = 200; // above this many nodes, domains that hold nodes start collapsed

export class TreeList {
  constructor(root) {
    this.root = root;
    this.collapsed = new Set(); // domain names the reader collapsed, kept across refreshes
    this.first = true;
    this.info = new Map(); // name → {d, parent}, for every domain of the tree
    this.items = new Map(); // name → li, for the domains made so far
  }

  render(data) {
    if (this.first && data.ready) {
      if (data.nodeCount > bigTree) this.collapseHolders(data.roots);
      this.first = false;
    }
    this.info.clear();
    this.items.clear();
    const index = (d, parent) => {
      this.info.set(d.name, { d, parent });
      d.children.forEach((c) => index(c, d.name));
    };
    data.roots.forEach((d) => index(d, null));
    this.root.replaceChildren(...data.roots.map((d) => this.item(d)));
  }

  collapseHolders(domains) {
    domains.forEach((d) => {
      if (d.nodes.length > 0) this.collapsed.add(d.name);
      this.collapseHolders(d.children);
    });
  }

  item(d) {
    const li = el("li", "domain");
    li.dataset.name = d.name;
    li.setAttribute("role", "treeitem");
    const head = el("div", "domain-head");
    head.tabIndex = 0;
    head.append(el("span", "toggle", "▾"), el("span", "domain-name", d.name));
    head.append(el("span", "tier", "tier " + d.tier + (d.tierName ? " · " + d.tierName : "")));
    head.append(el("span", "nodes-count", plural(d.nodeCount, "node")));
    if (d.source) head.append(el("span", "source", "source " + d.source));
    const toggle = () => this.setCollapsed(li, !li.classList.contains("collapsed"));
    head.addEventListener("click", toggle);
    head.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
    });
    li.append(head);
    this.items.set(d.name, li);
    this.setCollapsed(li, this.collapsed.has(d.name));
    return li;
  }

  // body makes li's children and nodes, once.
  body(li) {
    let body = li.querySelector(":scope > .domain-body");
    if (body) return body;
    const d = this.info.get(li.dataset.name).d;
    body = el("div", "domain-body");
    if (d.children.length > 0) {
      const ul = el("ul");
      ul.setAttribute("role", "group");
      d.children.forEach((c) => ul.append(this.item(c)));
      body.append(ul);
    }
    if (d.nodes.length > 0) {
      const chips = el("ul", "chips nodes");
      d.nodes.forEach((n) => {
        const chip = el("li", "node", n);
        chip.dataset.node = n;
        chips.append(chip);
      });
      body.append(chips);
    }
    li.append(body);
    return body;
  }

  setCollapsed(li, yes) {
    if (!yes) this.body(li);
    li.classList.toggle("collapsed", yes);
    li.querySelector(":scope > .domain-head").setAttribute("aria-expanded", String(!yes));
    li.querySelector(":scope > .domain-head > .toggle").textContent = yes ? "▸" : "▾";
    if (yes) this.collapsed.add(li.dataset.name); else this.collapsed.delete(li.dataset.name);
  }

  setAll(yes) {
    // Opening everything makes every body; closing touches only what was made.
    const walk = (li) => {
      this.setCollapsed(li, yes);
      if (!yes) li.querySelectorAll(":scope > .domain-body > ul > li.domain").forEach(walk);
    };
    if (yes) this.items.forEach((li) => this.setCollapsed(li, true));
    else this.root.querySelectorAll(":scope > li.domain").forEach(walk);
  }

  // reveal opens the path to the named domain (and, given a node, the domain that holds it), scrolls it into
  // view and marks it; it returns the element marked, or null when the name is not in the tree.
  reveal(domain, node) {
    if (!this.info.has(domain)) return null;
    const path = [];
    for (let n = domain; n !== null; n = this.info.get(n).parent) path.unshift(n);
    let li = null;
    for (const name of path) {
      li = this.items.get(name);
      if (!li) return null; // a parent chain the list does not show
      if (name !== domain || node) this.setCollapsed(li, false);
    }
    let target = li.querySelector(":scope > .domain-head");
    if (node) target = [...li.querySelectorAll(":scope > .domain-body > .nodes > li.node")].find((c) => c.dataset.node === node) || target;
    flash(target);
    target.scrollIntoView({ block: "nearest" });
    return target;
  }
}
