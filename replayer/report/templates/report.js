// ktrace report: hover tooltips and the evidence panel; everything is in this file.
(function () {
  "use strict";
  var evidence = JSON.parse(document.getElementById("evidence-data").textContent);
  var tip = document.getElementById("tip");
  var panel = document.getElementById("details");
  var offset = -new Date().getTimezoneOffset();
  var sign = offset >= 0 ? "+" : "-";
  var hours = Math.floor(Math.abs(offset) / 60), minutes = Math.abs(offset) % 60;
  document.getElementById("local-offset").textContent =
    "(times in UTC; this browser's local time is UTC" + sign + hours + (minutes ? ":" + minutes : "") + ")";

  function markOf(node) { return node.closest ? node.closest("[data-tip],[data-ev]") : null; }

  document.addEventListener("mousemove", function (e) {
    var mark = markOf(e.target);
    if (!mark || !mark.dataset.tip) { tip.hidden = true; return; }
    tip.textContent = mark.dataset.tip;
    tip.style.left = (e.clientX + 12) + "px";
    tip.style.top = (e.clientY + 12) + "px";
    tip.hidden = false;
  });

  function show(id, title) {
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
    panel.dataset.ev = id;
    panel.hidden = false;
  }

  document.addEventListener("click", function (e) {
    var mark = markOf(e.target);
    if (mark && mark.dataset.ev && mark.dataset.ev !== "None") { show(mark.dataset.ev, mark.dataset.tip); }
  });
  // A link to a lane inside a folded group unfolds it.
  function reveal() {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  document.getElementById("details-close").addEventListener("click", function (e) {
    e.stopPropagation(); panel.hidden = true;
  });
})();
