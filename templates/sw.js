{% autoescape off %}// The service worker of the site (games/web/play/push.py): it shows the pushes of
// games/notify/push.py and opens the seat's page when one is clicked. Nothing is cached:
// every page is fetched from the service, as without it.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let news = {};
  try {
    news = event.data ? event.data.json() : {};
  } catch (error) {
    news = { title: event.data.text() };
  }
  const title = news.title || "Moderator";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: news.body || "",
      tag: news.tag || undefined,
      renotify: Boolean(news.tag),
      icon: "{{ icon }}",
      badge: "{{ icon }}",
      data: { url: news.url || "/play/" },
    })
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data.url, self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      for (const client of windows) {
        if (client.url === url && "focus" in client) return client.focus();
      }
      return self.clients.openWindow(url);
    })
  );
});
{% endautoescape %}
