// The console's passkey ceremonies: enrolment, sign-in and sign-off call navigator.credentials and post the
// response as JSON with the page's CSRF token. No inline script anywhere: the CSP allows only this file and htmx.
"use strict";

(function () {
  const csrf = () => document.querySelector('meta[name="csrf-token"]').content;
  const result = (text) => { const el = document.getElementById("result"); if (el) el.textContent = text; };

  const fromB64url = (s) => {
    const b64 = s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4);
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
  };
  const toB64url = (buf) => {
    let s = "";
    new Uint8Array(buf).forEach((b) => { s += String.fromCharCode(b); });
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };

  async function post(url, body, contentType) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf(), "Content-Type": contentType || "application/json" },
      body: body,
    });
    const data = await response.json().catch(() => ({ error: response.statusText }));
    return { ok: response.ok, data: data };
  }

  const descriptors = (list) => (list || []).map((c) => ({ ...c, id: fromB64url(c.id) }));

  function creationOptions(o) {
    return {
      ...o,
      challenge: fromB64url(o.challenge),
      user: { ...o.user, id: fromB64url(o.user.id) },
      excludeCredentials: descriptors(o.excludeCredentials),
    };
  }

  function requestOptions(o) {
    return { ...o, challenge: fromB64url(o.challenge), allowCredentials: descriptors(o.allowCredentials) };
  }

  function assertionJSON(c) {
    return {
      id: c.id,
      rawId: toB64url(c.rawId),
      type: c.type,
      response: {
        authenticatorData: toB64url(c.response.authenticatorData),
        clientDataJSON: toB64url(c.response.clientDataJSON),
        signature: toB64url(c.response.signature),
        userHandle: c.response.userHandle ? toB64url(c.response.userHandle) : null,
      },
      clientExtensionResults: c.getClientExtensionResults(),
    };
  }

  async function enrol(button) {
    const base = "/enrol/" + button.dataset.token;
    const options = await post(base + "/options", "{}");
    if (!options.ok) return result(options.data.error);
    const c = await navigator.credentials.create({ publicKey: creationOptions(options.data) });
    const body = {
      id: c.id,
      rawId: toB64url(c.rawId),
      type: c.type,
      response: {
        attestationObject: toB64url(c.response.attestationObject),
        clientDataJSON: toB64url(c.response.clientDataJSON),
        transports: c.response.getTransports ? c.response.getTransports() : [],
      },
      clientExtensionResults: c.getClientExtensionResults(),
    };
    const done = await post(base + "/verify", JSON.stringify(body));
    result(done.ok ? button.dataset.done : done.data.error);
  }

  async function signin() {
    const options = await post("/signin/options", "{}");
    if (!options.ok) return result(options.data.error);
    const c = await navigator.credentials.get({ publicKey: requestOptions(options.data) });
    const done = await post("/signin/verify", JSON.stringify(assertionJSON(c)));
    if (done.ok) window.location.assign("/now");
    else result(done.data.error);
  }

  async function sign(form) {
    const fields = new URLSearchParams(new FormData(form));
    const options = await post(form.action, fields.toString(), "application/x-www-form-urlencoded");
    if (!options.ok) return result(options.data.error);
    const c = await navigator.credentials.get({ publicKey: requestOptions(options.data.publicKey) });
    const done = await post(form.dataset.verify, JSON.stringify(assertionJSON(c)));
    result(done.data.status + (done.data.reason ? ": " + done.data.reason : ""));
    const status = document.getElementById("status");
    if (done.ok && status) status.textContent = done.data.status;
  }

  const failed = (err) => result(String(err));

  document.addEventListener("DOMContentLoaded", () => {
    const enrolButton = document.getElementById("enrol");
    if (enrolButton) enrolButton.addEventListener("click", () => enrol(enrolButton).catch(failed));
    const signinButton = document.getElementById("signin");
    if (signinButton) signinButton.addEventListener("click", () => signin().catch(failed));
    const signForm = document.getElementById("sign");
    if (signForm) {
      signForm.addEventListener("submit", (event) => {
        event.preventDefault();
        sign(signForm).catch(failed);
      });
    }
  });
})();
