"""sae_replay: SAE training with replayed activation buffers (TopK/BatchTopK/JumpReLU, replay protocol, scaling law)."""
