"""toptwo_bai: β-EB-TCI best-arm identification (Nguyen & Dam, NeurIPS 2026; Jourdan et al. 2022)."""
