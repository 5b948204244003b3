"""Pure compute packages: numpy/torch only, never Django, Celery, Channels or Plotly."""
