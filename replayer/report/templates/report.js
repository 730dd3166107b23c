// ktrace report: label layout, tooltips, the evidence panel and keyboard use; everything
// is in this file. `ktrace serve` adds a refresh of #report (see refresh below).
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  var panel = document.getElementById("details");
  var opener = null;  // the mark or button whose evidence the panel shows
  var TIER = 12, GAP = 3;

  function showOffset() {
    var offset = -new Date().getTimezoneOffset(), sign = offset >= 0 ? "+" : "-";
    var hours = Math.floor(Math.abs(offset) / 60), minutes = Math.abs(offset) % 60;
    document.querySelectorAll(".local-offset").forEach(function (node) {
      node.textContent = "(times in UTC; this browser's local time is UTC" + sign + hours +
        (minutes ? ":" + minutes : "") + ")";
    });
  }

  // Labels: each at its mark, unless it would overlap one already placed — then on the
  // first free row below the lane (the lane grows). Rerun when the width changes.
  function overlaps(a, b) {
    return a.x < b.x + b.width + GAP && b.x < a.x + a.width + GAP &&
           a.y < b.y + b.height && b.y < a.y + a.height;
  }
  function home(label) {
    if (!label.dataset.y) { label.dataset.y = label.getAttribute("y"); label.dataset.dx = label.getAttribute("dx") || "0"; }
    label.setAttribute("y", label.dataset.y);
    label.setAttribute("dx", label.dataset.dx);
    label.removeAttribute("text-anchor");
    label.classList.remove("tiered");
  }
  // Labels are painted above every mark (a hatch drawn later would hide them): moved into
  // one top layer, each remembering its mark (hover and click still find it).
  var markOfLabel = new WeakMap();
  function raiseLabels(svg) {
    var layer = svg.querySelector(":scope > g.labels");
    if (layer) { return; }
    layer = document.createElementNS(svg.namespaceURI, "g");
    layer.setAttribute("class", "labels");
    svg.querySelectorAll("text.label").forEach(function (label) {
      markOfLabel.set(label, label.parentNode);
      layer.appendChild(label);
    });
    svg.appendChild(layer);
  }
  function layoutLabels(svg) {
    raiseLabels(svg);
    var base = Number(svg.dataset.base), width = svg.getBoundingClientRect().width;
    var labels = Array.prototype.slice.call(svg.querySelectorAll("text.label"));
    labels.forEach(home);
    svg.querySelectorAll("line.leader").forEach(function (l) { l.remove(); });
    svg.setAttribute("height", base);
    if (!width) { return; }  // in a folded group: laid out when it opens
    var boxes = labels.map(function (l) { return l.getBBox(); });
    var order = labels.map(function (l, i) { return i; }).sort(function (a, b) { return boxes[a].x - boxes[b].x; });
    var placed = [], tiers = 0;
    order.forEach(function (i) {
      var label = labels[i], box = boxes[i];
      if (box.x + box.width > width) {  // past the right edge: end at the mark instead
        label.setAttribute("text-anchor", "end");
        label.setAttribute("dx", -Number(label.dataset.dx) || -3);
        box = label.getBBox();
      }
      for (var tier = 1; placed.some(function (p) { return overlaps(box, p); }); tier++) {
        label.setAttribute("y", base + TIER * tier - 2);
        label.classList.add("tiered");
        tiers = Math.max(tiers, tier);
        box = label.getBBox();
      }
      if (tier > 1) { lead(svg, label, box, base); }
      placed.push(box);
    });
    svg.setAttribute("height", base + TIER * tiers + (tiers ? 3 : 0));
  }
  // A moved label hangs from a thin line down from its lane, at the edge nearest its mark.
  function lead(svg, label, box, base) {
    var line = document.createElementNS(svg.namespaceURI, "line");
    var x = label.getAttribute("text-anchor") === "end" ? box.x + box.width : box.x;
    line.setAttribute("class", "leader");
    line.setAttribute("x1", x); line.setAttribute("x2", x);
    line.setAttribute("y1", base); line.setAttribute("y2", box.y);
    label.parentNode.insertBefore(line, label);
    markOfLabel.set(line, markOfLabel.get(label));
  }
  // Axis labels that would touch at this width: every other one is left out.
  function layoutTicks(svg) {
    var last = null;
    svg.querySelectorAll(":scope > text.tick-label").forEach(function (label) {
      label.style.display = "";
      var box = label.getBBox();
      if (last && box.x < last.x + last.width + 8) { label.style.display = "none"; } else { last = box; }
    });
  }
  function layout(root) {
    (root || document).querySelectorAll(".axis-svg, svg.chart").forEach(layoutTicks);
    (root || document).querySelectorAll("svg.lane-svg").forEach(layoutLabels);
  }

  function markOf(node) {
    node = (node && markOfLabel.get(node)) || node;
    return node && node.closest ? node.closest("[data-tip],[data-ev]") : null;
  }
  function showTip(mark, x, y) {
    if (!mark || !mark.dataset.tip) { tip.hidden = true; return; }
    tip.textContent = mark.dataset.tip;
    tip.style.left = Math.min(x + 12, window.innerWidth - 490) + "px";
    tip.style.top = (y + 12) + "px";
    tip.hidden = false;
  }

  function show(id, title, from) {
    var evidence = JSON.parse(document.getElementById("evidence-data").textContent);
    var record = evidence[id];
    var table = document.getElementById("details-fields");
    table.textContent = "";
    document.getElementById("details-title").textContent =
      record ? record.kind + " " + (record.namespace ? record.namespace + "/" : "") + record.name : "evidence #" + id;
    var fields = record || {"event_id": id, "note": "not in this report"};
    if (title) { fields = Object.assign({"mark": title}, fields); }
    fields = Object.assign({}, fields, {"more": "ktrace evidence " + (record ? record.id : id) + " (-o json: the whole object)"});
    Object.keys(fields).forEach(function (key) {
      var row = table.insertRow(), value = fields[key];
      row.insertCell().textContent = key;
      row.insertCell().textContent = Array.isArray(value) ? value.join("\n") : String(value);
    });
    select(from);
    panel.dataset.ev = id;
    panel.hidden = false;
    tip.hidden = true;
    // The sheet covers the bottom of the window: the page gains that much room, and the
    // mark it explains is scrolled above it.
    document.body.style.setProperty("--panel-height", panel.offsetHeight + "px");
    document.body.classList.add("panel-open");
    if (from) {
      var box = from.getBoundingClientRect();
      if (box.bottom > window.innerHeight - panel.offsetHeight) {
        window.scrollBy(0, box.bottom - (window.innerHeight - panel.offsetHeight) + 24);
      }
    }
    document.getElementById("details-close").focus({preventScroll: true});
  }
  function select(mark) {
    document.querySelectorAll(".mark.selected").forEach(function (m) { m.classList.remove("selected"); });
    opener = mark || null;
    if (opener) { opener.classList.add("selected"); }
  }
  function close() {
    if (panel.hidden) { return; }
    panel.hidden = true;
    document.body.classList.remove("panel-open");
    var back = opener && document.contains(opener) ? opener : null;
    select(null);
    if (back) { back.focus({preventScroll: true}); }
  }
  function open(mark) {
    if (mark && mark.dataset.ev && mark.dataset.ev !== "None") { show(mark.dataset.ev, mark.dataset.tip, mark); }
  }

  document.addEventListener("mousemove", function (e) { showTip(markOf(e.target), e.clientX, e.clientY); });
  document.addEventListener("focusin", function (e) {
    var mark = markOf(e.target);
    if (mark && mark.classList.contains("mark")) {
      var box = mark.getBoundingClientRect();
      showTip(mark, box.left, box.bottom);
    } else { tip.hidden = true; }
  });
  document.addEventListener("click", function (e) {
    if (e.target.closest("#details")) { return; }
    open(markOf(e.target));
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { close(); return; }
    var mark = markOf(e.target);
    if ((e.key === "Enter" || e.key === " ") && mark && mark.classList.contains("mark")) {
      e.preventDefault();
      open(mark);
    }
  });
  document.getElementById("details-close").addEventListener("click", close);

  // A link to a lane inside a folded group unfolds it; an unfolded group is laid out.
  function reveal() {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { layout(); target.scrollIntoView(); }
  }
  document.addEventListener("toggle", function (e) { if (e.target.open) { layout(e.target); } }, true);
  window.addEventListener("hashchange", reveal);
  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () { layout(); }, 100);
  });

  // `ktrace serve`: poll the small state endpoint; when the database changed, fetch the
  // page's fragment and swap it in, keeping open groups, the scroll position and the panel.
  function live(main) {
    var version = main.dataset.version;
    function stale(yes) {
      var badge = document.getElementById("live");
      if (badge) { badge.classList.toggle("stale", yes); }
    }
    function swap(html) {
      var wasOpen = {};
      main.querySelectorAll("details.group").forEach(function (d) {
        wasOpen[d.dataset.group] = d.open;
      });
      main.innerHTML = html;
      main.querySelectorAll("details.group").forEach(function (d) {
        var was = wasOpen[d.dataset.group];
        if (was !== undefined) { d.open = was; }
      });
      showOffset();
      layout();  // the panel stays open on the record it shows; its mark was redrawn
    }
    function poll() {
      fetch(main.dataset.stateUrl, {cache: "no-store"}).then(function (r) {
        if (!r.ok) { throw new Error(r.statusText); }
        return r.json();
      }).then(function (state) {
        stale(false);
        if (state.version === version) { return null; }
        return fetch(main.dataset.fragmentUrl, {cache: "no-store"}).then(function (r) {
          return r.text().then(function (html) {
            if (r.ok) { version = r.headers.get("X-Ktrace-Version") || state.version; swap(html); } else { stale(true); }
          });
        });
      }).catch(function () { stale(true); })
        .then(function () { setTimeout(poll, Number(main.dataset.pollMs)); });
    }
    setTimeout(poll, Number(main.dataset.pollMs));
  }

  showOffset();
  layout();
  reveal();
  var main = document.getElementById("report");
  if (main && main.dataset.stateUrl) { live(main); }
})();
