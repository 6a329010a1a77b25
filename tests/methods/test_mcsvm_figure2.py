"""Figure 2's plot kind (``tau_hyperplanes``): one panel per number of τ values, however many
seeds the run has (a full run of configs/mcsvm_safety.yaml has 3: twelve panels, unreadable)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from safeclf.methods.mcsvm.plots import tau_hyperplanes  # noqa: E402


def _details(slope: float, angle: float) -> dict:
    return {"source_hyperplanes": {"0.05": {"w": [slope, 1.0], "b": 0.0},
                                   "0.95": {"w": [-slope, 1.0], "b": 1.0}},
            "w_angles_deg": {"0.05-0.95": angle}}


def test_one_panel_per_number_of_taus_from_the_lowest_seed():
    rows, details = [], {}
    for n_tau in (10, 1, 5):
        for seed in (2, 0, 1):
            job = f"j{n_tau}-{seed}"
            rows.append({"job": job, "n_tau": n_tau, "seed": seed})
            details[job] = _details(1.0 + seed, 10.0 * n_tau + seed)
    fig = plt.figure()
    tau_hyperplanes(pd.DataFrame(rows), details, fig)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["#T = 1: angle 10.0°", "#T = 5: angle 50.0°", "#T = 10: angle 100.0°"]
    plt.close(fig)
