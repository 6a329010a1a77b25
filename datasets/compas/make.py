"""Write ``compas.csv`` from ProPublica's ``compas-scores-two-years.csv`` (see README.md).

    python datasets/compas/make.py PATH/TO/compas-scores-two-years.csv

The rows ProPublica's analysis keeps (charge within 30 days of the screening, a known
recidivism outcome, no ordinary traffic offence, a COMPAS score), and the columns below; race
in three groups: African-American, Caucasian, and every other value as Other.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

COLUMNS = ["sex", "age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count",
           "c_charge_degree", "race", "two_year_recid"]


def main(source: str) -> None:
    df = pd.read_csv(source)
    keep = (df.days_b_screening_arrest.between(-30, 30) & (df.is_recid != -1)
            & (df.c_charge_degree != "O") & (df.score_text != "N/A"))
    out = df.loc[keep, COLUMNS].copy()
    out["race"] = out.race.where(out.race.isin(["African-American", "Caucasian"]), "Other")
    out.to_csv(Path(__file__).with_name("compas.csv"), index=False)


if __name__ == "__main__":
    main(sys.argv[1])
