"""SSDGExplainer: structure–semantic dual-guided GNN explanations with in-distribution proxy graphs.

ProxyExplainer (Chen et al., ICML 2024) re-implemented in dense PyTorch, plus three switchable SSDG modules
(semantic-conditioned generator, topology-boundary network, contrastive semantic constraint) that are design
choices: the SSDG paper's text is not available.
"""
