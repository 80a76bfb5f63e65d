/* kagreport site: the item tables (assets/charts.js draws the charts). A classic script (no ES modules, no fetch),
   so every page works from file:// with no network. All data is read from
   <script type="application/json"> elements of the page itself. Text from result files is
   only ever put in the page with textContent, never parsed as HTML.
   Integers above 2^53 in the inline JSON may be rounded by JSON.parse; this script never
   does arithmetic on them or shows them (the pages show the exact numbers as text). */
(function () {
  "use strict";

  function readJSON(element) {
    return JSON.parse(element.textContent);
  }

  function cell(row, text, className) {
    var td = document.createElement("td");
    if (className) {
      td.className = className;
    }
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function number(value) {
    if (value === null || value === undefined) {
      return "\u2014";
    }
    return String(Number(value.toPrecision(3)));
  }

  // Row renderers of the paged tables, by the table's data-kind. Each gets the row (an
  // array), the column index by name and the <tr> to fill; text goes in with textContent.
  var RENDERERS = {
    items: function (r, col, tr) {
      tr.className = "outcome-" + r[col.outcome];
      cell(tr, r[col.dataset]);
      cell(tr, r[col.question]);
      cell(tr, r[col.outcome]);
      cell(tr, r[col.expected] === null ? "\u2014" : r[col.expected]);
      var response = r[col.response];
      var td = cell(tr, response === null ? "\u2014" : response, "text");
      var length = r[col.response_length];
      // length counts code points (as Python does); so must the comparison (not UTF-16 units).
      if (response !== null && length !== null && length > Array.from(response).length) {
        var more = document.createElement("span");
        more.className = "cut";
        more.textContent = " \u2026 (" + length + " characters)";
        td.appendChild(more);
      }
      cell(tr, r[col.error] === null ? "" : r[col.error], "text");
      cell(tr, number(r[col.generation_secs]), "num");
      cell(tr, number(r[col.retrieval_secs]), "num");
    },
    "run-items": function (r, col, tr) {
      tr.className = "outcome-" + r[col.outcome];
      cell(tr, r[col.dataset]);
      cell(tr, r[col.question]);
      cell(tr, r[col.outcome]);
      cell(tr, r[col.metrics]);
      var response = r[col.response];
      var td = cell(tr, response === null ? "\u2014" : response, "text");
      var length = r[col.response_length];
      if (response !== null && length !== null && length > Array.from(response).length) {
        var more = document.createElement("span");
        more.className = "cut";
        more.textContent = " \u2026 (" + length + " characters)";
        td.appendChild(more);
      }
      cell(tr, r[col.reference] === null ? "\u2014" : r[col.reference], "text");
      cell(tr, r[col.error] === null ? "" : r[col.error], "text");
    },
    flips: function (r, col, tr) {
      tr.className = r[col.candidate] === "correct" ? "gained" : "lost";
      cell(tr, r[col.item]);
      cell(tr, r[col.candidate], "o-" + r[col.candidate]);
      cell(tr, r[col.baseline], "o-" + r[col.baseline]);
    }
  };

  // A table whose rows come from an inline JSON {columns, rows} document, shown a page at
  // a time and filtered by a case-insensitive substring search over its text columns.
  // Markup: <div class="paged" data-source="<id of the JSON script>"> holding a
  // <table data-kind data-page-size> and the controls (.paged-search, .paged-prev,
  // .paged-next, .paged-count, .paged-page).
  function setupPaged(container) {
    var data = document.getElementById(container.getAttribute("data-source"));
    var table = container.querySelector("table");
    var renderRow = table ? RENDERERS[table.getAttribute("data-kind")] : null;
    if (!data || !table || !renderRow) {
      return;
    }
    var source = readJSON(data);
    var rows = source.rows;
    var col = {};
    for (var c = 0; c < source.columns.length; c++) {
      col[source.columns[c]] = c;
    }
    var pageSize = parseInt(table.getAttribute("data-page-size"), 10) || 50;
    var body = table.tBodies[0];
    var search = container.querySelector(".paged-search");
    var prev = container.querySelector(".paged-prev");
    var next = container.querySelector(".paged-next");
    var count = container.querySelector(".paged-count");
    var pageLabel = container.querySelector(".paged-page");
    var haystack = null; // lower-cased text of each row, built on first search
    var matches = rows;
    var page = 0;

    function text(row) {
      var parts = [];
      for (var k = 0; k < row.length; k++) {
        if (row[k] !== null && typeof row[k] === "string") {
          parts.push(row[k]);
        }
      }
      return parts.join("\n").toLowerCase();
    }

    function render() {
      var pages = Math.max(1, Math.ceil(matches.length / pageSize));
      if (page >= pages) {
        page = pages - 1;
      }
      if (page < 0) {
        page = 0;
      }
      var start = page * pageSize;
      var end = Math.min(matches.length, start + pageSize);
      var fragment = document.createDocumentFragment();
      for (var i = start; i < end; i++) {
        var tr = document.createElement("tr");
        renderRow(matches[i], col, tr);
        fragment.appendChild(tr);
      }
      while (body.firstChild) {
        body.removeChild(body.firstChild);
      }
      body.appendChild(fragment);
      count.textContent = String(matches.length);
      pageLabel.textContent = "page " + (page + 1) + " of " + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }

    function filter() {
      var query = search.value.trim().toLowerCase();
      if (!query) {
        matches = rows;
      } else {
        if (haystack === null) {
          haystack = rows.map(text);
        }
        matches = [];
        for (var i = 0; i < rows.length; i++) {
          if (haystack[i].indexOf(query) !== -1) {
            matches.push(rows[i]);
          }
        }
      }
      page = 0;
      render();
    }

    search.addEventListener("input", filter);
    prev.addEventListener("click", function () {
      page -= 1;
      render();
    });
    next.addEventListener("click", function () {
      page += 1;
      render();
    });
    filter();
  }

  function start() {
    var paged = document.querySelectorAll("div.paged");
    for (var i = 0; i < paged.length; i++) {
      setupPaged(paged[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
