from django.urls import path

from . import views

app_name = "lab"
urlpatterns = [
    path("", views.home, name="home"),
    path("papers/<slug:slug>/", views.paper_detail, name="paper"),
    path("papers/<slug:slug>/<slug:exp_slug>/run/", views.run_create, name="run_create"),
    path("runs/", views.run_list, name="runs"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/rerun/", views.run_rerun, name="run_rerun"),
    path("runs/<int:run_id>/annotate/", views.run_annotate, name="run_annotate"),
    path("papers/<slug:slug>/<slug:exp_slug>/sweep/", views.sweep_create, name="sweep_create"),
    path("sweeps/<int:sweep_id>/", views.sweep_detail, name="sweep"),
    path("workers/", views.workers, name="workers"),
    path("compare/", views.compare, name="compare"),
    path("accounts/signup/", views.signup, name="signup"),
]
