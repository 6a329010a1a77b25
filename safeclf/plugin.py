"""Deprecated: the plugin contract moved to :mod:`safeclf.plugins` (``from safeclf.plugins
import MethodPlugin, DatasetPlugin, Report``). This module keeps third-party plugins written
against ``safeclf.plugin`` working for one release, with a :class:`DeprecationWarning`."""

import warnings

from safeclf.plugins.contract import CALIBRATION, PRIVILEGED, DatasetPlugin, MethodPlugin, Report  # noqa: F401

warnings.warn("safeclf.plugin is deprecated and will be removed in the next release; import "
              "MethodPlugin, DatasetPlugin and Report from safeclf.plugins", DeprecationWarning,
              stacklevel=2)
