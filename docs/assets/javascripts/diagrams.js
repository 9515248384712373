// Draws the site's diagrams: every ```mermaid block of a page (a div.diagram, see mkdocs.yml)
// becomes an SVG, in the page itself, with the vendored mermaid.min.js (no network).
// docs/hooks.py adds both scripts to the pages that have a diagram.
(function () {
  function draw() {
    var nodes = document.querySelectorAll("div.diagram:not([data-processed])");
    if (!nodes.length || typeof mermaid === "undefined") {
      return;
    }
    var dark = document.body.getAttribute("data-md-color-scheme") === "slate";
    mermaid.initialize({ startOnLoad: false, theme: dark ? "dark" : "neutral", securityLevel: "strict" });
    mermaid.run({ nodes: nodes });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
