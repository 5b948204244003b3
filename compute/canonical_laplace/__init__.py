"""γ-canonicalized empirical-Bayes Laplace for ReLU networks (paper slug ``canonical_laplace``).

Modules: ``model`` (flat-parameter ReLU MLPs, MAP training, the positive-rescaling orbit),
``curvature`` (Jacobians, GGN/Hessian factors), ``evidence`` (Laplace evidence, λ selection, GLM
predictive), ``canonical`` (orbit-invariant canonicalizers D(θ)), ``data`` (data sets generated in
code), ``run`` (the experiment entry points).  float64 throughout.
"""
