from django.apps import AppConfig


class SsdgExplainerConfig(AppConfig):
    """SSDGExplainer (ProxyExplainer + structure/semantic guidance); experiments in ``experiments.py``."""

    name = "apps.ssdg_explainer"
    label = "ssdg_explainer"
    verbose_name = "SSDGExplainer: dual-guided GNN explanations with in-distribution proxy graphs"
