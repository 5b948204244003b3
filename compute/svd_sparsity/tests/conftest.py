"""One torch thread: on a shared 2-core box, oversubscribed threads make tiny ops far slower."""

import torch

torch.set_num_threads(1)
