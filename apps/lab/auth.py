"""Login with a per-address rate limit (the HTML form; the API token endpoint uses DRF throttling)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


class ThrottledLoginView(auth_views.LoginView):
    """At most PAPERLAB['LOGIN_ATTEMPTS_PER_MINUTE'] POSTs per client address per minute; then 429."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:  # type: ignore[no-untyped-def]
        limit = settings.PAPERLAB.get("LOGIN_ATTEMPTS_PER_MINUTE", 20)
        key = f"login-attempts:{request.META.get('REMOTE_ADDR', '?')}"
        cache.add(key, 0, timeout=60)
        try:
            attempts = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=60)
            attempts = 1
        if attempts > limit:
            return HttpResponse("Too many login attempts; wait a minute.", status=429, content_type="text/plain")
        return super().post(request, *args, **kwargs)
