"""One torch thread, as the lab runner uses (tiny models are slower multi-threaded on 2 shared cores)."""

import torch

torch.set_num_threads(1)
