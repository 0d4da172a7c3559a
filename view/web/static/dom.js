// Small DOM helpers shared by the page's modules. Text goes in through textContent only, so no name from the
// cluster is ever parsed as HTML.

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function plural(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

// flash marks e as the target of a search or a click elsewhere on the page, and unmarks the previous one.
let flashed = [];
export function flash(...elements) {
  flashed.forEach((e) => e.classList.remove("hit"));
  flashed = elements.filter(Boolean);
  flashed.forEach((e) => e.classList.add("hit"));
}
