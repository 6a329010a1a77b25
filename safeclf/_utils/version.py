"""The version of safeclf, in one place: the package, model files and run manifests read it."""

__version__ = "0.1.0"
