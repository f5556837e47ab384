// Web push on a seat's settings page (games/web/play/push.py, games/notify/push.py): the
// buttons appear where the browser can take push; a click asks for permission, subscribes
// with the service's public key, and tells the service, which reloads the page with the
// browser listed. The page marks the line of this browser (its endpoint hashed as the
// service names it).
(function () {
  "use strict";
  var section = document.getElementById("push");
  if (!section) return;
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    return;
  }
  var state = document.getElementById("push-state");
  var controls = document.getElementById("push-controls");
  var offButton = section.querySelector("[data-push-off]");
  var registration = null;

  function say(text) {
    state.textContent = text;
  }

  function key(base64) {
    var padded = (base64 + "===".slice((base64.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  function csrf() {
    var field = document.querySelector("[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function post(url, data) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(data),
    }).then(function (answer) {
      return answer.json().then(function (said) {
        if (!answer.ok) throw new Error(said.error || answer.statusText);
        return said;
      });
    });
  }

  function hashed(endpoint) {
    if (!window.crypto || !crypto.subtle) return Promise.resolve("");
    return crypto.subtle.digest("SHA-256", new TextEncoder().encode(endpoint)).then(function (digest) {
      return Array.prototype.map
        .call(new Uint8Array(digest), function (b) {
          return ("0" + b.toString(16)).slice(-2);
        })
        .join("")
        .slice(0, 16);
    });
  }

  function markThisBrowser(subscription) {
    if (!subscription) return;
    hashed(subscription.endpoint).then(function (hash) {
      var lines = section.querySelectorAll("[data-browser='" + hash + "']");
      for (var i = 0; i < lines.length; i++) {
        var which = lines[i].querySelector(".which");
        which.textContent = which.dataset.this;
        // What this browser has on already needs no button.
        section.querySelector("[data-push-on=every]").hidden ||= lines[i].dataset.every === "1";
        section.querySelector("[data-push-on=seat]").hidden = true;
      }
      offButton.hidden = lines.length === 0;
    });
  }

  function turnOn(everySeat) {
    say(section.dataset.asking || "…");
    Notification.requestPermission()
      .then(function (permission) {
        if (permission !== "granted") throw new Error(section.dataset.blocked);
        return registration.pushManager.getSubscription();
      })
      .then(function (existing) {
        return (
          existing ||
          registration.pushManager.subscribe({
            userVisibleOnly: true,
            applicationServerKey: key(section.dataset.key),
          })
        );
      })
      .then(function (subscription) {
        return post(section.dataset.on, { subscription: subscription.toJSON(), every_seat: everySeat });
      })
      .then(function () {
        window.location.reload();
      })
      .catch(function (error) {
        say(error.message || String(error));
      });
  }

  function turnOff() {
    registration.pushManager
      .getSubscription()
      .then(function (subscription) {
        if (!subscription) return null;
        return post(section.dataset.off, { endpoint: subscription.endpoint, every_seat: true });
      })
      .then(function () {
        window.location.reload();
      })
      .catch(function (error) {
        say(error.message || String(error));
      });
  }

  navigator.serviceWorker
    .register(section.dataset.worker || "/sw.js", { scope: "/" })
    .then(function (ready) {
      registration = ready;
      controls.hidden = false;
      document.getElementById("push-unsupported").hidden = true;
      section.querySelector("[data-push-on=seat]").addEventListener("click", function () {
        turnOn(false);
      });
      section.querySelector("[data-push-on=every]").addEventListener("click", function () {
        turnOn(true);
      });
      offButton.addEventListener("click", turnOff);
      return registration.pushManager.getSubscription();
    })
    .then(markThisBrowser)
    .catch(function (error) {
      say(error.message || String(error));
    });
})();
