"""Tests run single-threaded, like the lab runner (oversubscribed threads spin on a loaded machine)."""

import torch

torch.set_num_threads(1)
