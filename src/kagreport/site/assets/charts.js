/* kagreport site: the charts. A classic script (no ES modules, no fetch), so every page
   works from file:// with no network. Each div.chart is followed by a
   <script type="application/json" class="vega-spec"> holding its Vega-Lite spec; the chart
   is drawn with vega-embed (assets/vega.js) under the pages' Content-Security-Policy.

   On screen a chart fills its container: the spec's width is "container" (Vega follows the
   div's width), or, for small multiples (a facet, which Vega-Lite sizes by its panels),
   this script sets the panels' width from the div's width, and draws again when it changes.
   The spec keeps its paper figure in usermeta.kagreport.paper (written by
   kagreport.charts.fit_container): the PNG and SVG buttons draw that figure, off screen,
   at the paper preset's width (PNG at 300 dpi: 3.3 in is 990 pixels), not the screen's.
   Without scripts the div shows the exported SVG (an <img> this script replaces). */
(function () {
  "use strict";

  var DPI = 300;
  var POINTS_PER_INCH = 72;
  var MIN_PANEL = 200; // pixels: below this a panel's labels crowd; fewer panels a row

  function readJSON(element) {
    return JSON.parse(element.textContent);
  }

  function copy(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function meta(spec) {
    var user = spec.usermeta && spec.usermeta.kagreport;
    return user || {};
  }

  // Under the pages' Content-Security-Policy (no eval, no inline style): Vega's expression
  // interpreter instead of compiled functions (ast), and no <style> elements from
  // vega-embed or vega-tooltip (site.css styles the tooltip). vega-embed's own export menu
  // is off: it would export the screen's size; the buttons below export the paper's.
  function options() {
    return {
      actions: false,
      renderer: "svg",
      ast: true,
      defaultStyle: false,
      tooltip: { disableDefaultStyle: true }
    };
  }

  // The paper figure of a screen spec: what fit_container kept (kagreport.charts.paper_spec).
  function paperSpec(screen) {
    var spec = copy(screen);
    var paper = meta(spec).paper;
    if (!paper) {
      return spec;
    }
    var view = spec.facet ? spec.spec : spec;
    var config = paper.config || {};
    spec.config = spec.config || {};
    Object.keys(config).forEach(function (section) {
      spec.config[section] = spec.config[section] || {};
      Object.keys(config[section]).forEach(function (key) {
        spec.config[section][key] = config[section][key];
      });
    });
    if (paper.height !== undefined) {
      view.height = paper.height;
    }
    if (paper.padding !== undefined) {
      spec.padding = paper.padding;
    }
    if (spec.facet) {
      if (paper.cell_width !== undefined) {
        view.width = paper.cell_width;
      }
    } else if (spec.width === "container") {
      spec.width = paper.width;
    }
    return spec;
  }

  // A facet for a div of `width` pixels: as many panels a row as fit, each as wide as the
  // row allows once what lies beside the panels (`overhead`, measured) is taken off.
  function facetSpec(screen, width, overhead) {
    var spec = copy(screen);
    var info = meta(spec);
    var panels = info.panels || 1;
    var columns = Math.max(1, Math.min(panels, Math.floor(width / MIN_PANEL)));
    spec.columns = columns;
    spec.spec.width = Math.max(60, Math.floor((width - overhead) / columns) - 1);
    return fitTitle(spec, width - 8);
  }

  // Wraps a title's lines (and subtitle's) to `width` pixels: kagreport.charts wraps them
  // for the paper's column, which is wider than a phone's screen and narrower than a page's.
  function wrapLines(lines, size, width) {
    var chars = Math.max(12, Math.floor(width / (0.56 * size)));
    var words = [].concat(lines).join(" ").split(/\s+/).filter(Boolean);
    var out = [];
    var line = "";
    words.forEach(function (word) {
      if (line && line.length + 1 + word.length > chars) {
        out.push(line);
        line = word;
      } else {
        line = line ? line + " " + word : word;
      }
    });
    if (line) {
      out.push(line);
    }
    return out.length ? out : [""];
  }

  function fitTitle(spec, width) {
    var title = spec.title;
    if (!title || typeof title !== "object" || Array.isArray(title)) {
      return spec;
    }
    var sizes = (spec.config && spec.config.title) || {};
    title.text = wrapLines(title.text, sizes.fontSize || 13, width);
    if (title.subtitle) {
      title.subtitle = wrapLines(title.subtitle, sizes.subtitleFontSize || 11, width);
    }
    return spec;
  }

  function measuredWidth(div) {
    var svg = div.querySelector("svg");
    return svg ? svg.getBoundingClientRect().width : 0;
  }

  function fail(div, err) {
    div.textContent = "This chart could not be drawn: " + err;
    div.className += " chart-error";
    if (window.console) {
      window.console.error(err);
    }
  }

  function drawFacet(div, screen) {
    var width = div.clientWidth || 600;
    var first = facetSpec(screen, width, 80);
    return window.vegaEmbed(div, first, options()).then(function (result) {
      // The overhead (axes, legend, spacing) is measured once and the panels resized.
      var overhead = measuredWidth(div) - first.columns * first.spec.width;
      var again = facetSpec(screen, width, Math.max(0, overhead));
      if (again.spec.width === first.spec.width && again.columns === first.columns) {
        return result;
      }
      result.finalize();
      return window.vegaEmbed(div, again, options());
    });
  }

  function download(url, name) {
    var link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.className = "chart-download";
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
  }

  // Draws the paper figure off screen and hands back its PNG or SVG.
  function exportFigure(screen, type, name) {
    var holder = document.createElement("div");
    holder.className = "chart-offscreen";
    holder.setAttribute("aria-hidden", "true");
    document.body.appendChild(holder);
    var spec = paperSpec(screen);
    return window
      .vegaEmbed(holder, spec, options())
      .then(function (result) {
        var scale = type === "png" ? DPI / POINTS_PER_INCH : 1;
        return result.view.toImageURL(type, scale).then(function (url) {
          result.finalize();
          download(url, name + "." + type);
          return url;
        });
      })
      .then(
        function (url) {
          document.body.removeChild(holder);
          return url;
        },
        function (err) {
          document.body.removeChild(holder);
          throw err;
        }
      );
  }

  function addButtons(div, screen) {
    var figure = div.parentNode;
    var caption = figure ? figure.querySelector("figcaption") : null;
    if (!caption || caption.querySelector(".chart-export")) {
      return;
    }
    var paper = meta(screen).paper || {};
    var inches = paper.width ? paper.width / POINTS_PER_INCH : null;
    var size = inches ? " (" + (Math.round(inches * 10) / 10) + " in)" : "";
    var name = div.id.replace(/^chart-/, "") || "chart";
    [
      ["png", "PNG" + size + ", " + DPI + " dpi"],
      ["svg", "SVG" + size]
    ].forEach(function (pair) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "chart-export chart-export-" + pair[0];
      button.textContent = pair[1];
      button.addEventListener("click", function () {
        button.disabled = true;
        exportFigure(screen, pair[0], name).then(
          function () {
            button.disabled = false;
          },
          function (err) {
            button.disabled = false;
            if (window.console) {
              window.console.error(err);
            }
          }
        );
      });
      caption.appendChild(document.createTextNode(" "));
      caption.appendChild(button);
    });
  }

  function draw(div, screen) {
    var fallback = div.querySelector("img.chart-fallback");
    if (fallback) {
      div.removeChild(fallback);
    }
    var drawn = screen.facet
      ? drawFacet(div, screen)
      : window.vegaEmbed(div, fitTitle(copy(screen), (div.clientWidth || 600) - 8), options());
    return drawn.then(function (result) {
      addButtons(div, screen);
      return result;
    });
  }

  // Facets are drawn again when their div's width changes (a phone turned, a window resized).
  function watchFacet(div, screen) {
    var width = div.clientWidth;
    var pending = null;
    window.addEventListener("resize", function () {
      if (pending !== null) {
        window.clearTimeout(pending);
      }
      pending = window.setTimeout(function () {
        pending = null;
        if (Math.abs(div.clientWidth - width) < 2) {
          return;
        }
        width = div.clientWidth;
        drawFacet(div, screen).catch(function (err) {
          fail(div, err);
        });
      }, 200);
    });
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
        var note = document.createElement("p");
        note.className = "chart-error";
        note.textContent = "(live charts need assets/vega.js)";
        target.appendChild(note);
        continue;
      }
      (function (div, screen) {
        draw(div, screen).catch(function (err) {
          fail(div, err);
        });
        if (screen.facet) {
          watchFacet(div, screen);
        }
      })(target, readJSON(script));
    }
  }

  // For the browser tests and the curious: the paper figure's PNG/SVG of a chart, by id.
  window.kagreportCharts = {
    paperSpec: paperSpec,
    exportFigure: function (id, type) {
      var div = document.getElementById(id);
      var script = div ? div.nextElementSibling : null;
      if (!script || !script.classList.contains("vega-spec")) {
        return Promise.reject(new Error("no chart " + id));
      }
      return exportFigure(readJSON(script), type, id);
    }
  };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", renderCharts);
  } else {
    renderCharts();
  }
})();
