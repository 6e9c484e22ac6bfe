// fabricdoctor HTML report: filtering of the findings table, the heatmap tooltip, and the hosts of a
// clicked tile. Everything the page shows is computed by fabricdoctor and written into the document;
// this script only hides rows and shows text that is already in it.
"use strict";
(function () {
  function applyFilter(form) {
    var table = document.getElementById(form.getAttribute("data-filter-for"));
    if (!table) return;
    var verdicts = {};
    var boxes = form.querySelectorAll("input[name=verdict]");
    for (var i = 0; i < boxes.length; i++) verdicts[boxes[i].value] = boxes[i].checked;
    var prefix = (form.querySelector("input[name=id]") || { value: "" }).value.trim();
    var rows = table.tBodies[0] ? table.tBodies[0].rows : [];
    var shown = 0;
    for (var r = 0; r < rows.length; r++) {
      var row = rows[r];
      var visible = verdicts[row.getAttribute("data-verdict")] === true &&
        (row.getAttribute("data-id") || "").indexOf(prefix) === 0;
      row.hidden = !visible;
      if (visible) shown++;
    }
    var output = form.querySelector("output[name=shown]");
    if (output) output.textContent = shown + " of " + rows.length + " rows shown";
  }

  var forms = document.querySelectorAll("form.filters");
  for (var f = 0; f < forms.length; f++) {
    (function (form) {
      form.addEventListener("input", function () { applyFilter(form); });
      form.addEventListener("change", function () { applyFilter(form); });
      applyFilter(form);
    })(forms[f]);
  }

  var tooltip = document.getElementById("tooltip");
  // A tile's worst pair, from its row's data-worst (one name per column, "-" for none).
  function worstPair(cell) {
    var worst = (cell.parentElement.getAttribute("data-worst") || "").split(" ")[cell.cellIndex - 1];
    return worst && worst !== "-" ? worst : "";
  }
  function describe(cell) {
    var table = cell.closest("table.heatmap");
    // Headers carry the full hostname in their title (their text may be shortened).
    var rowHead = cell.parentElement.cells[0];
    var row = rowHead.getAttribute("title") || rowHead.textContent;
    var head = table.tHead.rows[0].cells[cell.cellIndex];
    var column = head ? (head.getAttribute("title") || head.textContent) : "?";
    var unit = table.getAttribute("data-unit");
    var values = (cell.parentElement.getAttribute("data-values") || "").split(" ");
    var value = values[cell.cellIndex - 1];
    if (value === "-") value = "";
    var lines = [row + " \u2192 " + column + ": " + (value ? value + " " + unit : "not measured")];
    lines.push("best pair: " + table.getAttribute("data-best") + " " + unit);
    var worst = worstPair(cell);
    if (worst) lines.push("worst pair: " + worst);
    if (table.hasAttribute("data-tiles")) lines.push("click for the hosts of both groups");
    if (cell.classList.contains("sl")) lines.push("suspect pair");
    if (cell.classList.contains("sh")) lines.push("suspect host in this row or column");
    return lines.join("\n");
  }
  document.addEventListener("mouseover", function (event) {
    var cell = event.target.closest ? event.target.closest("table.heatmap td") : null;
    if (!cell || !tooltip) { if (tooltip) tooltip.hidden = true; return; }
    tooltip.textContent = describe(cell);
    tooltip.hidden = false;
  });
  // A tile of a summarised rail stands for two groups of hosts: a click lists both groups' hosts
  // (from the page's "Hosts of each group" table) and the tile's worst pair under the figure.
  function groupHosts(name) {
    var rows = document.querySelectorAll("table.groups tr[data-group]");
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].getAttribute("data-group") === name) return rows[i].cells[1].textContent.split(" ");
    }
    return [];
  }
  document.addEventListener("click", function (event) {
    var cell = event.target.closest ? event.target.closest("table.heatmap[data-tiles] td") : null;
    if (!cell) return;
    var table = cell.closest("table.heatmap");
    var rowHead = cell.parentElement.cells[0];
    var rowGroup = rowHead.getAttribute("title") || rowHead.textContent;
    var head = table.tHead.rows[0].cells[cell.cellIndex];
    var columnGroup = head ? (head.getAttribute("title") || head.textContent) : "";
    var figure = table.closest("figure") || table;
    var panel = figure.nextElementSibling;
    if (!panel || !panel.classList.contains("tile-hosts")) {
      panel = document.createElement("div");
      panel.className = "tile-hosts";
      figure.parentNode.insertBefore(panel, figure.nextSibling);
    }
    var rowHosts = groupHosts(rowGroup);
    var columnHosts = groupHosts(columnGroup);
    var text = describe(cell).split("\n")[0];
    var worst = worstPair(cell);
    if (worst) text += "\nworst pair: " + worst;
    text += "\nclients, " + rowGroup + " (" + rowHosts.length + " hosts): " + rowHosts.join(", ");
    text += "\nservers, " + columnGroup + " (" + columnHosts.length + " hosts): " + columnHosts.join(", ");
    panel.textContent = text;
  });
  document.addEventListener("mousemove", function (event) {
    if (tooltip && !tooltip.hidden) {
      tooltip.style.left = (event.clientX + 14) + "px";
      tooltip.style.top = (event.clientY + 14) + "px";
    }
  });
})();
