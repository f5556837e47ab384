// Pages that move by themselves (games/templatetags/live.py, docs/players.md): a poll
// brings the page again and htmx swaps in the parts it names. A part the reader is busy
// in (the focused field is in it, or a form in it was changed) is left alone, and so is
// the poll's token: the next poll brings the news again, until the part is free. Folds
// (<details>) keep the state the reader left them in.
(function () {
  "use strict";
  var skipped = false;

  function changed(form) {
    for (var i = 0; i < form.elements.length; i++) {
      var field = form.elements[i];
      if (field.type === "checkbox" || field.type === "radio") {
        if (field.checked !== field.defaultChecked) return true;
      } else if (field.tagName === "SELECT") {
        for (var j = 0; j < field.options.length; j++) {
          if (field.options[j].selected !== field.options[j].defaultSelected) return true;
        }
      } else if ("defaultValue" in field && field.type !== "hidden") {
        if (field.value !== field.defaultValue) return true;
      }
    }
    return false;
  }

  function busy(part) {
    var active = document.activeElement;
    if (active && active !== document.body && part.contains(active)) return true;
    var forms = part.querySelectorAll("form");
    for (var i = 0; i < forms.length; i++) {
      if (changed(forms[i])) return true;
    }
    return false;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt.id === "live") skipped = false;
  });

  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var part = event.detail.target;
    if (part.id === "live") {
      if (skipped) event.preventDefault();
      return;
    }
    if (busy(part)) {
      skipped = true;
      event.preventDefault();
      return;
    }
    // A fold the reader opened (or closed) stays so.
    var was = part.querySelectorAll("details");
    var coming = event.detail.fragment.querySelectorAll("details");
    if (was.length === coming.length) {
      for (var i = 0; i < was.length; i++) {
        if (was[i].open) coming[i].setAttribute("open", "");
        else coming[i].removeAttribute("open");
      }
    }
  });

  // The seat's event stream, where the page has one: news there brings the poll at once
  // (the poll every few seconds stays, should the stream be refused or drop). The seat as
  // the page was drawn comes first: that one is no news; on a connection made again, the
  // first may be (something may have moved between), and a poll with nothing new costs
  // one small query.
  function listen() {
    var poll = document.getElementById("live");
    if (!poll || !poll.getAttribute("data-stream") || !window.EventSource) return;
    var source = new EventSource(poll.getAttribute("data-stream"));
    var first = true;
    source.addEventListener("seat", function () {
      if (first) {
        first = false;
        return;
      }
      if (window.htmx) window.htmx.trigger(document.body, "news");
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", listen);
  else listen();

  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail.elt.id !== "live") return;
    var note = document.getElementById("live-note");
    if (note) note.textContent = note.getAttribute("data-news");
  });
})();
