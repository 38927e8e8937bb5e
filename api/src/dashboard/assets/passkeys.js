// Passkeys on the dashboard (docs/team-and-security.md): the browser's WebAuthn ceremony through
// @simplewebauthn/browser (served beside this file as webauthn.js). A button with
// data-passkey="register" or "authenticate" asks its options URL for the ceremony's options,
// runs it, and posts the result in a form of its own (the page's CSRF token with it); the
// server answers with the page to go to. Without a script the passkey buttons do nothing and the
// rest of the page works.
"use strict";
(function () {
  var lib = window.SimpleWebAuthnBrowser;
  function post(url, fields) {
    var body = new URLSearchParams(fields);
    return fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body, credentials: "same-origin" });
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("button[data-passkey]");
    if (!btn || !lib) return;
    ev.preventDefault();
    var kind = btn.getAttribute("data-passkey");
    var csrf = btn.getAttribute("data-csrf");
    var status = document.querySelector(btn.getAttribute("data-status") || "#passkey-status");
    var say = function (text) { if (status) status.textContent = text; };
    var nameField = document.querySelector("#passkey-name");
    btn.disabled = true;
    say("Waiting for your passkey…");
    post(btn.getAttribute("data-options"), { _csrf: csrf })
      .then(function (r) { if (!r.ok) throw new Error("the service refused to start (" + r.status + ")"); return r.json(); })
      .then(function (options) { return kind === "register" ? lib.startRegistration({ optionsJSON: options }) : lib.startAuthentication({ optionsJSON: options }); })
      .then(function (result) {
        var fields = { _csrf: csrf, response: JSON.stringify(result) };
        if (nameField) fields.name = nameField.value;
        var next = btn.getAttribute("data-next");
        if (next) fields.next = next;
        return post(btn.getAttribute("data-finish"), fields);
      })
      .then(function (r) {
        if (r.redirected || r.ok) { window.location.href = r.url; return; }
        say("The passkey was not accepted (" + r.status + "). Try again.");
        btn.disabled = false;
      })
      .catch(function (e) { say("No passkey was used: " + (e && e.message ? e.message : e)); btn.disabled = false; });
  });
})();
