"""The one look of safeclf's figures: every plot of a run is drawn inside :func:`context`.

Colours are the Okabe–Ito palette (distinguishable with the common colour-vision
deficiencies), in the order matplotlib's ``C0`` … ``C7`` names them, so a series coloured
``C2`` in one figure is the same colour in every other. Light grid, no top and right spines,
one font size for ticks and legends.
"""

from __future__ import annotations

import contextlib

#: Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish green, orange, sky
#: blue, reddish purple, yellow, black; then two greys so that C8 and C9 exist.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#F0E442",
           "#000000", "#7F7F7F", "#BBBBBB")

#: matplotlib rcParams of every safeclf figure.
STYLE = {
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titlelocation": "left",
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "errorbar.capsize": 3,
    "font.size": 9,
    "savefig.facecolor": "white",
}


def context():
    """A context in which matplotlib draws with :data:`STYLE` and :data:`PALETTE`."""
    import matplotlib

    matplotlib.use("Agg")
    from cycler import cycler

    return matplotlib.rc_context({**STYLE, "axes.prop_cycle": cycler(color=list(PALETTE))})


@contextlib.contextmanager
def figures():
    """:func:`context`, closing every figure left open on the way out."""
    import matplotlib.pyplot as plt

    with context():
        try:
            yield
        finally:
            plt.close("all")
