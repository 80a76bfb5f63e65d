/* kagreport site: the charts. A classic script (no ES modules, no fetch), so every page
   works from file:// with no network. Each div.chart is followed by a
   <script type="application/json" class="vega-spec"> holding its Vega-Lite spec; the chart
   is drawn with vega-embed (assets/vega.js) under the pages' Content-Security-Policy. */
(function () {
  "use strict";

  function readJSON(element) {
    return JSON.parse(element.textContent);
  }

  function renderCharts() {
    var specs = document.querySelectorAll("script.vega-spec");
    for (var i = 0; i < specs.length; i++) {
      var script = specs[i];
      var target = script.previousElementSibling;
      if (!target || !target.classList.contains("chart")) {
        continue;
      }
      if (typeof window.vegaEmbed !== "function") {
        target.textContent = "(charts need assets/vega.js)";
        target.className += " chart-error";
        continue;
      }
      (function (div, spec) {
        // Export only: the source, compiled and editor actions would open other pages,
        // and the editor is on the network.
        var actions = { export: true, source: false, compiled: false, editor: false };
        // Under the pages' Content-Security-Policy (no eval, no inline style): Vega's
        // expression interpreter instead of compiled functions (ast), and no <style>
        // elements from vega-embed or vega-tooltip (site.css styles their menu and tooltip;
        // forceActionsMenu keeps the menu, which vega-embed drops with its style).
        var options = {
          actions: actions,
          renderer: "svg",
          ast: true,
          defaultStyle: false,
          forceActionsMenu: true,
          tooltip: { disableDefaultStyle: true }
        };
        window.vegaEmbed(div, spec, options).catch(function (err) {
          div.textContent = "This chart could not be drawn: " + err;
          div.className += " chart-error";
          if (window.console) {
            window.console.error(err);
          }
        });
      })(target, readJSON(script));
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", renderCharts);
  } else {
    renderCharts();
  }
})();
