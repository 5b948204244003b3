"""The application under test: generic service processes speaking HTTP/1.1 on 127.0.0.1."""
