from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from apps.lab import api
from apps.lab.auth import ThrottledLoginView

router = DefaultRouter()
router.register("papers", api.PaperViewSet, basename="paper")
router.register("experiments", api.ExperimentViewSet, basename="experiment")
router.register("runs", api.RunViewSet, basename="run")
router.register("sweeps", api.SweepViewSet, basename="sweep")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include(router.urls)),
    path("api/token/", api.TokenView.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("", include("apps.lab.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
