"""The plugin contract (:mod:`safeclf.plugins.contract`: what a method or dataset plugin
provides) and the registry that finds plugins through entry points
(:mod:`safeclf.plugins.registry`)."""

from safeclf.plugins.contract import DatasetPlugin, MethodPlugin, Report

__all__ = ["DatasetPlugin", "MethodPlugin", "Report"]
