"""safeclf: an experiment runner for classifiers that come with a promise."""

__version__ = "0.1.0"
