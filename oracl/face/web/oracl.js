// ORACL web view: draws each neighbourhood graph (<div class="graph">) with Cytoscape.js.
// The data is the JSON API's answer (data-src) or, in a standalone file, the
// <script id="graph-data"> element. Nodes are sized by rank and coloured by the relation of
// the edge that reached them; edges are coloured by relation and sized by weight. With
// data-walk="server", a click on a file walks on (its own neighbourhood), on a hub opens
// the hub's members. When drawn, the container gets data-drawn (the node count).
(function () {
  "use strict";

  function elements(data) {
    var out = [];
    data.nodes.forEach(function (n) {
      var label = n.kind === "hub" ? n.id.replace("hub:domain:", "hub ") : n.id.split("/").pop();
      out.push({ group: "nodes", data: {
        id: n.id, label: label, kind: n.kind, depth: n.depth, rank: n.rank || 0,
        relation: n.relation || "", more: n.more ? 1 : 0, priority: n.priority } });
    });
    data.edges.forEach(function (e, i) {
      out.push({ group: "edges", data: {
        id: "e" + i, source: e.source, target: e.target, relation: e.relation,
        weight: e.weight || 0, rank: e.rank || 0 } });
    });
    return out;
  }

  function draw(box, data) {
    var colours = JSON.parse(box.getAttribute("data-colours") || "{}");
    var paint = function (rel) { return colours[rel] || colours[""] || "#6b4f9e"; };
    var depth = data.depth || 1;
    var cy = cytoscape({
      container: box,
      elements: elements(data),
      style: [
        { selector: "node", style: {
          "background-color": function (n) { return paint(n.data("relation")); },
          "width": function (n) { return n.data("depth") === 0 ? 46 : 14 + 30 * n.data("rank"); },
          "height": function (n) { return n.data("depth") === 0 ? 46 : 14 + 30 * n.data("rank"); },
          "label": "data(label)", "font-size": 10, "text-valign": "bottom", "text-margin-y": 3,
          "color": "#222", "text-outline-color": "#fff", "text-outline-width": 2 } },
        { selector: "node[depth = 0]", style: {
          "background-color": "#111", "font-size": 12, "font-weight": "bold" } },
        { selector: "node[kind = 'hub']", style: { "shape": "round-rectangle" } },
        { selector: "node[more = 1]", style: {
          "border-width": 2, "border-style": "dashed", "border-color": "#333" } },
        { selector: "edge", style: {
          "line-color": function (e) { return paint(e.data("relation")); },
          "target-arrow-color": function (e) { return paint(e.data("relation")); },
          "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.7,
          "width": function (e) { return 0.6 + 2.4 * e.data("weight"); },
          "opacity": function (e) { return 0.35 + 0.6 * e.data("rank"); } } }
      ],
      layout: { name: "concentric", concentric: function (n) { return 3 - n.data("depth"); },
                levelWidth: function () { return 1; }, minNodeSpacing: 18, animate: false }
    });
    cy.on("tap", "node", function (evt) {
      var n = evt.target.data();
      if (box.getAttribute("data-walk") !== "server" || n.depth === 0) {
        var info = document.getElementById("graph-info") || box.parentNode.insertBefore(
          document.createElement("p"), box.nextSibling);
        info.id = "graph-info";
        info.textContent = n.id + " · " + (n.relation || "centre") + " · rank " + n.rank.toFixed(3);
        return;
      }
      window.location.href = n.kind === "hub"
        ? "/hub/" + encodeURIComponent(n.id.replace("hub:domain:", ""))
        : "/graph/" + n.id.split("/").map(encodeURIComponent).join("/") + (depth === 2 ? "?depth=2" : "");
    });
    box.setAttribute("data-drawn", String(cy.nodes().length));
    box.setAttribute("data-edges", String(cy.edges().length));
  }

  function fail(box, message) {
    box.setAttribute("data-error", message);
    box.textContent = "The graph could not be drawn: " + message;
  }

  function start() {
    var inline = document.getElementById("graph-data");
    document.querySelectorAll("div.graph").forEach(function (box) {
      if (typeof cytoscape !== "function") { return fail(box, "Cytoscape.js did not load"); }
      if (inline) { return draw(box, JSON.parse(inline.textContent)); }
      fetch(box.getAttribute("data-src"), { headers: { "Accept": "application/json" } })
        .then(function (r) { return r.json().then(function (d) { return [r.ok, d]; }); })
        .then(function (rd) { return rd[0] ? draw(box, rd[1]) : fail(box, rd[1].error || "error"); })
        .catch(function (err) { fail(box, String(err)); });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
