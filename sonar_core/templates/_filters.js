// Filters of the test case x model matrix. Reads only Sonar's own numeric ids (data-model,
// data-ev, data-cats) and toggles the hidden attribute: no page text is parsed or written.
(function () {
  "use strict";
  var byId = function (id) { return document.getElementById(id); };
  var evaluator = byId("f-ev"), model = byId("f-model"), category = byId("f-cat"),
      failing = byId("f-failing"), count = byId("f-count");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#matrix tbody tr"));
  var columns = Array.prototype.slice.call(document.querySelectorAll("#matrix [data-model]"));
  var verdicts = Array.prototype.slice.call(document.querySelectorAll("#matrix li[data-ev]"));
  var visible = function (el) { return !el.hidden && !el.closest("[hidden]"); };

  function apply() {
    var e = evaluator.value, m = model.value, c = category.value, onlyFailing = failing.checked, shown = 0;
    columns.forEach(function (cell) { cell.hidden = m !== "" && cell.getAttribute("data-model") !== m; });
    verdicts.forEach(function (li) { li.hidden = e !== "" && li.getAttribute("data-ev") !== e; });
    rows.forEach(function (tr) {
      var keep = c === "" || (" " + tr.getAttribute("data-cats") + " ").indexOf(" " + c + " ") >= 0;
      tr.hidden = false;
      if (keep && (e !== "" || onlyFailing)) {
        var mine = Array.prototype.filter.call(tr.querySelectorAll("li[data-ev]"), visible);
        if (e !== "" && mine.length === 0) keep = false;
        if (onlyFailing && !mine.some(function (li) { return li.classList.contains("fail"); })) keep = false;
      }
      tr.hidden = !keep;
      if (keep) shown += 1;
    });
    count.textContent = shown + " of " + rows.length + " test cases shown";
  }

  [evaluator, model, category, failing].forEach(function (input) { input.addEventListener("change", apply); });
  apply();
})();
