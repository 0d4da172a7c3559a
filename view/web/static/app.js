// fabricmap's read-only topology page: fetches /api/tree and renders it. Built with DOM calls and textContent
// only, so no name from the cluster is ever parsed as HTML.
"use strict";

(function () {
  const refreshMs = 15000;
  const collapsed = new Set(); // domain names the reader collapsed, kept across refreshes
  const bigTree = 200; // above this many nodes, domains that hold nodes start collapsed
  let lastBody = null; // the last response rendered: an unchanged tree is not rendered again
  let first = true;

  function collapseLeaves(domains) {
    domains.forEach((d) => {
      if (d.nodes.length > 0) collapsed.add(d.name);
      collapseLeaves(d.children);
    });
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  function setCollapsed(li, yes) {
    li.classList.toggle("collapsed", yes);
    li.querySelector(":scope > .domain-head").setAttribute("aria-expanded", String(!yes));
    li.querySelector(":scope > .domain-head > .toggle").textContent = yes ? "▸" : "▾";
    if (yes) collapsed.add(li.dataset.name); else collapsed.delete(li.dataset.name);
  }

  function domainItem(d) {
    const li = el("li", "domain");
    li.dataset.name = d.name;
    li.setAttribute("role", "treeitem");
    const head = el("div", "domain-head");
    head.tabIndex = 0;
    head.append(el("span", "toggle", "▾"), el("span", "domain-name", d.name));
    head.append(el("span", "tier", "tier " + d.tier + (d.tierName ? " · " + d.tierName : "")));
    head.append(el("span", "nodes-count", plural(d.nodeCount, "node")));
    if (d.source) head.append(el("span", "source", "source " + d.source));
    const toggle = () => setCollapsed(li, !li.classList.contains("collapsed"));
    head.addEventListener("click", toggle);
    head.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
    });
    li.append(head);
    const body = el("div", "domain-body");
    if (d.children.length > 0) {
      const ul = el("ul");
      ul.setAttribute("role", "group");
      d.children.forEach((c) => ul.append(domainItem(c)));
      body.append(ul);
    }
    if (d.nodes.length > 0) {
      const chips = el("ul", "chips nodes");
      d.nodes.forEach((n) => chips.append(el("li", "node", n)));
      body.append(chips);
    }
    li.append(body);
    setCollapsed(li, collapsed.has(d.name));
    return li;
  }

  function render(data) {
    if (first && data.ready) {
      if (data.nodeCount > bigTree) collapseLeaves(data.roots);
      first = false;
    }
    const tree = document.getElementById("tree");
    tree.replaceChildren(...data.roots.map(domainItem));
    document.getElementById("tree-empty").hidden = data.ready && data.roots.length > 0;

    const unplaced = document.getElementById("unplaced");
    unplaced.replaceChildren(...data.unplaced.map((n) => el("li", "node", n)));
    document.getElementById("unplaced-count").textContent = "(" + data.unplaced.length + ")";
    document.getElementById("unplaced-empty").hidden = data.unplaced.length > 0;

    const body = document.querySelector("#conflicts tbody");
    body.replaceChildren(...data.conflicts.map((c) => {
      const tr = el("tr");
      tr.append(el("td", "node", c.node || "—"), el("td", "src", c.source || "—"), el("td", "reason", c.reason));
      return tr;
    }));
    document.getElementById("conflicts-count").textContent = "(" + data.conflicts.length + ")";
    document.getElementById("conflicts").hidden = data.conflicts.length === 0;
    document.getElementById("conflicts-empty").hidden = data.conflicts.length > 0;

    document.getElementById("summary").textContent = data.ready
      ? plural(data.nodeCount, "node") + " in " + plural(data.domainCount, "domain") + ", " +
        data.unplaced.length + " without topology, " + plural(data.conflicts.length, "conflict") +
        (data.updated ? " · built " + data.updated.replace("T", " ").replace("Z", " UTC") : "")
      : "No tree built yet.";
    document.body.dataset.loaded = "true";
  }

  async function load() {
    const err = document.getElementById("error");
    try {
      const res = await fetch("api/tree", { cache: "no-store" });
      if (!res.ok) throw new Error("GET api/tree: " + res.status + " " + res.statusText);
      const body = await res.text();
      if (body !== lastBody) render(JSON.parse(body));
      lastBody = body;
      err.hidden = true;
    } catch (e) {
      err.textContent = "Could not load the tree: " + e.message;
      err.hidden = false;
    }
  }

  function setAll(yes) {
    document.querySelectorAll("#tree li.domain").forEach((li) => setCollapsed(li, yes));
  }

  document.getElementById("expand-all").addEventListener("click", () => setAll(false));
  document.getElementById("collapse-all").addEventListener("click", () => setAll(true));
  load();
  setInterval(load, refreshMs);
})();
