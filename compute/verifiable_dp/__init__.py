"""verifiable_dp: shared-noise verifiable differentially private counting (SN-VBM, SN-VLM) with Pedersen commitments."""
