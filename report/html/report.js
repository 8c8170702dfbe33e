// kiln's HTML report: the severity filter. Without the script every
// finding shows; with it, the checkboxes hide findings, the places, files
// and table of contents entries left empty, and redraw the charts for
// what shows.
(function () {
  "use strict";
  var severities = ["error", "warning", "info"];
  var boxes = document.querySelectorAll("#filter input[data-filter]");

  function shown() {
    var s = {};
    boxes.forEach(function (b) { s[b.getAttribute("data-filter")] = b.checked; });
    return s;
  }

  // width is html.go's barWidth: n's share of the longest bar, at least a pixel.
  function width(n, most, barMax) {
    if (n === 0 || most === 0) { return 0; }
    return Math.max(1, Math.round(n * barMax / most));
  }

  function drawChart(svg, s) {
    var label = Number(svg.getAttribute("data-label-width"));
    var barMax = Number(svg.getAttribute("data-bar-max"));
    var bars = svg.querySelectorAll(".bar");
    var counts = [], most = 0;
    bars.forEach(function (bar, i) {
      counts[i] = {};
      var total = 0;
      severities.forEach(function (sev) {
        var n = s[sev] ? Number(bar.getAttribute("data-" + sev)) : 0;
        counts[i][sev] = n;
        total += n;
      });
      counts[i].total = total;
      most = Math.max(most, total);
    });
    bars.forEach(function (bar, i) {
      var x = label;
      severities.forEach(function (sev) {
        var rect = bar.querySelector("rect.sev-" + sev);
        var w = width(counts[i][sev], most, barMax);
        rect.setAttribute("x", x);
        rect.setAttribute("width", w);
        x += w;
      });
      var count = bar.querySelector(".count");
      count.textContent = counts[i].total;
      count.setAttribute("x", x + 4);
    });
  }

  function apply() {
    var s = shown(), visible = 0, total = 0;
    document.querySelectorAll("#files .finding").forEach(function (f) {
      var on = s[f.getAttribute("data-severity")] && (!f.hasAttribute("data-suppressed") || s.suppressed);
      f.hidden = !on;
      total++;
      if (on) { visible++; }
    });
    document.querySelectorAll("#files [data-place]").forEach(function (p) {
      p.hidden = !p.querySelector(".finding:not([hidden])");
    });
    document.querySelectorAll("[data-file]").forEach(function (d) {
      d.hidden = !d.querySelector(".finding:not([hidden])");
      var entry = document.querySelector('[data-toc="' + d.id + '"]');
      if (entry) { entry.hidden = d.hidden; }
    });
    document.querySelectorAll("svg.chart").forEach(function (svg) { drawChart(svg, s); });
    var out = document.getElementById("shown");
    if (out) { out.textContent = visible + " of " + total + " findings shown"; }
  }

  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  apply();
})();
