"""Method plugins: one package per family, each exposing a MethodPlugin object."""
