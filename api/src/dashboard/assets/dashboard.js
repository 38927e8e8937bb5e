// The dashboard's only script (served by us; the CSP allows nothing else). Everything works
// without it; it adds copy buttons, confirmations and the transactions list's refresh.
"use strict";
(function () {
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("button[data-copy]");
    if (!btn) return;
    var el = document.querySelector(btn.getAttribute("data-copy"));
    if (!el) return;
    var text = el.textContent.trim();
    var done = function () {
      var before = btn.textContent;
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = before; }, 1500);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, function () {});
  });

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) ev.preventDefault();
  });

  // The first page of transactions refreshes its rows every 5 s (only while the tab is visible).
  var body = document.querySelector("tbody[data-refresh]");
  if (body) {
    var url = body.getAttribute("data-refresh");
    setInterval(function () {
      if (document.hidden) return;
      fetch(url, { credentials: "same-origin", headers: { accept: "text/html" } })
        .then(function (r) { return r.ok && r.redirected === false ? r.text() : null; })
        .then(function (html) { if (html !== null && html.trim() && html !== body.innerHTML) body.innerHTML = html; })
        .catch(function () {});
    }, 5000);
  }
})();
