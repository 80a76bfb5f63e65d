/* kagreport site: the item tables (assets/charts.js draws the charts). A classic script (no ES modules, no fetch),
   so every page works from file:// with no network. All data is read from
   <script type="application/json"> elements of the page itself. Text from result files is
   only ever put in the page with textContent, never parsed as HTML, and inside a <bdi>
   (isolated): right-to-left text or a direction override in it cannot reorder the page's
   own text around it.
   Integers above 2^53 in the inline JSON may be rounded by JSON.parse; this script never
   does arithmetic on them or shows them (the pages show the exact numbers as text). */
(function () {
  "use strict";

  function readJSON(element) {
    return JSON.parse(element.textContent);
  }

  // ------------------------------------------------------------------ tables
  // Every table.data scrolls sideways in its own box (never the page) and, from
  // SORT_MIN_ROWS rows on, sorts by any column; a div.paged table (rows from inline JSON)
  // also pages, filters by outcome, setup or dataset, and searches whole words.

  var MISSING = "\u2014";

  // A count as kagreport._format.count writes it: 1,234.
  function grouped(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  // n and its noun in the right number, as kagreport._format.plural: 1 item, 2 items.
  function plural(n, noun, many) {
    return grouped(n) + " " + (n === 1 ? noun : many || noun + "s");
  }
  // A table of fewer rows than this is read at a glance: sort controls would be noise.
  // Written from kagreport.site._templates.SORT_MIN_ROWS when the site is written (the
  // pages say "click a header to sort" from the same number).
  var SORT_MIN_ROWS = 10;
  // Numbers inside text ("12", "item10") compare as numbers, so "item2" < "item10".
  var COLLATOR = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

  // Text of the run (a name, a question, a response) as the pages' Python side writes it
  // (kagreport/site/_bidi.py): in a <bdi>, which isolates it from the text around it.
  function isolated(text) {
    var bdi = document.createElement("bdi");
    bdi.textContent = text;
    return bdi;
  }

  // The same for the text of an <option>, which holds no element: between U+2068 (first
  // strong isolate) and U+2069 (pop directional isolate).
  function isolatedText(text) {
    return "\u2068" + text + "\u2069";
  }

  function cell(row, text, className) {
    var td = document.createElement("td");
    if (className) {
      td.className = className;
    }
    if (text !== "") {
      td.appendChild(isolated(text));
    }
    row.appendChild(td);
    return td;
  }

  // toFixed as Python's format rounds: an exact tie (1234.5, 0.125) goes to the even digit.
  function fixedEven(a, digits) {
    var scale = Math.pow(10, digits);
    var scaled = a * scale;
    var low = Math.floor(scaled);
    if (scaled - low === 0.5 && (low + 0.5) / scale === a && low % 2 === 0) {
      return (low / scale).toFixed(digits);
    }
    return a.toFixed(digits);
  }

  // A time or size as the pages' Python filter writes it (kagreport._format.quantity):
  // three significant digits, the integer part in full with thousands commas, a real minus.
  function quantity(value) {
    if (value === null || value === undefined || !isFinite(value)) {
      return MISSING;
    }
    var x = Number(value);
    if (x === 0) {
      return "0";
    }
    var digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
    var text = fixedEven(Math.abs(x), digits);
    if (digits > 0 && Number(text) >= Math.pow(10, 3 - digits)) { // 9.996 rounds to 10.00
      text = fixedEven(Math.abs(x), digits - 1);
    }
    var parts = text.split(".");
    parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (x < 0 ? "\u2212" : "") + parts.join(".");
  }

  // A long text folded: its first FOLD characters, the rest in the <details> they open
  // (as the pages' Python macro `folded` writes it).
  var FOLD = 300;

  function foldedCell(tr, text, className) {
    var chars = Array.from(text);
    if (chars.length <= FOLD) {
      return cell(tr, text, className);
    }
    var td = cell(tr, "", className);
    var details = document.createElement("details");
    details.className = "fold";
    var summary = document.createElement("summary");
    summary.appendChild(isolated(chars.slice(0, FOLD).join("")));
    details.appendChild(summary);
    details.appendChild(isolated(chars.slice(FOLD).join("")));
    td.appendChild(details);
    return td;
  }

  function responseCell(tr, response, length) {
    var td = response === null
      ? cell(tr, MISSING, "text response")
      : foldedCell(tr, response, "text response");
    // length counts code points (as Python does); so must the comparison (not UTF-16 units).
    if (response !== null && length !== null && length > Array.from(response).length) {
      var more = document.createElement("span");
      more.className = "cut";
      more.textContent = " \u2026 (" + plural(length, "character") + ")";
      td.appendChild(more);
    }
    return td;
  }

  // The question cell: its id, then its text and options when the dataset has them.
  function questionCell(tr, id, text, options) {
    var td = cell(tr, "", "question");
    var code = document.createElement("span");
    code.className = "qid";
    code.appendChild(isolated(id));
    td.appendChild(code);
    if (text) {
      var body = document.createElement("div");
      body.className = "qtext";
      body.appendChild(isolated(text));
      td.appendChild(body);
    }
    if (options && options.length) {
      var details = document.createElement("details");
      details.className = "options";
      var summary = document.createElement("summary");
      summary.textContent = plural(options.length, "option");
      details.appendChild(summary);
      var list = document.createElement("ul");
      for (var i = 0; i < options.length; i++) {
        var li = document.createElement("li");
        var key = document.createElement("span");
        key.className = "opt-key";
        key.appendChild(isolated(options[i][0]));
        li.appendChild(key);
        li.appendChild(document.createTextNode(" "));
        li.appendChild(isolated(options[i][1]));
        list.appendChild(li);
      }
      details.appendChild(list);
      td.appendChild(details);
    }
    return td;
  }

  function value(r, col, name) {
    return col[name] === undefined ? null : r[col[name]];
  }

  // Row renderers of the paged tables, by the table's data-kind. Each gets the row (an
  // array), the column index by name, the <tr> to fill and the names of the table's
  // columns (its headers' data-sort); text goes in with textContent.
  var RENDERERS = {
    // The one item table of every system page (site/_items.py's ItemRow), whatever tool
    // wrote the run: a cell per header, drawn by its column's kind.
    items: function (r, col, tr, shown) {
      var outcome = value(r, col, "outcome");
      tr.className = "outcome-" + (outcome === null ? "unknown" : outcome);
      for (var k = 0; k < shown.length; k++) {
        var name = shown[k];
        var v = value(r, col, name);
        if (name === "question") {
          questionCell(tr, v, value(r, col, "question_text"), value(r, col, "options"));
        } else if (name === "response") {
          responseCell(tr, v, value(r, col, "response_length"));
        } else if (name === "outcome") {
          cell(tr, v === null ? MISSING : v, "outcome");
        } else if (name === "expected") {
          cell(tr, v === null ? MISSING : v, "text expected");
        } else if (name === "explanation" || name === "error") {
          foldedCell(tr, v === null ? "" : v, "text");
        } else if (/_secs$/.test(name)) {
          cell(tr, quantity(v), "num");
        } else {
          cell(tr, v === null ? MISSING : String(v));
        }
      }
    },
    flips: function (r, col, tr) {
      tr.className = r[col.candidate] === "correct" ? "gained" : "lost";
      var anchor = value(r, col, "anchor");
      if (anchor) {
        // The item's article side by side (setupFlips shows its page).
        var link = document.createElement("a");
        link.href = "#" + anchor;
        link.appendChild(isolated(r[col.item]));
        cell(tr, "").appendChild(link);
      } else {
        cell(tr, r[col.item]);
      }
      cell(tr, r[col.candidate], "o-" + r[col.candidate]);
      cell(tr, r[col.baseline], "o-" + r[col.baseline]);
    }
  };

  // The JSON column each header of a paged table sorts by (a th's data-sort overrides).
  var SORT_COLUMNS = {
    flips: ["item", "candidate", "baseline"]
  };

  // Columns a paged table can be filtered by, with their labels.
  // A flipped-items table's candidate and baseline columns hold outcomes too.
  var FACETS = [
    ["outcome", "Outcome"],
    ["setup", "Setup"],
    ["system", "System"],
    ["dataset", "Dataset"],
    ["candidate", "Candidate"],
    ["baseline", "Baseline"]
  ];
  var OUTCOME_COLUMNS = { outcome: true, candidate: true, baseline: true };
  var OUTCOME_ORDER = ["correct", "incorrect", "error", "unknown"];

  // ---------------------------------------------------------------- sorting

  // A sort key: missing values (null, "", an em dash) apart, numbers before text.
  function key(raw) {
    if (raw === null || raw === undefined) {
      return { missing: true };
    }
    if (typeof raw === "number") {
      return isFinite(raw) ? { num: raw } : { missing: true };
    }
    var text = String(raw).trim();
    if (text === "" || text === MISSING || text === "null") {
      return { missing: true };
    }
    return { text: text };
  }

  // Orders two keys ascending (dir 1) or descending (dir -1); missing always last.
  function compareKeys(a, b, dir) {
    if (a.missing || b.missing) {
      return (a.missing ? 1 : 0) - (b.missing ? 1 : 0);
    }
    var an = a.num !== undefined, bn = b.num !== undefined;
    if (an && bn) {
      return dir * (a.num - b.num);
    }
    if (an !== bn) {
      return dir * (an ? -1 : 1);
    }
    return dir * COLLATOR.compare(a.text, b.text);
  }

  // Sorts items (each {key, index}) by key in dir; ties keep their index order (stable).
  function sortItems(items, dir) {
    items.sort(function (a, b) {
      return compareKeys(a.key, b.key, dir) || a.index - b.index;
    });
    return items;
  }

  // The sort key of a static table's cell: its data-value (the raw number) when it has
  // one, else the first number of a numeric cell's text, else its text.
  function cellKey(td) {
    if (!td) {
      return { missing: true };
    }
    if (td.hasAttribute("data-value")) {
      var raw = td.getAttribute("data-value");
      if (/^\s*-?(\d|\.\d)/.test(raw) && isFinite(Number(raw))) {
        return { num: Number(raw) };
      }
      return key(raw === "null" ? null : raw);
    }
    var text = td.textContent.trim();
    if (td.classList.contains("num")) {
      var found = /-?\d[\d,]*(\.\d+)?(e[-+]?\d+)?/i.exec(text);
      return found ? { num: Number(found[0].replace(/,/g, "")) } : { missing: true };
    }
    return key(text);
  }

  // Puts a <button> in each header cell of table (the keyboard reaches it; aria-sort on
  // the th says the order); onSort(column index, 1 or -1) reorders the rows.
  function sortable(table, onSort) {
    var head = table.tHead;
    if (!head || !head.rows.length) {
      return;
    }
    var cells = head.rows[head.rows.length - 1].cells;
    var state = { index: -1, dir: 1 };
    function click(index) {
      var dir = state.index === index && state.dir === 1 ? -1 : 1;
      state.index = index;
      state.dir = dir;
      for (var k = 0; k < cells.length; k++) {
        if (k === index) {
          cells[k].setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        } else {
          cells[k].removeAttribute("aria-sort");
        }
      }
      onSort(index, dir);
    }
    for (var i = 0; i < cells.length; i++) {
      var th = cells[i];
      if (th.getAttribute("data-sort") === "none" || th.querySelector("button")) {
        continue;
      }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) {
        button.appendChild(th.firstChild);
      }
      var mark = document.createElement("span");
      mark.className = "sort-mark";
      mark.setAttribute("aria-hidden", "true");
      button.appendChild(mark);
      th.appendChild(button);
      button.addEventListener("click", click.bind(null, i));
    }
    table.classList.add("sortable");
  }

  // Right-aligns the header of each column whose cells are all numbers (td.num).
  function numericHeaders(table, body) {
    var head = table.tHead;
    if (!head || !head.rows.length) {
      return;
    }
    var cells = head.rows[head.rows.length - 1].cells;
    for (var i = 0; i < cells.length; i++) {
      var numeric = true;
      for (var r = 0; r < body.rows.length && numeric; r++) {
        var td = body.rows[r].cells[i];
        numeric = !td || td.classList.contains("num");
      }
      if (numeric) {
        cells[i].classList.add("num");
      }
    }
  }

  // A table whose rows are all in its HTML: rows sort in place; a total row stays last.
  function setupStatic(table) {
    var body = table.tBodies[0];
    if (!body) {
      return;
    }
    numericHeaders(table, body);
    var rows = 0;
    for (var r = 0; r < body.rows.length; r++) {
      rows += body.rows[r].classList.contains("total") ? 0 : 1;
    }
    if (rows < SORT_MIN_ROWS) {
      return;
    }
    sortable(table, function (index, dir) {
      var items = [], totals = [];
      for (var i = 0; i < body.rows.length; i++) {
        var tr = body.rows[i];
        if (tr.classList.contains("total")) {
          totals.push(tr);
        } else {
          items.push({ tr: tr, index: i, key: cellKey(tr.cells[index]) });
        }
      }
      sortItems(items, dir);
      var fragment = document.createDocumentFragment();
      for (var j = 0; j < items.length; j++) {
        fragment.appendChild(items[j].tr);
      }
      for (var t = 0; t < totals.length; t++) {
        fragment.appendChild(totals[t]);
      }
      body.appendChild(fragment);
    });
  }

  // ---------------------------------------------------------------- search

  var WORD = "[\\p{L}\\p{N}_]";

  // The query's terms: "quoted phrases" and single words, lower-cased; each must occur
  // as whole words (so "correct" does not find "incorrect").
  function parseQuery(query) {
    var terms = [];
    var pattern = /"([^"]*)"|(\S+)/g;
    var found;
    while ((found = pattern.exec(query)) !== null) {
      var term = (found[1] !== undefined ? found[1] : found[2]).trim().toLowerCase();
      if (term) {
        var escaped = term.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&").replace(/\s+/g, "\\s+");
        // A word boundary only where the term starts or ends with a word character.
        var left = /^[\p{L}\p{N}_]/u.test(term) ? "(?<!" + WORD + ")" : "";
        var right = /[\p{L}\p{N}_]$/u.test(term) ? "(?!" + WORD + ")" : "";
        terms.push(new RegExp(left + escaped + right, "u"));
      }
    }
    return terms;
  }

  // Columns a search also looks in when their cell shows them: the question cell shows
  // the question's text and options.
  var SHOWN_WITH = { question: ["question_text", "options"] };

  // The lower-cased text of a row (strings, and lists of strings such as options): of the
  // columns the table shows, when it names them (an item table's JSON holds more).
  function rowText(row, col, shown) {
    if (shown && shown.length && shown[0]) {
      var picked = [];
      for (var s = 0; s < shown.length; s++) {
        var names = [shown[s]].concat(SHOWN_WITH[shown[s]] || []);
        for (var n = 0; n < names.length; n++) {
          if (col[names[n]] !== undefined) {
            picked.push(row[col[names[n]]]);
          }
        }
      }
      row = picked;
    }
    var parts = [];
    function add(v) {
      if (typeof v === "string") {
        parts.push(v);
      } else if (Array.isArray(v)) {
        for (var k = 0; k < v.length; k++) {
          add(v[k]);
        }
      }
    }
    for (var k = 0; k < row.length; k++) {
      add(row[k]);
    }
    return parts.join("\n").toLowerCase();
  }

  // ---------------------------------------------------------------- paged tables

  // A table whose rows come from an inline JSON {columns, rows} document, shown a page at
  // a time, sorted by a header, filtered by facet selects and a whole-word search.
  // Markup: <div class="paged" data-source="<id of the JSON script>"> holding a
  // <table data-kind data-page-size> and the controls (.paged-search, .paged-prev,
  // .paged-next, .paged-count, .paged-total, .paged-page, .paged-facets).
  function setupPaged(container) {
    var data = document.getElementById(container.getAttribute("data-source"));
    var table = container.querySelector("table");
    var kind = table ? table.getAttribute("data-kind") : null;
    var renderRow = kind ? RENDERERS[kind] : null;
    if (!data || !table || !renderRow) {
      return;
    }
    var source = readJSON(data);
    var headers = table.tHead ? table.tHead.rows[table.tHead.rows.length - 1].cells : [];
    var shown = [];
    for (var h = 0; h < headers.length; h++) {
      shown.push(headers[h].getAttribute("data-sort") || (SORT_COLUMNS[kind] || [])[h]);
    }
    var col = {};
    for (var c = 0; c < source.columns.length; c++) {
      col[source.columns[c]] = c;
    }
    // Each row with its place in the document (the stable order) and its search text.
    var items = source.rows.map(function (row, index) {
      return { row: row, index: index, text: null, key: null };
    });
    var pageSize = parseInt(table.getAttribute("data-page-size"), 10) || 50;
    var body = table.tBodies[0];
    var search = container.querySelector(".paged-search");
    var prev = container.querySelector(".paged-prev");
    var next = container.querySelector(".paged-next");
    var count = container.querySelector(".paged-count");
    var total = container.querySelector(".paged-total");
    var noun = container.querySelector(".paged-noun");
    var pageLabel = container.querySelector(".paged-page");
    var prefix = search.id.replace(/-search$/, "");
    var facets = makeFacets(container, items, col, prefix);
    var ordered = items;
    var matches = items;
    var page = 0;

    function render() {
      var pages = Math.max(1, Math.ceil(matches.length / pageSize));
      page = Math.min(Math.max(page, 0), pages - 1);
      var start = page * pageSize;
      var end = Math.min(matches.length, start + pageSize);
      var fragment = document.createDocumentFragment();
      for (var i = start; i < end; i++) {
        var tr = document.createElement("tr");
        renderRow(matches[i].row, col, tr, shown);
        fragment.appendChild(tr);
      }
      while (body.firstChild) {
        body.removeChild(body.firstChild);
      }
      body.appendChild(fragment);
      count.textContent = grouped(matches.length);
      if (total) {
        total.textContent = grouped(items.length);
      }
      if (noun) {
        noun.textContent = items.length === 1 ? "item" : "items";
      }
      pageLabel.textContent = "page " + (page + 1) + " of " + pages;
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }

    function searched(terms, item) {
      if (!terms.length) {
        return true;
      }
      if (item.text === null) {
        item.text = rowText(item.row, col, shown);
      }
      for (var t = 0; t < terms.length; t++) {
        if (!terms[t].test(item.text)) {
          return false;
        }
      }
      return true;
    }

    function filter() {
      var terms = parseQuery(search.value);
      var chosen = facets.map(function (f) {
        return f.select.value;
      });
      // Facet counts: the rows the search and the other facets let through.
      var counts = facets.map(function () {
        return {};
      });
      var totals = facets.map(function () {
        return 0;
      });
      matches = [];
      for (var i = 0; i < ordered.length; i++) {
        var item = ordered[i];
        if (!searched(terms, item)) {
          continue;
        }
        var failed = -1, failures = 0;
        for (var f = 0; f < facets.length; f++) {
          if (chosen[f] !== "" && String(item.row[facets[f].column]) !== chosen[f]) {
            failed = f;
            failures += 1;
          }
        }
        for (var g = 0; g < facets.length; g++) {
          if (failures === 0 || (failures === 1 && failed === g)) {
            var v = String(item.row[facets[g].column]);
            counts[g][v] = (counts[g][v] || 0) + 1;
            totals[g] += 1;
          }
        }
        if (failures === 0) {
          matches.push(item);
        }
      }
      for (var h = 0; h < facets.length; h++) {
        facets[h].show(counts[h], totals[h]);
      }
      page = 0;
      render();
    }

    var sortColumns = SORT_COLUMNS[kind] || [];
    if (source.rows.length >= SORT_MIN_ROWS) {
      sortable(table, function (index, dir) {
        var th = table.tHead.rows[table.tHead.rows.length - 1].cells[index];
        var name = th.getAttribute("data-sort") || sortColumns[index];
        var at = col[name];
        ordered = items.slice();
        for (var i = 0; i < ordered.length; i++) {
          ordered[i].key = at === undefined ? { missing: true } : key(ordered[i].row[at]);
        }
        sortItems(ordered, dir);
        filter();
      });
    }

    search.addEventListener("input", filter);
    for (var f = 0; f < facets.length; f++) {
      facets[f].select.addEventListener("change", filter);
    }
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

  // A <select> for each facet column the table's rows hold (outcome always, the others
  // when they take two values or more), put in the container's .paged-facets.
  function makeFacets(container, items, col, prefix) {
    var place = container.querySelector(".paged-facets");
    var facets = [];
    if (!place) {
      return facets;
    }
    FACETS.forEach(function (facet) {
      var column = col[facet[0]];
      if (column === undefined) {
        return;
      }
      var values = [];
      var seen = {};
      for (var i = 0; i < items.length; i++) {
        var v = String(items[i].row[column]);
        if (!seen[v]) {
          seen[v] = true;
          values.push(v);
        }
      }
      if (values.length < (facet[0] === "outcome" ? 1 : 2)) {
        return;
      }
      if (OUTCOME_COLUMNS[facet[0]]) {
        values.sort(function (a, b) {
          var i = OUTCOME_ORDER.indexOf(a), j = OUTCOME_ORDER.indexOf(b);
          return (i < 0 ? 99 : i) - (j < 0 ? 99 : j) || COLLATOR.compare(a, b);
        });
      } else {
        values.sort(COLLATOR.compare);
      }
      var id = prefix + "-" + facet[0];
      var label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = facet[1];
      var select = document.createElement("select");
      select.id = id;
      select.className = "paged-facet";
      select.setAttribute("data-facet", facet[0]);
      var all = document.createElement("option");
      all.value = "";
      select.appendChild(all);
      var options = values.map(function (v) {
        var option = document.createElement("option");
        option.value = v;
        option.setAttribute("data-value", v);
        select.appendChild(option);
        return option;
      });
      var wrap = document.createElement("span");
      wrap.className = "facet";
      wrap.appendChild(label);
      wrap.appendChild(select);
      place.appendChild(wrap);
      facets.push({
        column: column,
        select: select,
        show: function (counts, sum) {
          all.textContent = "all (" + sum + ")";
          for (var k = 0; k < options.length; k++) {
            var n = counts[values[k]] || 0;
            options[k].textContent = isolatedText(values[k]) + " (" + n + ")";
            options[k].setAttribute("data-count", String(n));
          }
          all.setAttribute("data-count", String(sum));
        }
      });
    });
    return facets;
  }

  // Every data table in a box of its own that scrolls sideways (the page never does).
  function wrapTables() {
    var tables = document.querySelectorAll("table.data");
    for (var i = 0; i < tables.length; i++) {
      var table = tables[i];
      var parent = table.parentNode;
      if (parent && parent.classList && parent.classList.contains("table-scroll")) {
        continue;
      }
      var box = document.createElement("div");
      box.className = "table-scroll";
      parent.insertBefore(box, table);
      box.appendChild(table);
    }
    var boxes = document.querySelectorAll(".table-scroll");
    for (var b = 0; b < boxes.length; b++) {
      scrollHint(boxes[b]);
    }
    function update() {
      for (var k = 0; k < boxes.length; k++) {
        boxes[k].kagreportHint();
      }
    }
    window.addEventListener("resize", update);
    // "Show every column" and an opened <details> change a table's width.
    document.addEventListener("change", update);
    document.addEventListener("toggle", update, true);
  }

  // A box wider inside than on the screen says so: a line above it ("scroll sideways for
  // more columns") and its cut edges fading out, so a column cut mid-word reads as more
  // to see, not as a broken page. Both follow the box's width and scroll position.
  function scrollHint(box) {
    var hint = document.createElement("p");
    hint.className = "scroll-hint";
    hint.textContent = "Scroll sideways for more columns \u2192";
    hint.hidden = true;
    box.parentNode.insertBefore(hint, box);
    function mark() {
      var hidden = box.scrollWidth - box.clientWidth;
      var scrolls = box.clientWidth > 0 && hidden > 1;
      hint.hidden = !scrolls;
      box.classList.toggle("more-right", scrolls && box.scrollLeft < hidden - 1);
      box.classList.toggle("more-left", scrolls && box.scrollLeft > 1);
    }
    box.kagreportHint = mark;
    box.addEventListener("scroll", mark, { passive: true });
    mark();
  }

  // ---------------------------------------------------------------- flipped items

  // A comparison's flipped items side by side, a page at a time: the page holds them all
  // (the first ones shown, the others in a <details> fold, for a reader without scripts);
  // here they are paged, filtered by outcome (the candidate gained or lost the item), and
  // a link to one of them (#flip-<n>) turns to its page.
  function setupFlips(section) {
    var pager = section.querySelector(".flip-pager");
    var list = section.querySelector(".flip-list");
    if (!pager || !list) {
      return;
    }
    var articles = Array.prototype.slice.call(list.querySelectorAll("article.flip"));
    var fold = list.querySelector("details.more-flips");
    for (var i = 0; i < articles.length; i++) {
      list.appendChild(articles[i]);
    }
    if (fold) {
      fold.parentNode.removeChild(fold);
    }
    var pageSize = parseInt(pager.getAttribute("data-page-size"), 10) || 20;
    var select = pager.querySelector(".flip-outcome");
    var prev = pager.querySelector(".flip-prev");
    var next = pager.querySelector(".flip-next");
    var label = pager.querySelector(".flip-page");
    var status = pager.querySelector(".flip-status");
    // Markup that only looks like the pager (a notebook output may carry its id and
    // classes, not its controls) is left alone.
    if (!select || !prev || !next || !label || !status) {
      return;
    }
    var page = 0;
    var matches = articles;

    function render() {
      var pages = Math.max(1, Math.ceil(matches.length / pageSize));
      page = Math.min(Math.max(page, 0), pages - 1);
      var shown = {};
      for (var k = page * pageSize; k < Math.min(matches.length, (page + 1) * pageSize); k++) {
        shown[matches[k].id] = true;
      }
      for (var j = 0; j < articles.length; j++) {
        articles[j].hidden = !shown[articles[j].id];
      }
      label.textContent = "page " + (page + 1) + " of " + pages;
      status.textContent = grouped(matches.length) + " of " + plural(articles.length, "item");
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }

    function filter() {
      var chosen = select.value;
      matches = articles.filter(function (a) {
        return chosen === "" || a.classList.contains(chosen);
      });
      page = 0;
      render();
    }

    // Shows the article the address names (#flip-<n>), on its page, and scrolls to it.
    function follow() {
      var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
      var at = articles.indexOf(target);
      if (at < 0) {
        return;
      }
      if (matches.indexOf(target) < 0) {
        select.value = "";
        filter();
      }
      page = Math.floor(matches.indexOf(target) / pageSize);
      render();
      target.scrollIntoView();
    }

    select.addEventListener("change", filter);
    prev.addEventListener("click", function () {
      page -= 1;
      render();
    });
    next.addEventListener("click", function () {
      page += 1;
      render();
      pager.scrollIntoView();
    });
    window.addEventListener("hashchange", follow);
    pager.hidden = false;
    filter();
    follow();
  }

  function start() {
    wrapTables();
    var flips = document.querySelectorAll("#side-by-side");
    for (var f = 0; f < flips.length; f++) {
      setupFlips(flips[f]);
    }
    var paged = document.querySelectorAll("div.paged");
    for (var i = 0; i < paged.length; i++) {
      setupPaged(paged[i]);
    }
    var tables = document.querySelectorAll("table.data");
    for (var j = 0; j < tables.length; j++) {
      if (!tables[j].closest("div.paged")) {
        setupStatic(tables[j]);
      }
    }
    // Tests and scripts wait for this mark: every table and control is in place.
    document.documentElement.setAttribute("data-site-ready", "");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
