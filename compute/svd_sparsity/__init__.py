"""svd_sparsity: training-free contextual sparsity for ReGLU FFNs with truncation-aware SVD predictors."""
